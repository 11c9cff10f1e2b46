// SPDX-License-Identifier: MIT
/*
 * libcgpu on the simulated GPU in process-local mode (no /dev/cgpu): run with
 * LD_PRELOAD=libcgpu.so, a fresh CGPU_SIM_STATE, CGPU_TEST_SMI pointing at
 * the simulator's nvidia-smi and the budget in the environment each group
 * names (test/suites/30-libcgpu-host.sh does all that).
 *
 * "Physical" use is read by running nvidia-smi without the hook, which is
 * how a test tells that a refused call never reached the driver.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgpu_cuda.h"
#include "cgpu_nvml.h"
#include "check.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

extern char **environ;
#define OK(call) CHECK((call) == CUDA_SUCCESS)
#define IS(call, want) CHECK((call) == (want))

/* Every hooked call, as the test reaches it through one path. */
#define API(X)                                                        \
	X(memAlloc, cuMemAlloc_v2, cuMemAlloc)                        \
	X(memAllocPitch, cuMemAllocPitch_v2, cuMemAllocPitch)         \
	X(memFree, cuMemFree_v2, cuMemFree)                           \
	X(memAllocManaged, cuMemAllocManaged, cuMemAllocManaged)      \
	X(memGetInfo, cuMemGetInfo_v2, cuMemGetInfo)                  \
	X(deviceTotalMem, cuDeviceTotalMem_v2, cuDeviceTotalMem)      \
	X(memAllocAsync, cuMemAllocAsync, cuMemAllocAsync)            \
	X(memAllocFromPoolAsync, cuMemAllocFromPoolAsync,             \
	  cuMemAllocFromPoolAsync)                                    \
	X(memFreeAsync, cuMemFreeAsync, cuMemFreeAsync)               \
	X(memPoolCreate, cuMemPoolCreate, cuMemPoolCreate)            \
	X(memPoolDestroy, cuMemPoolDestroy, cuMemPoolDestroy)         \
	X(memPoolTrimTo, cuMemPoolTrimTo, cuMemPoolTrimTo)            \
	X(memPoolSetAttribute, cuMemPoolSetAttribute,                 \
	  cuMemPoolSetAttribute)                                      \
	X(deviceSetMemPool, cuDeviceSetMemPool, cuDeviceSetMemPool)   \
	X(streamSynchronize, cuStreamSynchronize, cuStreamSynchronize) \
	X(ctxSynchronize, cuCtxSynchronize, cuCtxSynchronize)         \
	X(eventSynchronize, cuEventSynchronize, cuEventSynchronize)   \
	X(memCreate, cuMemCreate, cuMemCreate)                        \
	X(memRelease, cuMemRelease, cuMemRelease)                     \
	X(memMap, cuMemMap, cuMemMap)                                 \
	X(memUnmap, cuMemUnmap, cuMemUnmap)                           \
	X(arrayCreate, cuArrayCreate_v2, cuArrayCreate)               \
	X(array3DCreate, cuArray3DCreate_v2, cuArray3DCreate)         \
	X(arrayDestroy, cuArrayDestroy, cuArrayDestroy)               \
	X(mipCreate, cuMipmappedArrayCreate, cuMipmappedArrayCreate)  \
	X(mipDestroy, cuMipmappedArrayDestroy, cuMipmappedArrayDestroy) \
	X(ctxDestroy, cuCtxDestroy_v2, cuCtxDestroy)                  \
	X(primaryRetain, cuDevicePrimaryCtxRetain,                    \
	  cuDevicePrimaryCtxRetain)                                   \
	X(primaryRelease, cuDevicePrimaryCtxRelease_v2,               \
	  cuDevicePrimaryCtxRelease)                                  \
	X(primaryReset, cuDevicePrimaryCtxReset_v2,                   \
	  cuDevicePrimaryCtxReset)                                    \
	X(graphAddMemAllocNode, cuGraphAddMemAllocNode,               \
	  cuGraphAddMemAllocNode)                                     \
	X(graphAddNode, cuGraphAddNode, cuGraphAddNode)               \
	X(graphInstantiate, cuGraphInstantiateWithFlags,              \
	  cuGraphInstantiateWithFlags)                                \
	X(graphUpload, cuGraphUpload, cuGraphUpload)                  \
	X(graphLaunch, cuGraphLaunch, cuGraphLaunch)                  \
	X(graphExecDestroy, cuGraphExecDestroy, cuGraphExecDestroy)   \
	X(graphDestroy, cuGraphDestroy, cuGraphDestroy)               \
	X(deviceGraphMemTrim, cuDeviceGraphMemTrim, cuDeviceGraphMemTrim) \
	X(getProcAddress, cuGetProcAddress_v2, cuGetProcAddress)

struct api {
#define FIELD(f, sym, base) __typeof__(sym) *f;
	API(FIELD)
#undef FIELD
};

enum path { SYMBOL, DLSYM, GPA1, GPA2, GPA2_PTDS };
static const char *const path_names[] = { "symbol", "dlsym", "cuGetProcAddress",
					  "cuGetProcAddress_v2",
					  "cuGetProcAddress_v2/per-thread" };

static int in_libcgpu(const void *p)
{
	Dl_info info;

	return p && dladdr(p, &info) && strstr(info.dli_fname, "libcgpu.so");
}

/* Resolves every call through path p; each must land in libcgpu. */
static struct api resolve(enum path p)
{
	typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);
	typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t,
				   CUdriverProcAddressQueryResult *);
	struct api a = { 0 };
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa1_t g1 = (gpa1_t)dlsym(h, "cuGetProcAddress");
	gpa2_t g2 = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
	cuuint64_t fl = p == GPA2_PTDS ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
	CUdriverProcAddressQueryResult st;
	void *fn;

