/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The only place the scheduler's C differs between the kernel and user space
 * (tests, fuzzing, the simulator): integer types and 64-bit division, which
 * 32-bit kernels cannot do with a plain '/'.
 */
#ifndef CGS_TYPES_H
#define CGS_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/math64.h>
#define cgs_div_u64(a, b)	div64_u64((a), (b))
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;
#define cgs_div_u64(a, b)	((u64)(a) / (u64)(b))
#endif

#endif /* CGS_TYPES_H */
