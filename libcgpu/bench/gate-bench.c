// SPDX-License-Identifier: MIT
/*
 * The launch fast path on the host, where no cgpu_km runs: libcgpu's own
 * cuLaunchKernel hook and compute gate (src/hook_launch.c, src/gate.c,
 * compiled in) against the simulated driver's cuLaunchKernel called
 * directly, side by side in one process. The status page is a fixture: a
 * memfd laid out as the kernel's page, mapped read-only exactly
 * as libcgpu maps /dev/cgpu's, and the slice is marked held by writing the grant's go
 * word, as the gate does when SLICE_WAIT returns. Figures, not a test.
 *
 *   gate-bench [CALLS_PER_BLOCK]     medians of 201 alternating blocks
 *   gate-bench count CALLS           CALLS direct launches (loop_direct), then
 *                                    CALLS through the gate (loop_hooked),
 *                                    the latter between two write(2)s of
 *                                    "begin"/"end" to stderr, for callgrind
 *                                    and strace (test/suites/26-gate-host.sh)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "blocks.h"
#include "gate-fixture.h"

/* The slow path never runs: the fixture's slice is held throughout. */
int link_call(unsigned long req, void *arg)
{
	(void)req;
	(void)arg;
	return -ENOTTY;
}

#define LOAD(h, n) (real_##n = (__typeof__(real_##n))dlsym(h, #n))

static unsigned long long zero;
static void *params[] = { &zero };
static CUfunction fn;

/* A 0 ns kernel: the launch's own cost, nothing queued on the engine. */
__attribute__((noinline)) static void loop_direct(long n)
{
	for (long i = 0; i < n; i++)
		real_cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
}

__attribute__((noinline)) static void loop_hooked(long n)
{
	for (long i = 0; i < n; i++)
		cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
}

static double timed(const void *loop, long n)
{
	double t0 = now_ns();

	((void (*)(long))loop)(n);
	return (now_ns() - t0) / n;
}

static void setup(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	struct cgpu_status_page *w;
	__typeof__(cuInit) *init;
	__typeof__(cuDevicePrimaryCtxRetain) *retain;
	__typeof__(cuModuleLoadData) *load;
	__typeof__(cuModuleGetFunction) *get;
	CUcontext ctx;
	CUmodule mod;
	struct gate *g;

	if (!cuda || !LOAD(cuda, cuLaunchKernel) || !LOAD(cuda, cuCtxGetCurrent) ||
	    !LOAD(cuda, cuCtxGetDevice) || !LOAD(cuda, cuCtxSetCurrent) ||
	    !LOAD(cuda, cuCtxSynchronize)) {
		fprintf(stderr, "gate-bench: %s\n", dlerror());
		exit(2);
	}
	init = (__typeof__(init))dlsym(cuda, "cuInit");
	retain = (__typeof__(retain))dlsym(cuda, "cuDevicePrimaryCtxRetain");
	load = (__typeof__(load))dlsym(cuda, "cuModuleLoadData");
	get = (__typeof__(get))dlsym(cuda, "cuModuleGetFunction");
	if (!init || !retain || !load || !get || init(0) || retain(&ctx, 0) ||
	    real_cuCtxSetCurrent(ctx) || load(&mod, "x") || get(&fn, mod, "sleep_ns"))
		exit(2);
	w = status_page_fixture(1);
	w->gpu[0].go = 5ULL << 32 | 1;
	g = gate_bind(ctx, NULL);
	if (!g)
		exit(2);
	__atomic_store_n(&g->go, w->gpu[0].go, __ATOMIC_SEQ_CST);
}

int main(int argc, char **argv)
{
	struct blocks r;
	long n;

	setup();
	if (argc == 3 && !strcmp(argv[1], "count")) {
		n = atol(argv[2]);
		loop_direct(n);
		if (write(2, "begin\n", 6) != 6)
			return 2;
		loop_hooked(n);
		if (write(2, "end\n", 4) != 4)
			return 2;
		return 0;
	}
	n = argc > 1 ? atol(argv[1]) : 2000;
	blocks_run(timed, (const void *)loop_direct, (const void *)loop_hooked, n, &r);
	printf("launch, slice held (host, page fixture) direct %7.1f ns  hooked %7.1f ns  added %+6.1f ns  ratio %.3f\n",
	       r.direct, r.hooked, r.added, r.hooked / r.direct);
	return 0;
}
