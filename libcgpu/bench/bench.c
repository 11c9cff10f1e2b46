// SPDX-License-Identifier: MIT
/*
 * What libcgpu adds to a driver call, measured side by side in one process:
 * the driver's entry point called directly, and libcgpu's (loaded with
 * RTLD_LOCAL, so both can be reached), alternating in short blocks; medians
 * are reported. Figures, not a test.
 *
 *   bench LIBCGPU_SO [CALLS_PER_BLOCK]
 *
 * Needs a GPU (simulated or real) and a budget in the environment (or the
 * process in a cgpu container, for the kernel ledger's cost). On the
 * simulated GPU it also times a kernel launch (a 0 ns kernel): in a cgpu
 * container that is the compute gate's fast path with the slice held (the
 * first launch waits for it; a lone busy container keeps it), elsewhere the
 * hook's pass-through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "blocks.h"
#include "cgpu_cuda.h"

struct fns {
	__typeof__(cuLaunchKernel) *launch;
	__typeof__(cuStreamSynchronize) *sync;
	__typeof__(cuMemAlloc_v2) *alloc;
	__typeof__(cuMemFree_v2) *free;
};

static double time_sync(const void *arg, long n)
{
	const struct fns *f = arg;
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		f->sync(NULL);
	return (now_ns() - t0) / n;
}

static CUfunction sleep_ns;

static double time_launch(const void *arg, long n)
{
	const struct fns *f = arg;
	unsigned long long zero = 0;
	void *params[] = { &zero };
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		if (f->launch(sleep_ns, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL))
			return -1;
	return (now_ns() - t0) / n;
}

static double time_alloc(const void *arg, long n)
{
	const struct fns *f = arg;
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
	f->launch = (__typeof__(f->launch))dlsym(h, "cuLaunchKernel");
	f->sync = (__typeof__(f->sync))dlsym(h, "cuStreamSynchronize");
	f->alloc = (__typeof__(f->alloc))dlsym(h, "cuMemAlloc_v2");
	f->free = (__typeof__(f->free))dlsym(h, "cuMemFree_v2");
	return f->launch && f->sync && f->alloc && f->free ? 0 : -1;
}

static void compare(const char *what, block_fn run, const struct fns *direct,
		    const struct fns *hooked, long n)
{
	struct blocks r;

	if (blocks_run(run, direct, hooked, n, &r)) {
		printf("%-34s failed (budget too small?)\n", what);
		return;
	}
	printf("%-34s direct %9.1f ns  hooked %9.1f ns  added %+8.1f ns  ratio %.3f\n",
	       what, r.direct, r.hooked, r.added, r.hooked / r.direct);
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 2000;
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	void *hook = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	struct fns direct, hooked;
	__typeof__(cuInit) *init;
	__typeof__(cuDevicePrimaryCtxRetain) *retain;
	__typeof__(cuCtxSetCurrent) *set;
	__typeof__(cuModuleLoadData) *load_mod;
	__typeof__(cuModuleGetFunction) *get_fn;
	CUcontext ctx;
	CUmodule mod;

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
	load_mod = (__typeof__(load_mod))dlsym(cuda, "cuModuleLoadData");
	get_fn = (__typeof__(get_fn))dlsym(cuda, "cuModuleGetFunction");
	/* Only the simulated driver has a sleep_ns kernel to launch. */
	if (load_mod && get_fn && !load_mod(&mod, "x") && !get_fn(&sleep_ns, mod, "sleep_ns"))
		compare("launch (cuLaunchKernel, 0 ns kernel)", time_launch, &direct,
			&hooked, n);
	compare("cuMemAlloc_v2 + cuMemFree_v2 1 MiB", time_alloc, &direct,
		&hooked, n / 10);
	return 0;
}