#define GET(f, sym, base)                                                    \
	fn = NULL;                                                           \
	switch (p) {                                                         \
	case SYMBOL: fn = (void *)sym; break;                                \
	case DLSYM: fn = dlsym(h, #sym); break;                              \
	case GPA1: g1(#base, &fn, 12020, fl); break;                         \
	default: g2(#base, &fn, 12020, fl, &st); break;                      \
	}                                                                    \
	if (!in_libcgpu(fn)) {                                               \
		fprintf(stderr, "FAIL %s: %s does not resolve to libcgpu\n", \
			path_names[p], #base);                               \
		failures++;                                                  \
	}                                                                    \
	a.f = (__typeof__(a.f))fn;
	API(GET)
#undef GET
	return a;
}

/* GPU memory used on a physical GPU, from nvidia-smi run without libcgpu. */
static unsigned long long phys_used(int gpu)
{
	char *argv[] = { getenv("CGPU_TEST_SMI"), "--query-gpu=memory.used",
			 "--format=csv,noheader,nounits", NULL };
	char *env[256], buf[256] = "";
	int out[2], n = 0, st, line = 0;
	posix_spawn_file_actions_t fa;
	unsigned long long mib = ~0ULL;
	FILE *f;
	pid_t pid;

	for (char **e = environ; *e && n < 255; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11))
			env[n++] = *e;
	env[n] = NULL;
	if (!argv[0] || pipe(out))
		return ~0ULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, env)) {
		close(out[0]);
		close(out[1]);
		return ~0ULL;
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	while (fgets(buf, sizeof(buf), f))
		if (line++ == gpu)
			mib = strtoull(buf, NULL, 10);
	fclose(f);
	waitpid(pid, &st, 0);
	posix_spawn_file_actions_destroy(&fa);
	return mib == ~0ULL ? mib : mib * MiB;
}

/*
 * What the simulator charges for a context beyond its allocations: nothing on
 * its state file, where this test runs (a context takes memory only with the
 * stand-in driver; docs/sim.md).
 */
#define CONTEXT_RESERVE 0ULL

/*
 * The invariant every group ends with (issue 17, point 2): on every GPU the
 * memory the simulated GPU really holds (nvidia-smi without the hook) is at
 * most what this process is charged (NVML through the hook: in
 * process-local mode, this process's charge) plus the context reserve. Each
 * group runs alone on a fresh state file, so the GPU's use is this
 * process's. Any path that lets memory through uncharged fails here.
 */
static void check_held_within_charge(void)
{
	unsigned n = 0;

	CHECK(nvmlInit_v2() == NVML_SUCCESS);
	CHECK(nvmlDeviceGetCount_v2(&n) == NVML_SUCCESS);
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t d;
		nvmlMemory_t m;
		unsigned long long held = phys_used((int)i);

		CHECK(nvmlDeviceGetHandleByIndex_v2(i, &d) == NVML_SUCCESS);
		CHECK(nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS);
		if (held > m.used + CONTEXT_RESERVE) {
			fprintf(stderr, "FAIL GPU %u holds %llu bytes, %llu charged\n",
				i, held, m.used);
			failures++;
		}
	}
}

static void use_device(int dev)
{
	CUcontext ctx;

	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&ctx, dev));
	OK(cuCtxSetCurrent(ctx));
}

/* What the container is told is free on the current device. */
static size_t free_now(const struct api *a)
{
	size_t f = 0, t = 0;

	OK(a->memGetInfo(&f, &t));
	return f;
}

