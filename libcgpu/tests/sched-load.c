// SPDX-License-Identifier: MIT
/*
 * sched-load: GPU work for the compute-slice tests (test/suites/65-vm-sched.sh),
 * run with libcgpu preloaded in a container's cgroup, on the simulated GPU.
 *
 *   sched-load now
 *	CLOCK_MONOTONIC in ns (the clock the kernel's deadlines use)
 *   sched-load run SECONDS KERNEL_US PER_BATCH [launch|mix|fine]
 *	batches of PER_BATCH kernels of KERNEL_US each, a stream sync after
 *	each batch, for SECONDS. mix: the kernels go through cuLaunchKernel,
 *	cuLaunchKernelEx, cuLaunchCooperativeKernel and cuGraphLaunch in turn.
 *	fine: an event after each kernel, and the batch's sync waits for them in
 *	turn, so that work is counted kernel by kernel (batches of long kernels
 *	last seconds: bench/vm.sh).
 *	Prints "p T_NS WORK_US" about every 250 ms (GPU work of the kernels
 *	completed by T), then work_us, wall_us, batches, slow (gated calls that
 *	took over 2 ms: waits for the slice) and max_call_us.
 *   sched-load calls DIR
 *	every gated entry point once (and one that is not), each after printing
 *	"ready NAME" and waiting for the file DIR/go-NAME (60 s at most); prints
 *	"NAME r=RESULT ms=TIME" for the call alone.
 *   sched-load list
 *	the NAMEs calls goes through, in its order; the last is not gated.
 *   sched-load churn SECONDS CHUNK RING HOLDFILE
 *	for SECONDS, allocates CHUNK bytes, launches a 100 us kernel and frees
 *	the allocation made RING steps earlier, over and over (a stream sync
 *	every 8 steps), timing every step: the pauses a hot update of cgpu_km
 *	causes (docs/upgrade.md). Then prints iterations, max_step_ms, steps
 *	over 50 ms, refused (out of memory) and errors, and
 *	"holding pid=PID bytes=B" with B the bytes it holds, and keeps them
 *	until HOLDFILE is gone (600 s at most).
 *
 * The GPU work of a batch is known exactly: the simulated engine runs each
 * kernel for the time it asks.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgpu_cuda.h"
#include "memsize.h"

#define CK(call)                                                         \
	do {                                                             \
		CUresult r_ = (call);                                    \
		if (r_ != CUDA_SUCCESS) {                                \
			fprintf(stderr, "sched-load: %s: %d\n", #call, r_); \
			exit(1);                                         \
		}                                                        \
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct gpu {
	CUfunction fn;
	CUgraphExec graph;
	CUdeviceptr a, b;
	unsigned long long us;
	void *params[1];
};

static void setup(struct gpu *g, unsigned long long us)
{
	CUDA_KERNEL_NODE_PARAMS_v2 kp = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
					  .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1 };
	CUcontext ctx;
	CUmodule mod;
	CUgraphNode node;
	CUgraph graph;

	g->us = us;
	g->params[0] = &g->us;
	CK(cuInit(0));
	CK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, "sleep"));
	CK(cuModuleGetFunction(&g->fn, mod, "sleep_us"));
	kp.func = g->fn;
	kp.kernelParams = g->params;
	CK(cuGraphCreate(&graph, 0));
	CK(cuGraphAddKernelNode_v2(&node, graph, NULL, 0, &kp));
	CK(cuGraphInstantiateWithFlags(&g->graph, graph, 0));
	CK(cuGraphDestroy(graph));
	CK(cuMemAlloc_v2(&g->a, 4096));
	CK(cuMemAlloc_v2(&g->b, 4096));
}

static CUresult launch(struct gpu *g, int kind)
{
	CUlaunchConfig cfg = { 1, 1, 1, 128, 1, 1, 0, NULL, NULL, 0 };

	switch (kind) {
	case 1:
		return cuLaunchKernelEx(&cfg, g->fn, g->params, NULL);
	case 2:
		return cuLaunchCooperativeKernel(g->fn, 1, 1, 1, 128, 1, 1, 0, NULL, g->params);
	case 3:
		return cuGraphLaunch(g->graph, NULL);
	default:
		return cuLaunchKernel(g->fn, 1, 1, 1, 128, 1, 1, 0, NULL, g->params, NULL);
	}
}

enum mode { PLAIN, MIX, FINE };

static int run(double seconds, unsigned long long us, int per_batch, enum mode mode)
{
	uint64_t start, end, last = 0, t0, t, max_call = 0;
	unsigned long long work = 0, batches = 0, slow = 0;
	CUevent *ev;
	struct gpu g;
	int k = 0;

	if (per_batch < 1 || mode > FINE || !(ev = calloc((size_t)per_batch, sizeof(*ev)))) {
		fprintf(stderr, "sched-load: run: PER_BATCH must be 1 or more, the mode launch, mix or fine\n");
		return 2;
	}
	setup(&g, us);
	for (int i = 0; mode == FINE && i < per_batch; i++)
		CK(cuEventCreate(&ev[i], 0));
	start = now_ns();
	end = start + (uint64_t)(seconds * 1e9);
	for (t = start; t < end; t = now_ns()) {
		for (int i = 0; i < per_batch; i++) {
			t0 = now_ns();
			CK(launch(&g, mode == MIX ? k++ % 4 : 0));
			t0 = now_ns() - t0;
			slow += t0 > 2000000;
			max_call = t0 > max_call ? t0 : max_call;
			if (mode == FINE)
				CK(cuEventRecord(ev[i], NULL));
		}
		for (int i = 0; i < per_batch; i++) {
			if (mode == FINE)
				CK(cuEventSynchronize(ev[i]));
			else if (i == per_batch - 1)
				CK(cuStreamSynchronize(NULL));
			else
				continue;
			work += mode == FINE ? us : us * (unsigned long long)per_batch;
			t = now_ns();
			if (t - last >= 250000000) {
				printf("p %llu %llu\n", (unsigned long long)t, work);
				last = t;
			}
		}
		batches++;
	}
	free(ev);
	printf("work_us=%llu wall_us=%llu batches=%llu slow=%llu max_call_us=%llu\n", work,
	       (unsigned long long)((now_ns() - start) / 1000), batches, slow,
	       (unsigned long long)(max_call / 1000));
	return 0;
}

/* The per-thread-stream variant of a driver function, as the CUDA runtime finds it. */
static void *ptsz(const char *base, int version)
{
	void *fn = NULL;

	CK(cuGetProcAddress_v2(base, &fn, version,
			       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
	return fn;
}

static CUresult call(struct gpu *g, const char *name)
{
	CUlaunchConfig cfg = { 1, 1, 1, 128, 1, 1, 0, NULL, NULL, 0 };
	unsigned int word = 0;

	if (!strcmp(name, "cuLaunchKernel"))
		return launch(g, 0);
	if (!strcmp(name, "cuLaunchKernelEx"))
		return launch(g, 1);
	if (!strcmp(name, "cuLaunchCooperativeKernel"))
		return launch(g, 2);
	if (!strcmp(name, "cuGraphLaunch"))
		return launch(g, 3);
	if (!strcmp(name, "cuLaunchKernel_ptsz"))
		return ((__typeof__(cuLaunchKernel_ptsz) *)ptsz("cuLaunchKernel", 12020))(
			g->fn, 1, 1, 1, 128, 1, 1, 0, NULL, g->params, NULL);
	if (!strcmp(name, "cuLaunchKernelEx_ptsz"))
		return ((__typeof__(cuLaunchKernelEx_ptsz) *)ptsz("cuLaunchKernelEx", 12020))(
			&cfg, g->fn, g->params, NULL);
	if (!strcmp(name, "cuLaunchCooperativeKernel_ptsz"))
		return ((__typeof__(cuLaunchCooperativeKernel_ptsz) *)ptsz(
			"cuLaunchCooperativeKernel", 12020))(g->fn, 1, 1, 1, 128, 1, 1, 0, NULL,
							      g->params);
	if (!strcmp(name, "cuGraphLaunch_ptsz"))
		return ((__typeof__(cuGraphLaunch_ptsz) *)ptsz("cuGraphLaunch", 12020))(
			g->graph, NULL);
	if (!strcmp(name, "cuMemcpyAsync"))
		return cuMemcpyAsync(g->b, g->a, 4, NULL);
	if (!strcmp(name, "cuMemcpyAsync_ptsz"))
		return ((__typeof__(cuMemcpyAsync_ptsz) *)ptsz("cuMemcpyAsync", 12020))(
			g->b, g->a, 4, NULL);
	if (!strcmp(name, "cuMemcpyHtoDAsync_v2"))
		return cuMemcpyHtoDAsync_v2(g->a, &word, 4, NULL);
	if (!strcmp(name, "cuMemcpyHtoDAsync_v2_ptsz"))
		return ((__typeof__(cuMemcpyHtoDAsync_v2_ptsz) *)ptsz("cuMemcpyHtoDAsync", 12020))(
			g->a, &word, 4, NULL);
	if (!strcmp(name, "cuMemcpyDtoHAsync_v2"))
		return cuMemcpyDtoHAsync_v2(&word, g->a, 4, NULL);
	if (!strcmp(name, "cuMemcpyDtoHAsync_v2_ptsz"))
		return ((__typeof__(cuMemcpyDtoHAsync_v2_ptsz) *)ptsz("cuMemcpyDtoHAsync", 12020))(
			&word, g->a, 4, NULL);
	if (!strcmp(name, "cuMemcpyDtoDAsync_v2"))
		return cuMemcpyDtoDAsync_v2(g->b, g->a, 4, NULL);
	if (!strcmp(name, "cuMemcpyDtoDAsync_v2_ptsz"))
		return ((__typeof__(cuMemcpyDtoDAsync_v2_ptsz) *)ptsz("cuMemcpyDtoDAsync", 12020))(
			g->b, g->a, 4, NULL);
	if (!strcmp(name, "cuMemsetD8Async"))
		return cuMemsetD8Async(g->a, 1, 4, NULL);
	if (!strcmp(name, "cuMemsetD8Async_ptsz"))
		return ((__typeof__(cuMemsetD8Async_ptsz) *)ptsz("cuMemsetD8Async", 12020))(
			g->a, 1, 4, NULL);
	if (!strcmp(name, "cuMemsetD16Async"))
		return cuMemsetD16Async(g->a, 1, 2, NULL);
	if (!strcmp(name, "cuMemsetD16Async_ptsz"))
		return ((__typeof__(cuMemsetD16Async_ptsz) *)ptsz("cuMemsetD16Async", 12020))(
			g->a, 1, 2, NULL);
	if (!strcmp(name, "cuMemsetD32Async"))
		return cuMemsetD32Async(g->a, 1, 1, NULL);
	if (!strcmp(name, "cuMemsetD32Async_ptsz"))
		return ((__typeof__(cuMemsetD32Async_ptsz) *)ptsz("cuMemsetD32Async", 12020))(
			g->a, 1, 1, NULL);
	if (!strcmp(name, "cuMemcpyHtoD_v2"))
		return cuMemcpyHtoD_v2(g->a, &word, 4);
	fprintf(stderr, "sched-load: no call %s\n", name);
	exit(2);
}

static const char *const calls[] = {
	"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
	"cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz", "cuGraphLaunch",
	"cuGraphLaunch_ptsz", "cuMemcpyAsync", "cuMemcpyAsync_ptsz", "cuMemcpyHtoDAsync_v2",
	"cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync_v2_ptsz",
	"cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync_v2_ptsz", "cuMemsetD8Async",
	"cuMemsetD8Async_ptsz", "cuMemsetD16Async", "cuMemsetD16Async_ptsz",
	"cuMemsetD32Async", "cuMemsetD32Async_ptsz",
	"cuMemcpyHtoD_v2",	/* not gated: the control */
};

static int run_calls(const char *dir)
{
	char go[4096];
	struct gpu g;

	setup(&g, 1000);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		uint64_t t;
		CUresult r;

		snprintf(go, sizeof(go), "%s/go-%s", dir, calls[i]);
		printf("ready %s\n", calls[i]);
		for (t = now_ns(); access(go, F_OK); usleep(5000))
			if (now_ns() - t > 60000000000ULL) {
				fprintf(stderr, "sched-load: no %s after 60 s\n", go);
				return 1;
			}
		t = now_ns();
		r = call(&g, calls[i]);
		t = now_ns() - t;
		printf("%s r=%d ms=%llu\n", calls[i], r, (unsigned long long)(t / 1000000));
		CK(cuStreamSynchronize(NULL));
	}
	return 0;
}

/*
 * What the driver holds for the process (cutil/memsize.h): a large chunk its own
 * pages; the small allocations (setup's two buffers, small chunks) the distinct
 * pages they are packed into.
 */
static uint64_t held_bytes(const struct gpu *g, const CUdeviceptr *live, int ring, size_t chunk)
{
	uint64_t *page = calloc((size_t)ring + 2, sizeof(*page)), held = 0;
	int n = 0;

	if (!page)
		exit(2);
	page[n++] = cgpu_page_of(g->a);
	page[n++] = cgpu_page_of(g->b);
	for (int k = 0; k < ring; k++) {
		if (!live[k])
			continue;
		if (cgpu_is_small(chunk))
			page[n++] = cgpu_page_of(live[k]);
		else
			held += cgpu_round_page(chunk);
	}
	for (int i = 0; i < n; i++) {
		int seen = 0;

		for (int j = 0; j < i; j++)
			seen |= page[j] == page[i];
		held += seen ? 0 : CGPU_PAGE;
	}
	free(page);
	return held;
}

/* One churn step's result that is not success or out of memory ends the run. */
static int churn(double seconds, size_t chunk, int ring, const char *hold)
{
	CUdeviceptr *live = calloc((size_t)ring, sizeof(*live));
	unsigned long long steps = 0, slow = 0, refused = 0, errors = 0;
	uint64_t start, t0, dt, max_step = 0, held;
	struct gpu g;
	CUresult r;
	int i = 0;

	if (!live || ring < 1)
		return 2;
	setup(&g, 100);
	start = now_ns();
	for (; now_ns() - start < (uint64_t)(seconds * 1e9) && !errors; i = (i + 1) % ring) {
		t0 = now_ns();
		if (live[i] && (r = cuMemFree_v2(live[i])) != CUDA_SUCCESS)
			errors++, fprintf(stderr, "sched-load: cuMemFree_v2: %d\n", r);
		live[i] = 0;
		r = cuMemAlloc_v2(&live[i], chunk);
		if (r == CUDA_ERROR_OUT_OF_MEMORY)
			refused++, live[i] = 0;
		else if (r != CUDA_SUCCESS)
			errors++, live[i] = 0, fprintf(stderr, "sched-load: cuMemAlloc_v2: %d\n", r);
		if ((r = launch(&g, 0)) != CUDA_SUCCESS)
			errors++, fprintf(stderr, "sched-load: cuLaunchKernel: %d\n", r);
		if (++steps % 8 == 0 && (r = cuStreamSynchronize(NULL)) != CUDA_SUCCESS)
			errors++, fprintf(stderr, "sched-load: cuStreamSynchronize: %d\n", r);
		dt = now_ns() - t0;
		max_step = dt > max_step ? dt : max_step;
		if (dt > 50000000) {
			slow++;
			printf("slow step %llu ms at %.3f s\n", (unsigned long long)(dt / 1000000),
			       (double)(t0 - start) / 1e9);
		}
	}
	CK(cuStreamSynchronize(NULL));
	held = held_bytes(&g, live, ring, chunk);
	printf("iterations=%llu max_step_ms=%.1f slow=%llu refused=%llu errors=%llu\n", steps,
	       (double)max_step / 1e6, slow, refused, errors);
	printf("holding pid=%d bytes=%llu\n", getpid(), (unsigned long long)held);
	for (t0 = now_ns(); !access(hold, F_OK) && now_ns() - t0 < 600000000000ULL;)
		usleep(20000);
	free(live);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "now")) {
		printf("%llu\n", (unsigned long long)now_ns());
		return 0;
	}
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "run"))
		return run(atof(argv[2]), strtoull(argv[3], NULL, 10), atoi(argv[4]),
			   argc == 5 || !strcmp(argv[5], "launch") ? PLAIN :
			   !strcmp(argv[5], "mix") ? MIX : !strcmp(argv[5], "fine") ? FINE : 3);
	if (argc == 3 && !strcmp(argv[1], "calls"))
		return run_calls(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "churn"))
		return churn(atof(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]), argv[5]);
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			puts(calls[i]);
		return 0;
	}
	fprintf(stderr, "usage: sched-load now | run SECONDS KERNEL_US PER_BATCH [launch|mix|fine] | calls DIR | list |\n       churn SECONDS CHUNK RING HOLDFILE\n");
	return 2;
}
