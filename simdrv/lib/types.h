/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Fixed-width types of the stand-in's pure logic. The files under lib/ include nothing
 * but each other, so the same objects build into the module and into the user-space
 * unit test, fuzz target and conformance check.
 */
#ifndef SIMDRV_TYPES_H
#define SIMDRV_TYPES_H

typedef unsigned long long sd_u64;
typedef unsigned int sd_u32;
typedef int sd_s32;
typedef unsigned short sd_u16;
typedef short sd_s16;
typedef unsigned char sd_u8;

#endif
