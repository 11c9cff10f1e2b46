/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What kmod/nvabi.h takes from the kernel, in user space, so that check.c can compile
 * cgpu_km's copy of the driver's numbers against NVIDIA's headers too.
 */
#ifndef CONFORMANCE_KSHIM_TYPES_H
#define CONFORMANCE_KSHIM_TYPES_H
#include <stddef.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int16_t s16;
typedef int32_t s32;
#define static_assert(e, ...) _Static_assert(e, #e)
#endif
