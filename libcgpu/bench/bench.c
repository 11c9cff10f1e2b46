// SPDX-License-Identifier: MIT
/*
 * What libcgpu adds to a driver call, measured side by side in one process:
 * the driver's entry point called directly, and libcgpu's (loaded with
 * RTLD_LOCAL, so both can be reached), alternating in rounds; the best round
 * of each is reported. Figures, not a test.
 *
 *   bench LIBCGPU_SO [CALLS_PER_ROUND]
 *
 * Needs a GPU (simulated or real) and a budget in the environment (or the
 * process in a cgpu container, for the kernel ledger's cost).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cgpu_cuda.h"

#define ROUNDS 15

struct fns {
	__typeof__(cuStreamSynchronize) *sync;
	__typeof__(cuMemAlloc_v2) *alloc;
	__typeof__(cuMemFree_v2) *free;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double time_sync(const struct fns *f, long n)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		f->sync(NULL);
	return (now_ns() - t0) / n;
}

static double time_alloc(const struct fns *f, long n)
{
	CUdeviceptr p;
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		if (f->alloc(&p, 1 << 20) != CUDA_SUCCESS)
			return -1;
		f->free(p);
	}
	return (now_ns() - t0) / n;
}

static int load(void *h, struct fns *f)
{
	f->sync = (__typeof__(f->sync))dlsym(h, "cuStreamSynchronize");
	f->alloc = (__typeof__(f->alloc))dlsym(h, "cuMemAlloc_v2");
	f->free = (__typeof__(f->free))dlsym(h, "cuMemFree_v2");
	return f->sync && f->alloc && f->free ? 0 : -1;
}

static void compare(const char *what, double (*run)(const struct fns *, long),
		    const struct fns *direct, const struct fns *hooked, long n)
{
	double d = 1e30, h = 1e30;

	for (int r = 0; r < ROUNDS; r++) {
		double a = run(direct, n), b = run(hooked, n);

		if (a < 0 || b < 0) {
			printf("%-34s failed (budget too small?)\n", what);
			return;
		}
		d = a < d ? a : d;
		h = b < h ? b : h;
	}
	printf("%-34s direct %9.1f ns  hooked %9.1f ns  added %+8.1f ns  ratio %.3f\n",
	       what, d, h, h - d, h / d);
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 200000;
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	void *hook = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	struct fns direct, hooked;
	__typeof__(cuInit) *init;
	__typeof__(cuDevicePrimaryCtxRetain) *retain;
	__typeof__(cuCtxSetCurrent) *set;
	CUcontext ctx;

	if (!cuda || !hook || load(cuda, &direct) || load(hook, &hooked)) {
		fprintf(stderr, "bench: %s\n", dlerror());
		return 2;
	}
	init = (__typeof__(init))dlsym(cuda, "cuInit");
	retain = (__typeof__(retain))dlsym(cuda, "cuDevicePrimaryCtxRetain");
	set = (__typeof__(set))dlsym(cuda, "cuCtxSetCurrent");
	if (!init || !retain || !set || init(0) || retain(&ctx, 0) || set(ctx))
		return 2;
	compare("pass-through (cuStreamSynchronize)", time_sync, &direct,
		&hooked, n);
	compare("cuMemAlloc_v2 + cuMemFree_v2 1 MiB", time_alloc, &direct,
		&hooked, n / 10);
	return 0;
}
