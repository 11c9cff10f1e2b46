/* SPDX-License-Identifier: MIT */
/*
 * Defines real_NAME, the driver's own entry point, for every name hooks.def
 * lists: included once per program, by real.c in libcgpu and by the test
 * fixtures that stand in for it.
 */
#define HOOK_CU(n, b, v, p) __typeof__(n) *real_##n;
#define USE_CU(n) __typeof__(n) *real_##n;
#define HOOK_NV(n) __typeof__(n) *real_##n;
#define USE_NV(n) __typeof__(n) *real_##n;
#include "hooks.def"
#undef HOOK_CU
#undef USE_CU
#undef HOOK_NV
#undef USE_NV
