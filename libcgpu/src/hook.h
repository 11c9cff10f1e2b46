/* SPDX-License-Identifier: MIT */
/* What libcgpu's parts share. */
#ifndef CGPU_HOOK_H
#define CGPU_HOOK_H

#include "cgpu_cuda.h"
#include "cgpu_nvml.h"

#define CGPU_EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* real_<symbol>: the driver's entry point, or NULL where it lacks it. */
#define HOOK_CU(n, b, v, p) extern __typeof__(n) *real_##n;
#define USE_CU(n) extern __typeof__(n) *real_##n;
#define HOOK_NV(n) extern __typeof__(n) *real_##n;
#define USE_NV(n) extern __typeof__(n) *real_##n;
#include "hooks.def"
#undef HOOK_CU
#undef USE_CU
#undef HOOK_NV
#undef USE_NV

/* Resolve the driver library (and read the configuration) on first use.
 * False when the library cannot be found. */
int cgpu_cuda_ready(void);
int cgpu_nvml_ready(void);

/* The configuration and the ledger, once per process (and fork child). */
void cgpu_setup(void);

/* One line on stderr, the first time only (per flag). */
void cgpu_say_once(int *said, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define NEED_CUDA()                                  \
	do {                                         \
		if (unlikely(!cgpu_cuda_ready()))     \
			return CUDA_ERROR_NOT_INITIALIZED; \
	} while (0)
#define NEED_NVML()                                 \
	do {                                        \
		if (unlikely(!cgpu_nvml_ready()))    \
			return NVML_ERROR_UNINITIALIZED; \
	} while (0)
/* Calls the driver's entry point; one missing from it is not supported. */
#define REAL_CU(n, ...) \
	(real_##n ? real_##n(__VA_ARGS__) : CUDA_ERROR_NOT_SUPPORTED)
#define REAL_NV(n, ...) \
	(real_##n ? real_##n(__VA_ARGS__) : NVML_ERROR_NOT_SUPPORTED)

/* cuGetProcAddress: our function for a handled entry point, else pfn. */
void *cgpu_procaddr_substitute(const char *symbol, void *pfn, int version,
			       cuuint64_t flags);

#endif