/* argv budget: bytes on device 0. Every call, through every path. */
static void test_paths(unsigned long long budget)
{
	for (enum path p = SYMBOL; p <= GPA2_PTDS; p++) {
		struct api a = resolve(p);
		CUdeviceptr x, y, pitched, m;
		CUmemGenericAllocationHandle h;
		CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
					     .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
		CUDA_ARRAY_DESCRIPTOR ad = { 1024, 1024, CU_AD_FORMAT_FLOAT, 4 };
		CUarray arr;
		size_t f, t, pitch;
		unsigned long long base;

		use_device(0);
		base = phys_used(0);
		OK(a.memGetInfo(&f, &t));
		CHECK(t == budget && f == budget);
		OK(a.deviceTotalMem(&t, 0));
		CHECK(t == budget);
		OK(a.memAlloc(&x, 600 * MiB));
		CHECK(free_now(&a) == budget - 600 * MiB);
		CHECK(phys_used(0) == base + 600 * MiB);
		/* Refused before the driver: nothing more is used. */
		IS(a.memAlloc(&y, 500 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
		CHECK(phys_used(0) == base + 600 * MiB);
		OK(a.memAllocPitch(&pitched, &pitch, 1000, 1024, 4));
		/* 1 MiB: small, in a page of its own here. */
		CHECK(pitch == 1024 && free_now(&a) == budget - 602 * MiB);
		OK(a.memFree(pitched));
		OK(a.memFree(x));
		CHECK(free_now(&a) == budget);
		IS(a.memAllocManaged(&m, MiB, CU_MEM_ATTACH_GLOBAL),
		   CUDA_ERROR_NOT_SUPPORTED);
		CHECK(phys_used(0) == base);
		/* A pool is charged what it reserves (whole 2 MiB pages here)
		 * until it gives the memory back at a sync. */
		OK(a.memAllocAsync(&x, 3 * MiB, NULL));
		CHECK(free_now(&a) == budget - 4 * MiB);
		OK(a.memFreeAsync(x, NULL));
		CHECK(free_now(&a) == budget - 4 * MiB);
		OK(a.streamSynchronize(NULL));
		CHECK(free_now(&a) == budget);
		OK(a.memCreate(&h, 8 * MiB, &prop, 0));
		CHECK(free_now(&a) == budget - 8 * MiB);
		OK(a.memRelease(h));
		OK(a.arrayCreate(&arr, &ad));
		CHECK(free_now(&a) == budget - 16 * MiB);
		check_held_within_charge();
		OK(a.arrayDestroy(arr));
		CHECK(free_now(&a) == budget && phys_used(0) == base);
		printf("path %s: ok\n", path_names[p]);
	}
}

/*
 * argv budget: bytes on device 0, not a multiple of a page. Charges are what
 * the driver takes (cutil/memsize.h): whole pages, small allocations packed
 * into shared ones. The pages that fit allocate; the rest of the budget,
 * under a page, holds nothing.
 */
static void test_edge(unsigned long long budget)
{
	const unsigned long long room = budget - budget % (2 * MiB),
				 rest = budget % (2 * MiB);

	for (enum path p = SYMBOL; p <= GPA2_PTDS; p++) {
		struct api a = resolve(p);
		CUdeviceptr x, y, z;
		size_t pitch;

		use_device(0);
		IS(a.memAlloc(&x, room + 1), CUDA_ERROR_OUT_OF_MEMORY);
		OK(a.memAlloc(&x, room - 2 * MiB + 1));
		CHECK(free_now(&a) == rest);
		IS(a.memAlloc(&y, 1), CUDA_ERROR_OUT_OF_MEMORY);
		OK(a.memFree(x));
		/* Two small ones share the last page. */
		OK(a.memAlloc(&x, room - 2 * MiB));
		OK(a.memAlloc(&y, 1));
		CHECK(free_now(&a) == rest);
		OK(a.memFree(x));
		OK(a.memAlloc(&z, 1000));
		CHECK(y >> 21 == z >> 21 && free_now(&a) == budget - 2 * MiB);
		OK(a.memFree(y));
		CHECK(free_now(&a) == budget - 2 * MiB);
		OK(a.memFree(z));
		CHECK(free_now(&a) == budget);
		/* 2049 rows at a pitch of 1024 need a second page. */
		OK(a.memAlloc(&x, room - 2 * MiB));
		IS(a.memAllocPitch(&y, &pitch, 1000, 2049, 4), CUDA_ERROR_OUT_OF_MEMORY);
		OK(a.memAllocPitch(&y, &pitch, 1000, 2048, 4));
		CHECK(pitch == 1024 && free_now(&a) == rest);
		OK(a.memFree(y));
		OK(a.memFree(x));
		CHECK(free_now(&a) == budget);
		printf("path %s: ok\n", path_names[p]);
	}
}

/*
 * argv budget: bytes on device 0. Allocations in a loop stop when the
 * simulated GPU holds the budget, never past it: 2 MiB + 1 takes two pages,
 * 1 MiB half of one (the last is refused: a small allocation needs a
 * page's room in the budget).
 */
static void test_pages(unsigned long long budget)
{
	const struct { size_t size; unsigned long long want; } loop[] = {
		{ 2 * MiB + 1, budget / (4 * MiB) },
		{ MiB, 2 * (budget / (2 * MiB)) - 1 },
	};
	const unsigned long long cap = budget / MiB + 1;
	CUdeviceptr *held = calloc(cap, sizeof(*held));
	unsigned long long base, n;
	CUresult r;

	use_device(0);
	base = phys_used(0);
	for (size_t i = 0; i < sizeof(loop) / sizeof(loop[0]); i++) {
		/* Bounded: a hook that lets memory through would not stop. */
		for (n = 0; n < cap && (r = cuMemAlloc_v2(&held[n], loop[i].size)) ==
						CUDA_SUCCESS;)
			n++;
		IS(r, CUDA_ERROR_OUT_OF_MEMORY);
		CHECK(n == loop[i].want);
		CHECK(phys_used(0) - base <= budget);
		CHECK(phys_used(0) - base == budget - budget % (4 * MiB));
		check_held_within_charge();
		printf("%zu-byte allocations: %llu, %llu MiB on the GPU\n",
		       loop[i].size, n, (phys_used(0) - base) / MiB);
		while (n)
			OK(cuMemFree_v2(held[--n]));
		CHECK(phys_used(0) == base);
	}
	free(held);
}

static void test_pools(unsigned long long budget)
{
	struct api a = resolve(SYMBOL);
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUmemoryPool mine;
	CUdeviceptr x, y, big;
	CUstream s;
	CUevent ev;
	cuuint64_t keep = 64 * MiB, zero = 0;
	unsigned long long base;

	use_device(0);
	base = phys_used(0);
	OK(cuStreamCreate(&s, 0));
	OK(cuEventCreate(&ev, 0));
	OK(a.memPoolCreate(&mine, &props));
	OK(a.memPoolSetAttribute(mine, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
	OK(a.memAllocFromPoolAsync(&x, 10 * MiB, mine, s));
	CHECK(free_now(&a) == budget - 10 * MiB);
	OK(a.memFreeAsync(x, s));
	OK(a.streamSynchronize(s));
	CHECK(free_now(&a) == budget - 10 * MiB);	/* kept: threshold */
	/* The idle 10 MiB chunk serves a smaller request: no more charged,
	 * although the budget has less than the ask left outside the pool. */
	OK(a.memAlloc(&big, budget - 14 * MiB));
	OK(a.memAllocFromPoolAsync(&y, 5 * MiB, mine, s));
	CHECK(free_now(&a) == 4 * MiB);
	OK(a.memFreeAsync(y, s));
	IS(a.memAllocFromPoolAsync(&y, 12 * MiB, mine, s), CUDA_ERROR_OUT_OF_MEMORY);
	OK(a.memFree(big));
	OK(a.memPoolTrimTo(mine, 0));
	CHECK(free_now(&a) == budget);
	/* Released at a sync once the threshold is 0 again. */
	OK(a.memPoolSetAttribute(mine, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero));
	OK(a.memAllocFromPoolAsync(&x, 6 * MiB, mine, s));
	OK(a.memFreeAsync(x, s));
	OK(cuEventRecord(ev, s));
	OK(a.eventSynchronize(ev));
	CHECK(free_now(&a) == budget);
	/* The device's current pool feeds cuMemAllocAsync. */
	OK(a.deviceSetMemPool(0, mine));
	OK(a.memAllocAsync(&x, 2 * MiB, s));
	CHECK(free_now(&a) == budget - 2 * MiB);
	/* Destroyed with an allocation out: charged until that is freed. */
	OK(a.memPoolDestroy(mine));
	CHECK(free_now(&a) == budget - 2 * MiB);
	OK(a.memFree(x));
	OK(a.ctxSynchronize());
	CHECK(free_now(&a) == budget);
	/* CUDA 13.0: cuMemSetMemPool makes a pool the device's current one (after
	 * libcgpu has met the one before it), and cuCtxSynchronize_v2 is a point
	 * where pools give memory back. */
	OK(a.memAllocAsync(&x, 2 * MiB, s));
	OK(a.memFreeAsync(x, s));
	OK(a.streamSynchronize(s));
	CHECK(free_now(&a) == budget);
	OK(a.memPoolCreate(&mine, &props));
	OK(a.memPoolSetAttribute(mine, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
	OK(cuMemSetMemPool(&(CUmemLocation){ CU_MEM_LOCATION_TYPE_DEVICE, 0 },
			   CU_MEM_ALLOCATION_TYPE_PINNED, mine));
	OK(a.memAllocAsync(&x, 8 * MiB, s));
	CHECK(free_now(&a) == budget - 8 * MiB);
	OK(a.memFreeAsync(x, s));
	OK(a.memPoolSetAttribute(mine, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero));
	CHECK(free_now(&a) == budget - 8 * MiB);	/* in the pool until a sync */
	OK(cuCtxSynchronize_v2(NULL));
	CHECK(free_now(&a) == budget);
	OK(a.memPoolDestroy(mine));
	IS(a.memAllocAsync(&x, budget + MiB, s), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(phys_used(0) == base);
}

/*
 * argv budget: bytes on device 0. More pools than any fixed table held
 * (64 once): an allocation from each stops when the simulated GPU holds the
 * budget.
 */
static void test_many_pools(unsigned long long budget)
{
	enum { N = 70 };
	const size_t chunk = 32 * MiB;
	struct api a = resolve(SYMBOL);
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUmemoryPool pool[N];
	CUdeviceptr x[N];
	unsigned long long base, n = 0;
	CUresult r = CUDA_SUCCESS;

	use_device(0);
	base = phys_used(0);
	for (int i = 0; i < N; i++) {
		OK(a.memPoolCreate(&pool[i], &props));
		r = a.memAllocFromPoolAsync(&x[n], chunk, pool[i], NULL);
		if (r == CUDA_SUCCESS)
			n++;
	}
	IS(r, CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(n == budget / chunk);
	CHECK(phys_used(0) - base == n * chunk && n * chunk <= budget);
	check_held_within_charge();
	printf("pools: %d, %llu allocations of 32 MiB, %llu MiB on the GPU\n", N,
	       n, (phys_used(0) - base) / MiB);
	while (n)
		OK(a.memFreeAsync(x[--n], NULL));
	OK(a.ctxSynchronize());
	CHECK(free_now(&a) == budget && phys_used(0) == base);
	for (int i = 0; i < N; i++)
		OK(a.memPoolDestroy(pool[i]));
}

/* How a test adds a graph's memory nodes: their own entry points,
 * cuGraphAddNode / cuGraphAddNode_v2 with a CUgraphNodeParams, or stream
 * capture of cuMemAllocAsync / cuMemAllocFromPoolAsync and cuMemFreeAsync
 * (cudaMallocAsync and cudaFreeAsync in a captured stream), whose nodes
 * libcgpu never sees added. */
enum add_way { MEM_NODES, ADD_NODE, ADD_NODE_V2, CAPTURE, CAPTURE_POOL };
static const char *const way_names[] = { "cuGraphAddMemAllocNode",
					 "cuGraphAddNode", "cuGraphAddNode_v2",
					 "capture of cuMemAllocAsync",
					 "capture of cuMemAllocFromPoolAsync" };
static __typeof__(cuGraphAddNode_v2) *add_node_v2;

static CUresult add_node(const struct api *a, enum add_way way, CUgraphNode *n,
			 CUgraph g, const CUgraphNode *dep, CUgraphNodeParams *np)
{
	static const CUgraphEdgeData default_edge;

	if (way == ADD_NODE)
		return a->graphAddNode(n, g, dep, dep != NULL, np);
	if (way == ADD_NODE_V2)
		return add_node_v2(n, g, dep, dep ? &default_edge : NULL,
				   dep != NULL, np);
	if (np->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		return a->graphAddMemAllocNode(n, g, dep, dep != NULL, &np->alloc);
	return cuGraphAddMemFreeNode(n, g, dep, dep != NULL, np->free.dptr);
}

/* A graph with one allocation node of bytes on device 0, added way, freed
 * in the graph when with_free, instantiated. */
static CUresult graph_of(const struct api *a, enum add_way way, size_t bytes,
			 int with_free, CUgraph *g, CUgraphExec *e,
			 CUdeviceptr *dptr)
{
	CUgraphNodeParams p = {
		.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC,
		.alloc = { .poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
					  .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } },
			   .bytesize = bytes },
	};
	CUgraphNodeParams fp = { .type = CU_GRAPH_NODE_TYPE_MEM_FREE };
	CUgraphNode n, f;
	CUmemoryPool pool;
	CUstream s;
	CUresult r;

	if (way >= CAPTURE) {
		OK(cuStreamCreate(&s, 0));
		OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		OK(cuDeviceGetMemPool(&pool, 0));
		r = way == CAPTURE ? a->memAllocAsync(dptr, bytes, s) :
				     a->memAllocFromPoolAsync(dptr, bytes, pool, s);
		if (r == CUDA_SUCCESS && with_free)
			r = a->memFreeAsync(*dptr, s);
		OK(cuStreamEndCapture(s, g));
		OK(cuStreamDestroy_v2(s));
		return r ? r : a->graphInstantiate(e, *g, 0);
	}
	OK(cuGraphCreate(g, 0));
	r = add_node(a, way, &n, *g, NULL, &p);
	fp.free.dptr = p.alloc.dptr;
	if (r == CUDA_SUCCESS && with_free)
		r = add_node(a, way, &f, *g, &n, &fp);
	if (r == CUDA_SUCCESS)
		r = a->graphInstantiate(e, *g, 0);
	*dptr = p.alloc.dptr;
	return r;
}

enum { MAX_GRAPHS = 64 };

/*
 * Executable graphs of one 64 MiB + 1 allocation node each (66 MiB of
 * pages), added way, launched until the budget refuses one: the refusal
 * comes at the graph the budget cannot take, when the simulated GPU holds
 * those graphs' pages, never more than charged. g[n] and e[n] are the
 * refused one; base is what the GPU held before. Returns n.
 */
static unsigned long long graphs_to_budget(const struct api *a, enum add_way way,
					   unsigned long long budget,
					   unsigned long long base, CUgraph *g,
					   CUgraphExec *e)
{
	const unsigned long long pages = 66 * MiB;
	unsigned long long n;
	CUdeviceptr d;
	CUresult r = CUDA_SUCCESS;

	/* Bounded: a hook that lets memory through would not stop. */
	for (n = 0; n < MAX_GRAPHS; n++) {
		OK(graph_of(a, way, 64 * MiB + 1, 1, &g[n], &e[n], &d));
		r = a->graphLaunch(e[n], NULL);
		if (r != CUDA_SUCCESS)
			break;
	}
	IS(r, CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(n == budget / pages);
	CHECK(phys_used(0) - base == n * pages && n * pages <= budget);
	check_held_within_charge();
	printf("graphs: %llu launched of 64 MiB + 1 through %s, %llu MiB on the GPU, budget %llu MiB\n",
	       n, way_names[way], (phys_used(0) - base) / MiB, budget / MiB);
	return n;
}

/*
 * argv budget: bytes on device 0. Graph memory is charged for what the
 * driver's graph pool reserves: executable graphs stop at the budget
 * (graphs_to_budget), relaunches take nothing more, an upload past it is
 * refused; destroyed graphs leave their pages in the pool (held and
 * charged, reused by the next graph), trimmed back to the device; an
 * allocation that outlives its graph stays charged until it is freed.
 * Every path reaches the hooks.
 */
static void test_graph(unsigned long long budget)
{
	const size_t chunk = 64 * MiB + 1, pages = 66 * MiB;
	struct api a;
	CUgraph g[MAX_GRAPHS + 1];
	CUgraphExec e[MAX_GRAPHS + 1];
	CUdeviceptr d, keep;
	unsigned long long base, n;

	for (enum path p = SYMBOL; p <= GPA2_PTDS; p++)
		resolve(p);
	a = resolve(SYMBOL);
	use_device(0);
	base = phys_used(0);
	n = graphs_to_budget(&a, MEM_NODES, budget, base, g, e);
	IS(a.graphUpload(e[n], NULL), CUDA_ERROR_OUT_OF_MEMORY);
	for (unsigned long long i = 0; i < n; i++)
		OK(a.graphLaunch(e[i], NULL));
	CHECK(phys_used(0) - base == n * pages);
	OK(a.ctxSynchronize());
	for (unsigned long long i = 0; i <= n; i++) {
		OK(a.graphExecDestroy(e[i]));
		OK(a.graphDestroy(g[i]));
	}
	/* The pool keeps the pages: still held, still charged, and reused. */
	CHECK(phys_used(0) - base == n * pages);
	check_held_within_charge();
	OK(graph_of(&a, MEM_NODES, chunk, 1, &g[0], &e[0], &d));
	OK(a.graphUpload(e[0], NULL));
	OK(a.graphLaunch(e[0], NULL));
	CHECK(phys_used(0) - base == n * pages);
	OK(a.ctxSynchronize());
	OK(a.deviceGraphMemTrim(0));
	CHECK(phys_used(0) == base && free_now(&a) == budget);
	OK(a.graphExecDestroy(e[0]));
	OK(a.graphDestroy(g[0]));
	/* Outliving its graph: charged until freed; a second one past the
	 * budget is refused. */
	OK(graph_of(&a, MEM_NODES, GiB + 1, 0, &g[0], &e[0], &keep));
	OK(a.graphLaunch(e[0], NULL));
	OK(a.graphExecDestroy(e[0]));
	OK(a.graphDestroy(g[0]));
	OK(a.deviceGraphMemTrim(0));
	CHECK(phys_used(0) - base == GiB + 2 * MiB);
	check_held_within_charge();
	OK(graph_of(&a, MEM_NODES, GiB + 1, 0, &g[0], &e[0], &d));
	IS(a.graphLaunch(e[0], NULL), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(phys_used(0) - base == GiB + 2 * MiB);
	OK(a.memFreeAsync(keep, NULL));
	OK(a.deviceGraphMemTrim(0));
	CHECK(phys_used(0) == base && free_now(&a) == budget);
	OK(a.graphLaunch(e[0], NULL));
	CHECK(phys_used(0) - base == GiB + 2 * MiB);
	check_held_within_charge();
	/* A reset takes the context's graph memory, and its charge, along. */
	OK(a.primaryReset(0));
	use_device(0);
	CHECK(phys_used(0) == base && free_now(&a) == budget);
	OK(a.graphExecDestroy(e[0]));
	OK(a.graphDestroy(g[0]));
}

/* The name of the function at p, as its library exports it. */
static const char *name_of(const void *p)
{
	Dl_info info;

	return p && dladdr(p, &info) && info.dli_sname ? info.dli_sname : "";
}

/*
 * argv budget: bytes on device 0. Allocation nodes added through
 * cuGraphAddNode and cuGraphAddNode_v2 (the CUDA runtime's
 * cudaGraphAddNode) are charged as cuGraphAddMemAllocNode's: graphs of them
 * stop at the budget, and trimmed, give it all back. cuGetProcAddress for
 * CUDA 12.3 gets the v1 hook from this driver (a 12.2 one, as libcuda 535,
 * answers with its v1), never the _v2's, which takes one more argument.
 */
static void test_graph_node(unsigned long long budget)
{
	typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t,
				   CUdriverProcAddressQueryResult *);
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa2_t gpa = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
	CUgraph g[MAX_GRAPHS + 1];
	CUgraphExec e[MAX_GRAPHS + 1];
	unsigned long long base, n;
	struct api a;
	void *fn = NULL;

	for (enum path p = SYMBOL; p <= GPA2_PTDS; p++)
		resolve(p);
	a = resolve(SYMBOL);
	OK(gpa("cuGraphAddNode", &fn, 12030, 0, NULL));
	CHECK(in_libcgpu(fn) && !strcmp(name_of(fn), "cuGraphAddNode"));
	add_node_v2 = (__typeof__(add_node_v2))dlsym(h, "cuGraphAddNode_v2");
	CHECK(in_libcgpu((void *)add_node_v2) && add_node_v2 == cuGraphAddNode_v2);
	use_device(0);
	base = phys_used(0);
	for (enum add_way way = ADD_NODE; way <= ADD_NODE_V2; way++) {
		n = graphs_to_budget(&a, way, budget, base, g, e);
		OK(a.ctxSynchronize());
		for (unsigned long long i = 0; i <= n && i < MAX_GRAPHS; i++) {
			OK(a.graphExecDestroy(e[i]));
			OK(a.graphDestroy(g[i]));
		}
		OK(a.deviceGraphMemTrim(0));
		CHECK(phys_used(0) == base && free_now(&a) == budget);
	}
}

/*
 * argv budget: bytes on device 0. Graphs made by stream capture of
 * cuMemAllocAsync (cudaMallocAsync), freed in the graph or not, have
 * allocation nodes libcgpu never saw added: asked their sizes at
 * instantiation, they are charged before the driver maps them, so they stop
 * at the budget as added ones do (graphs_to_budget), at upload and at
 * launch; capture itself charges nothing.
 */
static void test_graph_capture(unsigned long long budget)
{
	CUgraph g[MAX_GRAPHS + 1];
	CUgraphExec e[MAX_GRAPHS + 1];
	CUdeviceptr keep, d;
	unsigned long long base, n;
	struct api a = resolve(SYMBOL);

	use_device(0);
	base = phys_used(0);
	n = graphs_to_budget(&a, CAPTURE, budget, base, g, e);
	IS(a.graphUpload(e[n], NULL), CUDA_ERROR_OUT_OF_MEMORY);
	OK(a.ctxSynchronize());
	for (unsigned long long i = 0; i <= n && i < MAX_GRAPHS; i++) {
		OK(a.graphExecDestroy(e[i]));
		OK(a.graphDestroy(g[i]));
	}
	OK(a.deviceGraphMemTrim(0));
	CHECK(phys_used(0) == base && free_now(&a) == budget);
	/* Not freed in the graph: the allocation outlives it, charged until
	 * freed; another past the budget is refused before it is mapped. */
	OK(graph_of(&a, CAPTURE, GiB + 1, 0, &g[0], &e[0], &keep));
	CHECK(free_now(&a) == budget);
	OK(a.graphLaunch(e[0], NULL));
	CHECK(phys_used(0) - base == GiB + 2 * MiB);
	OK(graph_of(&a, CAPTURE_POOL, GiB + 1, 0, &g[1], &e[1], &d));
	IS(a.graphUpload(e[1], NULL), CUDA_ERROR_OUT_OF_MEMORY);
	IS(a.graphLaunch(e[1], NULL), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(phys_used(0) - base == GiB + 2 * MiB);
	check_held_within_charge();
	OK(a.memFreeAsync(keep, NULL));
	OK(a.ctxSynchronize());
	OK(a.graphExecDestroy(e[0]));
	OK(a.graphDestroy(g[0]));
	OK(a.deviceGraphMemTrim(0));
	CHECK(phys_used(0) == base && free_now(&a) == budget);
	OK(a.graphLaunch(e[1], NULL));
	CHECK(phys_used(0) - base == GiB + 2 * MiB);
	check_held_within_charge();
	OK(a.memFreeAsync(d, NULL));
	OK(a.ctxSynchronize());
	OK(a.graphExecDestroy(e[1]));
	OK(a.graphDestroy(g[1]));
	OK(a.deviceGraphMemTrim(0));
	CHECK(phys_used(0) == base && free_now(&a) == budget);
}

static void test_handles(unsigned long long budget)
{
	struct api a = resolve(SYMBOL);
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUDA_ARRAY3D_DESCRIPTOR d3 = { 256, 256, 64, CU_AD_FORMAT_HALF, 2, 0 };
	CUDA_ARRAY3D_DESCRIPTOR dm = { 1024, 1024, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0 };
	CUmemGenericAllocationHandle h, h2;
	CUarray arr;
	CUmipmappedArray mip;
	unsigned long long base;

	use_device(0);
	base = phys_used(0);
	OK(a.memCreate(&h, budget - 2 * MiB, &prop, 0));
	IS(a.memCreate(&h2, 4 * MiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(phys_used(0) == base + budget - 2 * MiB);
	OK(a.memRelease(h));
	/* A driver refusal gives the charge back. */
	IS(a.memCreate(&h2, MiB, &prop, 0), CUDA_ERROR_INVALID_VALUE);
	CHECK(free_now(&a) == budget);
	OK(a.array3DCreate(&arr, &d3));
	CHECK(free_now(&a) == budget - 16 * MiB);
	OK(a.mipCreate(&mip, &dm, 11));
	/* MiB + 349525 texel bytes, in whole pages. */
	CHECK(free_now(&a) == budget - 18 * MiB);
	OK(a.mipDestroy(mip));
	OK(a.arrayDestroy(arr));
	CHECK(free_now(&a) == budget && phys_used(0) == base);
}

/*
 * argv budget: bytes on device 0. VMM physical memory is charged until it
 * is both released and unmapped: create, map, release while mapped, repeat,
 * stops when the simulated GPU holds the budget.
 */
static void test_vmm(unsigned long long budget)
{
	const size_t chunk = 64 * MiB;
	const unsigned long long want = budget / chunk;
	struct api a = resolve(SYMBOL);
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUdeviceptr va, second;
	CUmemGenericAllocationHandle h;
	unsigned long long base, n;
	CUresult r;

	use_device(0);
	base = phys_used(0);
	OK(cuMemAddressReserve(&va, (want + 1) * chunk, 0, 0, 0));
	for (n = 0; (r = a.memCreate(&h, chunk, &prop, 0)) == CUDA_SUCCESS; n++) {
		OK(a.memMap(va + n * chunk, chunk, 0, h, 0));
		OK(a.memRelease(h));
	}
	IS(r, CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(n == want);
	CHECK(phys_used(0) - base == want * chunk && want * chunk <= budget);
	CHECK(free_now(&a) == budget - want * chunk);
	check_held_within_charge();
	printf("vmm: %llu x 64 MiB mapped after release, %llu MiB on the GPU\n",
	       n, (phys_used(0) - base) / MiB);
	/* Each goes with its last mapping. */
	while (n--)
		OK(a.memUnmap(va + n * chunk, chunk));
	CHECK(free_now(&a) == budget && phys_used(0) == base);
	/* Two mappings of one handle: charged until the last goes, released
	 * or not first. */
	OK(cuMemAddressReserve(&second, chunk, 0, 0, 0));
	OK(a.memCreate(&h, chunk, &prop, 0));
	OK(a.memMap(va, chunk, 0, h, 0));
	OK(a.memMap(second, chunk, 0, h, 0));
	OK(a.memUnmap(va, chunk));
	OK(a.memRelease(h));
	CHECK(free_now(&a) == budget - chunk && phys_used(0) == base + chunk);
	OK(a.memUnmap(second, chunk));
	CHECK(free_now(&a) == budget && phys_used(0) == base);
	OK(a.memCreate(&h, chunk, &prop, 0));
	OK(a.memMap(second, chunk, 0, h, 0));
	OK(a.memUnmap(second, chunk));
	CHECK(free_now(&a) == budget - chunk);
	OK(a.memRelease(h));
	CHECK(free_now(&a) == budget && phys_used(0) == base);
	OK(cuMemAddressFree(second, chunk));
	OK(cuMemAddressFree(va, (want + 1) * chunk));
}

/* The entry points before CUDA 3.2 and 11.0, as one path reaches them. */
struct api_v1 {
	__typeof__(cuMemAlloc) *memAlloc;
	__typeof__(cuMemAllocPitch) *memAllocPitch;
	__typeof__(cuMemFree) *memFree;
	__typeof__(cuArrayCreate) *arrayCreate;
	__typeof__(cuArray3DCreate) *array3DCreate;
	__typeof__(cuDevicePrimaryCtxRelease) *primaryRelease;
	__typeof__(cuDevicePrimaryCtxReset) *primaryReset;
};

/* CUDA 3.0 for the memory calls, 10.0 for the context ones: the versions
 * whose runtimes got the v1 variants. */
static void *v1_fn(enum path p, const char *name, int version)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW), *fn = NULL;
	CUdriverProcAddressQueryResult st;

	switch (p) {
	case SYMBOL:
	case DLSYM: fn = dlsym(p == SYMBOL ? RTLD_DEFAULT : h, name); break;
	case GPA1: cuGetProcAddress(name, &fn, version, 0); break;
	default: cuGetProcAddress_v2(name, &fn, version,
				     p == GPA2_PTDS ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0,
				     &st);
	}
	if (!in_libcgpu(fn)) {
		fprintf(stderr, "FAIL %s: %s (CUDA %d) does not resolve to libcgpu\n",
			path_names[p], name, version);
		failures++;
	}
	return fn;
}

/*
 * argv budget: bytes on device 0 (at most what the simulator maps below
 * 2 GiB for 32-bit pointers). Each v1 entry point, through every path, is
 * charged as its _v2 sibling: a loop of 2 MiB + 1 stops at the budget of
 * physical memory; a reset or last release gives the context's memory back.
 */
static void test_v1(unsigned long long budget)
{
	CUDA_ARRAY_DESCRIPTOR_v1 ad = { 1024, 1024, CU_AD_FORMAT_FLOAT, 4 };
	CUDA_ARRAY3D_DESCRIPTOR_v1 d3 = { 256, 256, 64, CU_AD_FORMAT_HALF, 2, 0 };
	CUdeviceptr_v1 *held = calloc(budget / (4 * MiB) + 1, sizeof(*held));
	struct api a = resolve(SYMBOL);

	for (enum path p = SYMBOL; p <= GPA2_PTDS; p++) {
		struct api_v1 v = {
			v1_fn(p, "cuMemAlloc", 3000), v1_fn(p, "cuMemAllocPitch", 3000),
			v1_fn(p, "cuMemFree", 3000), v1_fn(p, "cuArrayCreate", 3000),
			v1_fn(p, "cuArray3DCreate", 3000),
			v1_fn(p, "cuDevicePrimaryCtxRelease", 10000),
			v1_fn(p, "cuDevicePrimaryCtxReset", 10000),
		};
		unsigned long long base, n = 0;
		unsigned int pitch;
		CUarray arr, arr3;
		CUresult r;

		use_device(0);
		base = phys_used(0);
		while ((r = v.memAlloc(&held[n], 2 * MiB + 1)) == CUDA_SUCCESS)
			n++;
		IS(r, CUDA_ERROR_OUT_OF_MEMORY);
		CHECK(n == budget / (4 * MiB));
		CHECK(phys_used(0) - base == n * 4 * MiB && n * 4 * MiB <= budget);
		check_held_within_charge();
		while (n)
			OK(v.memFree(held[--n]));
		CHECK(free_now(&a) == budget && phys_used(0) == base);
		OK(v.memAllocPitch(&held[0], &pitch, 1000, 2048, 4));
		CHECK(pitch == 1024 && free_now(&a) == budget - 2 * MiB);
		OK(v.memFree(held[0]));
		OK(v.arrayCreate(&arr, &ad));
		OK(v.array3DCreate(&arr3, &d3));
		CHECK(free_now(&a) == budget - 32 * MiB);
		OK(cuArrayDestroy(arr));
		OK(cuArrayDestroy(arr3));
		CHECK(free_now(&a) == budget && phys_used(0) == base);
		/* cudaDeviceReset on CUDA 10 and 11 runtimes. */
		OK(v.memAlloc(&held[0], 100 * MiB));
		OK(v.primaryReset(0));
		use_device(0);
		CHECK(free_now(&a) == budget && phys_used(0) == base);
		OK(v.memAlloc(&held[0], 100 * MiB));
		OK(v.primaryRelease(0));
		CHECK(phys_used(0) == base);
		use_device(0);
		CHECK(free_now(&a) == budget);
		printf("v1 path %s: ok\n", path_names[p]);
	}
	free(held);
}

/* A context's memory goes when it does. */
static void test_ctx(unsigned long long budget)
{
	struct api a = resolve(SYMBOL);
	CUDA_ARRAY_DESCRIPTOR ad = { 1024, 1024, CU_AD_FORMAT_FLOAT, 4 };
	CUcontext ctx, prim;
	CUdeviceptr x;
	CUarray arr;

	OK(cuInit(0));
	OK(cuCtxCreate_v2(&ctx, 0, 0));
	OK(a.memAlloc(&x, 100 * MiB));
	OK(a.arrayCreate(&arr, &ad));
	CHECK(free_now(&a) == budget - 116 * MiB);
	OK(a.ctxDestroy(ctx));
	OK(a.primaryRetain(&prim, 0));
	OK(cuCtxSetCurrent(prim));
	CHECK(free_now(&a) == budget);
	OK(a.memAlloc(&x, 100 * MiB));
	OK(a.primaryReset(0));
	OK(a.primaryRetain(&prim, 0));
	CHECK(free_now(&a) == budget);
	OK(a.memAlloc(&x, 50 * MiB));
	OK(a.primaryRelease(0));
	OK(a.primaryRetain(&prim, 0));
	CHECK(free_now(&a) == budget);
}

/* argv: per CUDA device, its budget in bytes (after CUDA_VISIBLE_DEVICES). */
static void test_multi(int argc, char **argv)
{
	struct api a = resolve(SYMBOL);
	CUdeviceptr x;
	int n = 0;

	OK(cuInit(0));
	OK(cuDeviceGetCount(&n));
	CHECK(n == argc);
	for (int dev = 0; dev < n; dev++) {
		unsigned long long want = strtoull(argv[dev], NULL, 10);
		size_t t;

		OK(a.deviceTotalMem(&t, dev));
		CHECK(t == want);
		use_device(dev);
		CHECK(free_now(&a) == want);
		/* Filling this device leaves the others' budgets alone. */
		OK(a.memAlloc(&x, want - want % (2 * MiB)));
		IS(a.memAlloc(&x, 2 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	}
	printf("devices: %d\n", n);
}

/* argv: per NVML index, its budget in bytes. */
static void test_nvml(int argc, char **argv)
{
	nvmlDevice_t d;
	nvmlMemory_t m;
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	CUdeviceptr x;
	unsigned n;

	CHECK(nvmlInit_v2() == NVML_SUCCESS);
	CHECK(nvmlDeviceGetCount_v2(&n) == NVML_SUCCESS && (int)n == argc);
	for (unsigned i = 0; i < n; i++) {
		unsigned long long want = strtoull(argv[i], NULL, 10);

		CHECK(nvmlDeviceGetHandleByIndex_v2(i, &d) == NVML_SUCCESS);
		CHECK(nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS);
		CHECK(m.total == want && m.free == want && m.used == 0);
		CHECK(nvmlDeviceGetMemoryInfo_v2(d, &m2) == NVML_SUCCESS);
		CHECK(m2.total == want && m2.free == want && m2.reserved == 0);
	}
	/* This process's own use shows (process-local mode sees no other). */
	use_device(0);
	OK(cuMemAlloc_v2(&x, 100 * MiB));
	CHECK(nvmlDeviceGetHandleByIndex_v2(0, &d) == NVML_SUCCESS);
	CHECK(nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS);
	CHECK(m.used == 100 * MiB && m.free == m.total - 100 * MiB);
}

struct thread_arg {
	unsigned long long budget;
	unsigned long long *held;
	int refused;
};

static void *churn(void *p)
{
	struct thread_arg *t = p;
	CUdeviceptr x;

	use_device(0);
	for (int i = 0; i < 300; i++) {
		CUresult r = cuMemAlloc_v2(&x, 16 * MiB);

		if (r == CUDA_ERROR_OUT_OF_MEMORY) {
			__atomic_fetch_add(&t->refused, 1, __ATOMIC_RELAXED);
			continue;
		}
		OK(r);
		CHECK(__atomic_add_fetch(t->held, 16 * MiB, __ATOMIC_SEQ_CST) <=
		      t->budget);
		sched_yield();	/* hold it while others try */
		__atomic_sub_fetch(t->held, 16 * MiB, __ATOMIC_SEQ_CST);
		OK(cuMemFree_v2(x));
	}
	return NULL;
}

/* Threads racing for a budget of a few allocations never hold more. */
static void test_threads(unsigned long long budget)
{
	pthread_t th[8];
	unsigned long long held = 0;
	struct thread_arg t = { budget, &held, 0 };
	struct api a = resolve(SYMBOL);

	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, churn, &t);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	use_device(0);
	CHECK(free_now(&a) == budget);
	printf("threads: %d of 2400 allocations refused\n", t.refused);
}

/*
 * A lock libcgpu takes in the busy thread below is held 200 us longer than it
 * would be (the executable's definition comes first in the lookup order, and
 * the link exports it), so that fork_while_busy's forks land while one of
 * libcgpu's locks is held: a lock its fork handlers do not take is then
 * inherited held, and the child that needs it hangs. Without the delay the
 * locks are held for a few instructions and such a fork is rare.
 */
static __thread int slow_locks;
int pthread_mutex_lock(pthread_mutex_t *m)
{
	static int (*real)(pthread_mutex_t *);
	int (*fn)(pthread_mutex_t *) = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	Dl_info info;
	int r;

	if (!fn) {
		fn = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	r = fn(m);
	if (slow_locks && !r && dladdr(__builtin_return_address(0), &info) && info.dli_fname &&
	    strstr(info.dli_fname, "libcgpu"))
		usleep(200);
	return r;
}

/* Inside libcgpu all the time: its tables' and NVML handles' locks. */
static int busy_stop;
static void *busy(void *arg)
{
	const struct api *a = arg;
	nvmlDevice_t d;
	nvmlMemory_t m;
	CUdeviceptr z;

	slow_locks = 1;
	use_device(0);
	CHECK(nvmlDeviceGetHandleByIndex_v2(0, &d) == NVML_SUCCESS);
	/* Mostly NVML: an allocation costs the simulator an mmap, which would
	 * leave the lookups' lock free most of the time. */
	for (int i = 0; !__atomic_load_n(&busy_stop, __ATOMIC_ACQUIRE); i++) {
		nvmlDeviceGetMemoryInfo(d, &m);
		if (i % 64 == 0 && a->memAlloc(&z, MiB) == CUDA_SUCCESS)
			a->memFree(z);
	}
	return NULL;
}

/*
 * Forks while another thread is inside libcgpu: no child may inherit a lock
 * held by that thread (it would wait for it forever), and each child starts
 * with its own ledger (in process-local mode the whole budget: nothing its
 * parent holds is charged to it again).
 */
static void fork_while_busy(const struct api *a, unsigned long long budget, int shared)
{
	nvmlDevice_t d;
	nvmlMemory_t m;
	pthread_t t;
	int hung = 0, bad = 0, n = 0;

	CHECK(nvmlInit_v2() == NVML_SUCCESS);
	CHECK(nvmlDeviceGetHandleByIndex_v2(0, &d) == NVML_SUCCESS);
	CHECK(pthread_create(&t, NULL, busy, (void *)a) == 0);
	for (; n < 100 && !hung; n++) {
		pid_t kid = fork();
		int st, w = 0;

		if (kid == 0) {
			CUdeviceptr y;
			int ok;

			use_device(0);
			ok = nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS &&
			     a->memAlloc(&y, MiB) == CUDA_SUCCESS && a->memFree(y) == CUDA_SUCCESS &&
			     (shared || free_now(a) == budget);
			_exit(!ok || failures);
		}
		for (int ms = 0; ms < 10000 && !(w = waitpid(kid, &st, WNOHANG)); ms++)
			usleep(1000);
		if (!w) {
			kill(kid, SIGKILL);
			waitpid(kid, &st, 0);
			hung++; /* one is a failure; more would cost 10 s each */
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			bad++;
		}
	}
	__atomic_store_n(&busy_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	if (hung || bad) {
		fprintf(stderr, "FAIL fork while busy: child %d hung, %d failed\n", hung ? n : 0,
			bad);
		failures++;
	}
	printf("fork: %d children forked while a thread was inside libcgpu: %d hung, %d failed\n",
	       n, hung, bad);
}

/*
 * A fork child charges on its own account: in process-local mode it starts
 * with the whole budget; with the kernel ledger (shared != 0) it shares the
 * container's with its parent. Either way the parent keeps its charges.
 */
static void test_fork(unsigned long long budget, int shared)
{
	struct api a = resolve(SYMBOL);
	unsigned long long parent = 600 * MiB, left = budget - (shared ? parent : 0);
	CUdeviceptr x;
	pid_t kid;
	int st;

	use_device(0);
	OK(a.memAlloc(&x, parent));
	kid = fork();
	if (kid == 0) {
		CUdeviceptr y;

		use_device(0);
		CHECK(free_now(&a) == left);
		OK(a.memAlloc(&y, left - 100 * MiB));
		IS(a.memAlloc(&y, 200 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
		_exit(failures != 0);
	}
	waitpid(kid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* The child's memory went with it. */
	CHECK(free_now(&a) == budget - parent);
	OK(a.memFree(x));
	CHECK(free_now(&a) == budget);
	fork_while_busy(&a, budget, shared);
}

/* Nothing limited: the driver's own answers come through. */
static void test_unlimited(void)
{
	CUdeviceptr x, m;
	size_t f, t;

	use_device(0);
	OK(cuMemGetInfo_v2(&f, &t));
	CHECK(t == 15109 * MiB);
	OK(cuMemAlloc_v2(&x, 8 * GiB));
	OK(cuMemAllocManaged(&m, MiB, CU_MEM_ATTACH_GLOBAL));
	OK(cuMemFree_v2(x));
	OK(cuMemFree_v2(m));
}

/* A malformed budget refuses everything rather than nothing. */
static void test_refuse_all(void)
{
	CUdeviceptr x;

	use_device(0);
	IS(cuMemAlloc_v2(&x, MiB), CUDA_ERROR_OUT_OF_MEMORY);
}

int main(int argc, char **argv)
{
	unsigned long long arg = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
	const char *g = argc > 1 ? argv[1] : "";

	if (!strcmp(g, "paths"))
		test_paths(arg);
	else if (!strcmp(g, "edge"))
		test_edge(arg);
	else if (!strcmp(g, "pages"))
		test_pages(arg);
	else if (!strcmp(g, "vmm"))
		test_vmm(arg);
	else if (!strcmp(g, "graph"))
		test_graph(arg);
	else if (!strcmp(g, "graph-node"))
		test_graph_node(arg);
	else if (!strcmp(g, "graph-capture"))
		test_graph_capture(arg);
	else if (!strcmp(g, "many-pools"))
		test_many_pools(arg);
	else if (!strcmp(g, "v1"))
		test_v1(arg);
	else if (!strcmp(g, "pools"))
		test_pools(arg);
	else if (!strcmp(g, "handles"))
		test_handles(arg);
	else if (!strcmp(g, "ctx"))
		test_ctx(arg);
	else if (!strcmp(g, "multi"))
		test_multi(argc - 2, argv + 2);
	else if (!strcmp(g, "nvml"))
		test_nvml(argc - 2, argv + 2);
	else if (!strcmp(g, "threads"))
		test_threads(arg);
	else if (!strcmp(g, "fork"))
		test_fork(arg, argc > 3 && !strcmp(argv[3], "shared"));
	else if (!strcmp(g, "unlimited"))
		test_unlimited();
	else if (!strcmp(g, "refuse-all"))
		test_refuse_all();
	else
		return 2;
	check_held_within_charge();
	printf("hook-test %s: %s\n", g, failures ? "FAIL" : "ok");
	return failures != 0;
}
