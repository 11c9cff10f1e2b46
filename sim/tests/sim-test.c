// SPDX-License-Identifier: MIT
/*
 * Tests of the simulated GPU itself, one group per subcommand; run by
 * test/suites/30-libcgpu-host.sh, each with a fresh CGPU_SIM_STATE file and
 * the default node (4 x Tesla T4, 15109 MiB) unless the group says.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgpu_cuda.h"
#include "cgpu_nvml.h"
#include "check.h"

#define MiB (1ULL << 20)
#define TOTAL (15109ULL * MiB)

#define OK(call) CHECK((call) == CUDA_SUCCESS)
#define NOK(call) CHECK((call) == NVML_SUCCESS)

static CUcontext use_device(int dev)
{
	CUcontext ctx = NULL;

	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&ctx, dev));
	OK(cuCtxSetCurrent(ctx));
	return ctx;
}

/*
 * On the stand-in driver, what its nvidia-uvm's page tables for the mappings hold on GPU
 * idx (in the GPU's figure, as a real GPU's are); 0 on the sim's own model.
 */
static unsigned long long uvm_tables(unsigned idx)
{
	char path[64];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/driver/nvidia-sim/gpus/%u/uvm_tables", idx);
	f = fopen(path, "r");
	if (f) {
		CHECK(fscanf(f, "%llu", &v) == 1);
		fclose(f);
	}
	return v;
}

/* NVML's used memory of GPU idx, less nvidia-uvm's page tables: the allocations'. */
static unsigned long long nvml_used(unsigned idx)
{
	nvmlDevice_t d;
	nvmlMemory_t m = { 0 };

	NOK(nvmlInit_v2());
	NOK(nvmlDeviceGetHandleByIndex_v2(idx, &d));
	NOK(nvmlDeviceGetMemoryInfo(d, &m));
	NOK(nvmlShutdown());
	return m.used - uvm_tables(idx);
}

/* How many processes NVML lists on GPU idx; the first one's pid and bytes. */
static unsigned nvml_procs(unsigned idx, unsigned *pid, unsigned long long *bytes)
{
	nvmlDevice_t d;
	nvmlProcessInfo_t p[4];
	unsigned n = 0;

	NOK(nvmlInit_v2());
	NOK(nvmlDeviceGetHandleByIndex_v2(idx, &d));
	CHECK(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL) == NVML_SUCCESS || n > 0);
	n = 4;
	NOK(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p));
	NOK(nvmlShutdown());
	*pid = n ? p[0].pid : 0;
	*bytes = n ? p[0].usedGpuMemory : 0;
	return n;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_basics(void)
{
	char name[64], bus[32];
	CUuuid u;
	int n = 0, v = 0, attr = 0;
	size_t total = 0;
	const char *s;
	CUcontext c1, c2, cur;
	CUdevice dev;

	CHECK(cuDeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED);
	CHECK(cuInit(1) == CUDA_ERROR_INVALID_VALUE);
	OK(cuInit(0));
	OK(cuDeviceGetCount(&n));
	CHECK(n == 4);
	OK(cuDriverGetVersion(&v));
	CHECK(v == 12020);
	OK(cuDeviceGetName(name, sizeof(name), 3));
	CHECK(!strcmp(name, "Tesla T4"));
	OK(cuDeviceGetUuid_v2(&u, 1));
	CHECK((unsigned char)u.bytes[0] == 0xc6 && u.bytes[15] == 1);
	OK(cuDeviceGetPCIBusId(bus, sizeof(bus), 2));
	CHECK(!strcmp(bus, "0000:12:00.0"));
	OK(cuDeviceTotalMem_v2(&total, 0));
	CHECK(total == TOTAL);
	OK(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
	CHECK(attr == 7);
	CHECK(cuDeviceGetAttribute(&attr, (CUdevice_attribute)9999, 0) ==
	      CUDA_ERROR_INVALID_VALUE);
	CHECK(cuDeviceGet(&dev, 4) == CUDA_ERROR_INVALID_DEVICE);
	OK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
	CHECK(!strcmp(s, "CUDA_ERROR_OUT_OF_MEMORY"));
	OK(cuGetErrorString(CUDA_ERROR_NOT_SUPPORTED, &s));
	CHECK(!strcmp(s, "operation not supported"));
	/* Contexts: create pushes, pop returns it, destroy unbinds. */
	CHECK(cuCtxGetDevice(&dev) == CUDA_ERROR_INVALID_CONTEXT);
	OK(cuCtxCreate_v2(&c1, 0, 2));
	OK(cuCtxGetDevice(&dev));
	CHECK(dev == 2);
	OK(cuCtxCreate_v2(&c2, 0, 1));
	OK(cuCtxPopCurrent_v2(&cur));
	CHECK(cur == c2);
	OK(cuCtxGetCurrent(&cur));
	CHECK(cur == c1);
	OK(cuCtxPushCurrent_v2(c2));
	OK(cuCtxDestroy_v2(c2));
	OK(cuCtxGetCurrent(&cur));
	CHECK(cur == c1);
	OK(cuCtxDestroy_v2(c1));
	CHECK(cuCtxSynchronize() == CUDA_ERROR_INVALID_CONTEXT);
}

/* argv: the physical GPUs CUDA should see, in order, then "/" and NVML's. */
static void test_visible(int argc, char **argv)
{
	int i = 0, n = 0;
	unsigned int nn = 0;
	CUuuid u;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], want[64];
	nvmlDevice_t d;
	CUresult r = cuInit(0);

	for (; i < argc && strcmp(argv[i], "/"); i++) {
		OK(r);
		OK(cuDeviceGetCount(&n));
		OK(cuDeviceGetUuid_v2(&u, i));
		CHECK(u.bytes[15] == atoi(argv[i]));
	}
	if (i == 0)
		CHECK(r == CUDA_ERROR_NO_DEVICE);
	else
		CHECK(n == i);
	NOK(nvmlInit_v2());
	NOK(nvmlDeviceGetCount_v2(&nn));
	CHECK((int)nn == argc - i - 1);
	for (unsigned j = 0; j < nn; j++) {
		NOK(nvmlDeviceGetHandleByIndex_v2(j, &d));
		NOK(nvmlDeviceGetUUID(d, uuid, sizeof(uuid)));
		snprintf(want, sizeof(want), "GPU-c6a1d000-0000-4000-8000-%012d",
			 atoi(argv[i + 1 + j]));
		CHECK(!strcmp(uuid, want));
	}
}

static void test_memory(void)
{
	CUdeviceptr a, b, m, p;
	size_t free_b, total, pitch;
	CUcontext ctx;
	char buf[16] = "cgpu-sim", back[16] = "";
	unsigned long long held;
	unsigned pid;

	use_device(1);
	OK(cuMemGetInfo_v2(&free_b, &total));
	CHECK(total == TOTAL && free_b == TOTAL);
	OK(cuMemAlloc_v2(&a, 100 * MiB + 1));
	OK(cuMemGetInfo_v2(&free_b, &total));
	CHECK(free_b + uvm_tables(1) == TOTAL - 102 * MiB);	/* whole 2 MiB pages */
	CHECK(nvml_used(1) == 102 * MiB && nvml_used(0) == 0);
	CHECK(nvml_procs(1, &pid, &held) == 1 && pid == (unsigned)getpid() && held == 102 * MiB);
	CHECK(nvml_procs(0, &pid, &held) == 0);
	OK(cuMemcpyHtoD_v2(a, buf, sizeof(buf)));
	OK(cuMemsetD8_v2(a + 0, 'C', 1));
	OK(cuMemcpyDtoH_v2(back, a, sizeof(back)));
	CHECK(!strcmp(back, "Cgpu-sim"));
	OK(cuMemAllocPitch_v2(&p, &pitch, 1000, 10, 4));
	CHECK(pitch == 1024);
	OK(cuMemAllocManaged(&m, 10 * MiB, CU_MEM_ATTACH_GLOBAL));
	CHECK(cuMemAlloc_v2(&b, TOTAL) == CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(cuMemAlloc_v2(&b, 0) == CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFree_v2(a));
	OK(cuMemFree_v2(p));
	OK(cuMemFree_v2(m));
	CHECK(cuMemFree_v2(a) == CUDA_ERROR_INVALID_VALUE);
	CHECK(nvml_used(1) == 0);
	/* Up to 1 MiB is packed into shared 2 MiB pages (cutil/memsize.h);
	 * more takes whole pages alone. */
	OK(cuMemAlloc_v2(&a, 1));
	OK(cuMemAlloc_v2(&b, MiB));
	OK(cuMemAlloc_v2(&p, 2 * MiB + 1));
	CHECK(a >> 21 == b >> 21 && nvml_used(1) == 6 * MiB);
	OK(cuMemAlloc_v2(&m, MiB));
	CHECK(m >> 21 != a >> 21 && nvml_used(1) == 8 * MiB);
	OK(cuMemFree_v2(a));
	OK(cuMemFree_v2(p));
	CHECK(nvml_used(1) == 4 * MiB);
	OK(cuMemFree_v2(b));
	OK(cuMemFree_v2(m));
	CHECK(nvml_used(1) == 0);
	/* Destroying a context, or resetting a primary one, frees its memory. */
	OK(cuCtxCreate_v2(&ctx, 0, 1));
	OK(cuMemAlloc_v2(&b, 64 * MiB));
	CHECK(nvml_used(1) == 64 * MiB);
	OK(cuCtxDestroy_v2(ctx));
	CHECK(nvml_used(1) == 0);
	use_device(1);
	OK(cuMemAlloc_v2(&b, 64 * MiB));
	OK(cuDevicePrimaryCtxReset_v2(1));
	CHECK(nvml_used(1) == 0);
}

static void test_pools(void)
{
	CUmemoryPool def, cur, mine;
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUdeviceptr a, b, c;
	cuuint64_t v, keep = 64 * MiB;

	use_device(0);
	OK(cuDeviceGetDefaultMemPool(&def, 0));
	OK(cuDeviceGetMemPool(&cur, 0));
	CHECK(def == cur);
	OK(cuMemAllocAsync(&a, 3 * MiB, NULL));
	OK(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
	CHECK(v == 4 * MiB);
	OK(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
	CHECK(v == 3 * MiB);
	CHECK(nvml_used(0) == 4 * MiB);
	/* A freed chunk is reused for a smaller request: no new reservation. */
	OK(cuMemFreeAsync(a, NULL));
	OK(cuMemAllocAsync(&b, 1 * MiB, NULL));
	CHECK(b == a);
	OK(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
	CHECK(v == 4 * MiB);
	OK(cuMemFreeAsync(b, NULL));
	/* Synchronising releases what is above the threshold (0). */
	OK(cuStreamSynchronize(NULL));
	OK(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
	CHECK(v == 0 && nvml_used(0) == 0);
	/* A created pool with a threshold keeps memory over a sync until trimmed. */
	OK(cuMemPoolCreate(&mine, &props));
	OK(cuMemPoolSetAttribute(mine, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
	OK(cuMemAllocFromPoolAsync(&c, 10 * MiB, mine, NULL));
	OK(cuMemFreeAsync(c, NULL));
	OK(cuCtxSynchronize());
	CHECK(nvml_used(0) == 10 * MiB);
	OK(cuMemPoolTrimTo(mine, 0));
	CHECK(nvml_used(0) == 0);
	/* Destroying a pool with an allocation out frees it on the last free. */
	OK(cuDeviceSetMemPool(0, mine));
	OK(cuMemAllocAsync(&c, 2 * MiB, NULL));
	OK(cuMemPoolDestroy(mine));
	OK(cuDeviceGetMemPool(&cur, 0));
	CHECK(cur == def);
	CHECK(nvml_used(0) == 2 * MiB);
	OK(cuMemFree_v2(c));
	CHECK(nvml_used(0) == 0);
	CHECK(cuMemPoolDestroy(def) == CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemAllocFromPoolAsync(&c, MiB, mine, NULL) == CUDA_ERROR_INVALID_VALUE);
}

static cuuint64_t graph_mem(CUgraphMem_attribute a)
{
	cuuint64_t v = ~0ULL;

	OK(cuDeviceGetGraphMemAttribute(0, a, &v));
	return v;
}

/*
 * Graph memory: an allocation node has its address at once and its pages at
 * upload or first launch; they stay across launches, go to the device's
 * graph pool when the executable graph goes and back to the device on trim.
 */
/*
 * cuGraphAddNode and its _v2 add memory nodes as their own entry points do
 * (the address comes back in alloc.dptr); the _v2 takes default edges only
 * (all zero, or no edge data); node kinds not simulated are not supported.
 */
static void graphmem_add_node(void)
{
	CUgraphNodeParams np = {
		.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC,
		.alloc = { .poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
					  .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } },
			   .bytesize = 3 * MiB },
	};
	CUgraphNodeParams fp = { .type = CU_GRAPH_NODE_TYPE_MEM_FREE };
	CUgraphEdgeData edge = { 0 };
	CUdeviceptr d[2];
	CUgraph g;
	CUgraphNode a[2], f[2];
	CUgraphExec e;

	OK(cuGraphCreate(&g, 0));
	CHECK(cuGraphAddNode(&a[0], g, NULL, 0, NULL) == CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphAddNode(&a[0], g, NULL, 0, &np));
	d[0] = np.alloc.dptr;
	OK(cuGraphAddNode_v2(&a[1], g, &a[0], &edge, 1, &np));
	d[1] = np.alloc.dptr;
	CHECK(d[0] && d[1] && d[0] != d[1]);
	fp.free.dptr = d[0];
	edge.type = 1;	/* programmatic */
	CHECK(cuGraphAddNode_v2(&f[0], g, &a[1], &edge, 1, &fp) == CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphAddNode_v2(&f[0], g, &a[1], NULL, 1, &fp));
	fp.free.dptr = d[1];
	OK(cuGraphAddNode(&f[1], g, &f[0], 1, &fp));
	np.type = CU_GRAPH_NODE_TYPE_EMPTY;
	CHECK(cuGraphAddNode(&f[1], g, NULL, 0, &np) == CUDA_ERROR_NOT_SUPPORTED);
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	OK(cuGraphLaunch(e, NULL));
	OK(cuGraphLaunch(e, NULL));
	CHECK(nvml_used(0) == 8 * MiB);
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	OK(cuDeviceGraphMemTrim(0));
	CHECK(nvml_used(0) == 0);
}

static void test_graphmem(void)
{
	CUDA_MEM_ALLOC_NODE_PARAMS ap = {
		.poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
			       .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } },
		.bytesize = 3 * MiB,
	};
	CUgraph g, g2;
	CUgraphNode a, f, a2;
	CUgraphExec e, e2;
	CUdeviceptr keep;
	cuuint64_t zero = 0, five = 5;

	use_device(0);
	OK(cuGraphCreate(&g, 0));
	OK(cuGraphAddMemAllocNode(&a, g, NULL, 0, &ap));
	CHECK(ap.dptr != 0);
	OK(cuGraphAddMemFreeNode(&f, g, &a, 1, ap.dptr));
	CHECK(cuGraphAddMemFreeNode(&f, g, &a, 1, ap.dptr) == CUDA_ERROR_INVALID_VALUE);
	CHECK(cuGraphAddMemFreeNode(&f, g, NULL, 0, 12345) == CUDA_ERROR_INVALID_VALUE);
	CHECK(nvml_used(0) == 0);
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	/* One executable graph at a time for a graph with memory nodes. */
	CHECK(cuGraphInstantiateWithFlags(&e2, g, 0) == CUDA_ERROR_INVALID_VALUE);
	CHECK(nvml_used(0) == 0 && graph_mem(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 0);
	OK(cuGraphUpload(e, NULL));
	CHECK(nvml_used(0) == 4 * MiB);
	OK(cuGraphLaunch(e, NULL));
	OK(cuGraphLaunch(e, NULL));
	CHECK(nvml_used(0) == 4 * MiB);
	CHECK(graph_mem(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == 4 * MiB);
	CHECK(graph_mem(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 4 * MiB);
	/* Trim leaves what an executable graph maps while it is queued. */
	OK(cuStreamSynchronize(NULL));
	OK(cuDeviceGraphMemTrim(0));
	CHECK(nvml_used(0) == 0 && graph_mem(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH) == 4 * MiB);
	OK(cuGraphLaunch(e, NULL));
	CHECK(nvml_used(0) == 4 * MiB);
	/* Destroyed, its pages stay in the pool for another graph to map. */
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	CHECK(nvml_used(0) == 4 * MiB);
	CHECK(graph_mem(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == 0);
	CHECK(graph_mem(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 4 * MiB);
	/* An allocation that outlives its graph: relaunch refused while it
	 * lives, kept after the graphs go, freed by cuMemFreeAsync. */
	ap.bytesize = 6 * MiB;
	OK(cuGraphCreate(&g2, 0));
	OK(cuGraphAddMemAllocNode(&a2, g2, NULL, 0, &ap));
	keep = ap.dptr;
	OK(cuGraphInstantiateWithFlags(&e2, g2, 0));
	OK(cuGraphLaunch(e2, NULL));
	CHECK(nvml_used(0) == 6 * MiB);
	CHECK(cuGraphLaunch(e2, NULL) == CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphExecDestroy(e2));
	OK(cuGraphDestroy(g2));
	OK(cuDeviceGraphMemTrim(0));
	CHECK(nvml_used(0) == 6 * MiB);
	OK(cuMemFreeAsync(keep, NULL));
	CHECK(cuMemFreeAsync(keep, NULL) == CUDA_ERROR_INVALID_VALUE);
	CHECK(graph_mem(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 6 * MiB);
	OK(cuDeviceGraphMemTrim(0));
	CHECK(nvml_used(0) == 0);
	/* Auto free: each launch frees the last one's allocation. */
	OK(cuGraphCreate(&g2, 0));
	OK(cuGraphAddMemAllocNode(&a2, g2, NULL, 0, &ap));
	OK(cuGraphInstantiateWithFlags(&e2, g2,
				       CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
	OK(cuGraphLaunch(e2, NULL));
	OK(cuGraphLaunch(e2, NULL));
	CHECK(nvml_used(0) == 6 * MiB);
	OK(cuMemFree_v2(ap.dptr));
	/* Only the high watermarks are written, and only to 0. */
	OK(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero));
	CHECK(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &five) ==
	      CUDA_ERROR_INVALID_VALUE);
	CHECK(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &zero) ==
	      CUDA_ERROR_INVALID_VALUE);
	CHECK(graph_mem(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) == 0);
	/* A primary context's reset frees its device's graph memory. */
	OK(cuDevicePrimaryCtxReset_v2(0));
	CHECK(nvml_used(0) == 0);
	OK(cuGraphExecDestroy(e2));
	OK(cuGraphDestroy(g2));
	/* Upload refused past the device's memory: nothing taken. */
	use_device(0);
	ap.bytesize = TOTAL + 1;
	OK(cuGraphCreate(&g2, 0));
	OK(cuGraphAddMemAllocNode(&a2, g2, NULL, 0, &ap));
	OK(cuGraphInstantiateWithFlags(&e2, g2, 0));
	CHECK(cuGraphUpload(e2, NULL) == CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(cuGraphLaunch(e2, NULL) == CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(nvml_used(0) == 0);
	OK(cuGraphExecDestroy(e2));
	OK(cuGraphDestroy(g2));
	graphmem_add_node();
}

static void test_vmm(void)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, 2 } };
	CUmemAccessDesc acc = { prop.location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	size_t g;

	use_device(2);
	OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CHECK(g == 2 * MiB);
	CHECK(cuMemCreate(&h, MiB, &prop, 0) == CUDA_ERROR_INVALID_VALUE);
	OK(cuMemCreate(&h, 8 * MiB, &prop, 0));
	CHECK(nvml_used(2) == 8 * MiB);
	OK(cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0));
	CHECK(va % (2 * MiB) == 0);
	OK(cuMemMap(va, 8 * MiB, 0, h, 0));
	OK(cuMemSetAccess(va, 8 * MiB, &acc, 1));
	((volatile char *)(uintptr_t)va)[8 * MiB - 1] = 7;
	/* Released while mapped: the memory stays until unmapped. */
	OK(cuMemRelease(h));
	CHECK(nvml_used(2) == 8 * MiB);
	CHECK(((volatile char *)(uintptr_t)va)[8 * MiB - 1] == 7);
	OK(cuMemUnmap(va, 8 * MiB));
	CHECK(nvml_used(2) == 0);
	OK(cuMemAddressFree(va, 8 * MiB));
	CHECK(cuMemCreate(&h, 16ULL << 30, &prop, 0) == CUDA_ERROR_OUT_OF_MEMORY);
}

static void test_arrays(void)
{
	CUDA_ARRAY_DESCRIPTOR d = { 1024, 1024, CU_AD_FORMAT_FLOAT, 4 };
	CUDA_ARRAY3D_DESCRIPTOR d3 = { 256, 256, 64, CU_AD_FORMAT_HALF, 2, 0 };
	CUDA_ARRAY3D_DESCRIPTOR dm = { 1024, 1024, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0 };
	CUarray a, b;
	CUmipmappedArray m;

	use_device(3);
	OK(cuArrayCreate_v2(&a, &d));
	CHECK(nvml_used(3) == 16 * MiB);
	OK(cuArray3DCreate_v2(&b, &d3));
	CHECK(nvml_used(3) == 32 * MiB);
	/* 1 MiB + 256 KiB + ... rounds up to one page. */
	OK(cuMipmappedArrayCreate(&m, &dm, 11));
	CHECK(nvml_used(3) == 34 * MiB);
	CHECK(cuArrayDestroy((CUarray)m) == CUDA_ERROR_INVALID_HANDLE);
	OK(cuMipmappedArrayDestroy(m));
	OK(cuArrayDestroy(a));
	OK(cuArrayDestroy(b));
	CHECK(nvml_used(3) == 0);
	d.Format = (CUarray_format)0x77;
	CHECK(cuArrayCreate_v2(&a, &d) == CUDA_ERROR_INVALID_VALUE);
}

static CUfunction sleep_fn(void)
{
	CUmodule mod;
	CUfunction f = NULL;

	OK(cuModuleLoadData(&mod, "any image"));
	CHECK(cuModuleGetFunction(&f, mod, "matmul") == CUDA_ERROR_NOT_FOUND);
	OK(cuModuleGetFunction(&f, mod, "sleep_us"));
	return f;
}

static void launch_us(CUfunction f, CUstream s, unsigned long long us)
{
	void *params[] = { &us };

	OK(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, s, params, NULL));
}

/*
 * The timeline's figures are exact only for work queued while the engine is busy:
 * a launch that comes after the engine went idle starts late by however long the
 * host took, which under QEMU or a loaded CI machine is anything. So a test first
 * queues BLOCK_MS of work and checks its exact figures when every later launch came
 * before that work ended (the wall clock says whether it did); when the host was
 * slower than that, only the lower bounds hold and only they are checked.
 */
#define BLOCK_MS 250

static double block(CUfunction f, CUstream s)
{
	double end = now_ms() + BLOCK_MS;

	launch_us(f, s, BLOCK_MS * 1000ULL);
	return end;
}

static int queued_in_time(double end)
{
	if (now_ms() < end)
		return 1;
	fprintf(stderr, "sim-test: the host took over %d ms to queue; exact timeline figures not checked\n",
		BLOCK_MS);
	return 0;
}

/* cuLaunchKernelEx, cooperative launches and graphs queue as cuLaunchKernel does. */
static void timeline_launch_kinds(CUfunction f, CUstream s)
{
	unsigned long long us = 10000;
	void *params[] = { &us };
	CUlaunchAttribute attr = { .id = CU_LAUNCH_ATTRIBUTE_PRIORITY };
	CUlaunchConfig cfg = { 1, 1, 1, 128, 1, 1, 0, s, &attr, 1 };
	CUDA_KERNEL_NODE_PARAMS_v2 kp = { .func = f, .gridDimX = 1, .gridDimY = 1,
					  .gridDimZ = 1, .blockDimX = 128, .blockDimY = 1,
					  .blockDimZ = 1, .kernelParams = params };
	CUgraphNodeParams np = { .type = CU_GRAPH_NODE_TYPE_KERNEL };
	CUgraphEdgeData edges[2] = { 0 };
	CUgraph g, other;
	CUgraphNode n[3], foreign;
	CUgraphExec e;
	CUevent e0, e1;
	int coop = 0, exact;
	double end;
	float ms;

	OK(cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 0));
	CHECK(coop == 1);
	OK(cuEventCreate(&e0, 0));
	OK(cuEventCreate(&e1, 0));
	OK(cuStreamSynchronize(s));
	end = block(f, s);
	OK(cuEventRecord(e0, s));
	OK(cuLaunchKernelEx(&cfg, f, params, NULL));
	/* 40 SMs x 8 blocks of 128 threads fit at once; one block more does not. */
	OK(cuLaunchCooperativeKernel(f, 320, 1, 1, 128, 1, 1, 0, s, params));
	CHECK(cuLaunchCooperativeKernel(f, 321, 1, 1, 128, 1, 1, 0, s, params) ==
	      CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
	attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	attr.value.cooperative = 1;
	cfg.gridDimX = 321;
	CHECK(cuLaunchKernelEx(&cfg, f, params, NULL) ==
	      CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
	attr.id = (CUlaunchAttributeID)99;
	CHECK(cuLaunchKernelEx(&cfg, f, params, NULL) == CUDA_ERROR_INVALID_VALUE);

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphCreate(&other, 0));
	OK(cuGraphAddKernelNode_v2(&foreign, other, NULL, 0, &kp));
	OK(cuGraphAddKernelNode_v2(&n[0], g, NULL, 0, &kp));
	OK(cuGraphAddKernelNode_v2(&n[1], g, &n[0], 1, &kp));
	CHECK(cuGraphAddKernelNode_v2(&n[2], g, &foreign, 1, &kp) == CUDA_ERROR_INVALID_VALUE);
	kp.extra = params;
	CHECK(cuGraphAddKernelNode_v2(&n[2], g, NULL, 0, &kp) == CUDA_ERROR_INVALID_VALUE);
	kp.extra = NULL;
	us = 20000;	/* parameters are copied when the node is added */
	np.kernel = kp;
	OK(cuGraphAddNode_v2(&n[2], g, n, edges, 2, &np));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	OK(cuGraphDestroy(g));
	OK(cuGraphDestroy(other));
	OK(cuGraphLaunch(e, s));
	OK(cuGraphLaunch(e, s));
	OK(cuGraphExecDestroy(e));
	OK(cuEventRecord(e1, s));
	exact = queued_in_time(end);
	OK(cuEventSynchronize(e1));
	OK(cuEventElapsedTime(&ms, e0, e1));
	/* 10 (Ex) + 10 (cooperative) + 2 x (10 + 10 + 20) (graph) ms. */
	CHECK(ms >= 99 && (ms < 101 || !exact));
}

/*
 * Stream-ordered copies and memsets move the bytes (from an allocation's base, as
 * the synchronous ones); misaligned memsets and ranges past the allocation fail.
 */
static void memory_async(CUstream s)
{
	unsigned int words[4] = { 0 };
	unsigned short half[2] = { 0 };
	CUdeviceptr p, q;

	OK(cuMemAlloc_v2(&p, 4096));
	OK(cuMemAlloc_v2(&q, 4096));
	OK(cuMemsetD32Async(p, 0x01020304u, 1024, s));
	OK(cuMemcpyDtoHAsync_v2(words, p, sizeof(words), s));
	CHECK(words[0] == 0x01020304u && words[3] == 0x01020304u);
	CHECK(cuMemsetD32Async(p + 2, 0, 1, s) == CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemsetD16Async(p + 1, 0, 1, s) == CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemsetD8Async(p, 0, 4097, s) == CUDA_ERROR_INVALID_VALUE);
	OK(cuMemsetD16Async(p, 0xbeef, 2, s));
	OK(cuMemcpyDtoDAsync_v2(q, p, 4, s));
	OK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)half, q, sizeof(half), s));
	CHECK(half[0] == 0xbeef && half[1] == 0xbeef);
	OK(cuMemsetD8Async(q, 7, 1, s));
	words[0] = 42;
	OK(cuMemcpyHtoDAsync_v2(p, words, 4, s));
	OK(cuMemcpyDtoHAsync_v2(half, q, 1, s));
	OK(cuMemcpyDtoHAsync_v2(words + 1, p, 4, s));
	CHECK(((unsigned char *)half)[0] == 7 && words[1] == 42);
	CHECK(cuMemcpyHtoDAsync_v2(p, words, 4097, s) == CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemcpyDtoHAsync_v2(words, p, 4, (CUstream)words) == CUDA_ERROR_INVALID_HANDLE);
	OK(cuStreamSynchronize(s));
	OK(cuMemFree_v2(p));
	OK(cuMemFree_v2(q));
}

static void test_timeline(void)
{
	CUfunction f;
	CUstream s1, s2;
	CUevent e0, e1, e2;
	float ms;
	double t0, end;
	pid_t kids[2];
	int st, exact;

	use_device(0);
	f = sleep_fn();
	OK(cuStreamCreate(&s1, 0));
	OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	OK(cuEventCreate(&e0, 0));
	OK(cuEventCreate(&e1, 0));
	OK(cuEventCreate(&e2, 0));
	t0 = now_ms();
	end = block(f, s1);
	OK(cuEventRecord(e0, s1));
	for (int i = 0; i < 5; i++)
		launch_us(f, s1, 20000);
	OK(cuEventRecord(e1, s1));
	/* Launches return before their work ends. */
	CHECK(cuStreamQuery(s1) == CUDA_ERROR_NOT_READY);
	CHECK(cuEventElapsedTime(&ms, e0, e1) == CUDA_ERROR_NOT_READY);
	/* s2's kernel queues behind s1's on the one engine. */
	launch_us(f, s2, 10000);
	OK(cuEventRecord(e2, s2));
	exact = queued_in_time(end);
	OK(cuStreamSynchronize(s2));
	CHECK(now_ms() - t0 >= BLOCK_MS + 110);
	OK(cuEventElapsedTime(&ms, e0, e2));
	CHECK(ms >= 109 && (ms < 111 || !exact));
	OK(cuEventSynchronize(e1));
	OK(cuEventElapsedTime(&ms, e0, e1));
	CHECK(ms >= 99 && (ms < 101 || !exact));
	OK(cuStreamQuery(s1));
	/* Two processes' work serialises on the shared engine. */
	t0 = now_ms();
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			use_device(0);
			f = sleep_fn();
			for (int i = 0; i < 10; i++)
				launch_us(f, NULL, 10000);
			OK(cuCtxSynchronize());
			_exit(failures != 0);
		}
	}
	for (int k = 0; k < 2; k++) {
		waitpid(kids[k], &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	/* The upper bound is the host's (forks, contexts), so only the lower one is checked. */
	CHECK(now_ms() - t0 >= 200);
	timeline_launch_kinds(f, s1);
	memory_async(s2);
}

/* A process killed while holding memory: the next user reaps it. */
static void test_reap(void)
{
	int fds[2];
	char c;
	pid_t kid;

	CHECK(pipe(fds) == 0);
	kid = fork();
	if (kid == 0) {
		CUdeviceptr p;

		use_device(1);
		OK(cuMemAlloc_v2(&p, 1000 * MiB));
		CHECK(write(fds[1], "x", 1) == 1);
		pause();
		_exit(0);
	}
	CHECK(read(fds[0], &c, 1) == 1);
	CHECK(nvml_used(1) == 1000 * MiB);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	CHECK(nvml_used(1) == 0);
}

/* A fork child has no driver state until it calls cuInit itself, and its
 * memory is its own. */
static void test_fork(void)
{
	CUdeviceptr p;
	pid_t kid;
	int st;

	use_device(0);
	OK(cuMemAlloc_v2(&p, 10 * MiB));
	kid = fork();
	if (kid == 0) {
		CUdeviceptr q;

		CHECK(cuMemAlloc_v2(&q, MiB) == CUDA_ERROR_NOT_INITIALIZED);
		use_device(0);
		OK(cuMemAlloc_v2(&q, 20 * MiB));
		CHECK(nvml_used(0) == 30 * MiB);
		_exit(failures != 0);
	}
	waitpid(kid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(nvml_used(0) == 10 * MiB);
	OK(cuMemFree_v2(p));
}

/* Allocation churn, run by the suite in two PID namespaces at once: both
 * main threads are TID 1 there, which must not confuse the state's lock. */
static void test_churn(void)
{
	CUdeviceptr p;

	use_device(0);
	for (int i = 0; i < 3000; i++) {
		OK(cuMemAlloc_v2(&p, 2 * MiB));
		OK(cuMemFree_v2(p));
	}
}

static void test_nvml(void)
{
	nvmlDevice_t d, d2;
	nvmlMemory_v2_t m = { .version = 0 };
	nvmlPciInfo_t pci;
	char buf[8];
	unsigned idx;

	CHECK(nvmlDeviceGetCount_v2(&idx) == NVML_ERROR_UNINITIALIZED);
	NOK(nvmlInit_v2());
	NOK(nvmlDeviceGetHandleByIndex_v2(2, &d));
	CHECK(nvmlDeviceGetMemoryInfo_v2(d, &m) == NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	m.version = nvmlMemory_v2;
	NOK(nvmlDeviceGetMemoryInfo_v2(d, &m));
	CHECK(m.total == TOTAL && m.free == TOTAL);
	NOK(nvmlDeviceGetPciInfo_v3(d, &pci));
	CHECK(!strcmp(pci.busId, "00000000:12:00.0"));
	NOK(nvmlDeviceGetHandleByPciBusId_v2("0000:12:00.0", &d2));
	CHECK(d2 == d);
	NOK(nvmlDeviceGetHandleByUUID("GPU-c6a1d000-0000-4000-8000-000000000002", &d2));
	CHECK(d2 == d);
	NOK(nvmlDeviceGetIndex(d, &idx));
	CHECK(idx == 2);
	CHECK(nvmlDeviceGetName(d, buf, sizeof(buf)) == NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK(nvmlDeviceGetHandleByUUID("GPU-nope", &d2) == NVML_ERROR_NOT_FOUND);
	CHECK(!strcmp(nvmlErrorString(NVML_ERROR_NOT_FOUND), "Not Found"));
	NOK(nvmlShutdown());
}

/*
 * Stream capture: a kernel launch, cuMemAllocAsync, cuMemFreeAsync and
 * cuMemAllocFromPoolAsync on a capturing stream become nodes of the graph
 * the capture ends with, in that order, each after the last; allocations
 * get an address and no memory until the graph is launched. The NULL stream
 * is never captured; synchronizing or querying a capturing stream is refused
 * and invalidates the capture, as is work the simulator has no node for.
 */
static void test_capture(void)
{
	static const CUgraphNodeType want[] = {
		CU_GRAPH_NODE_TYPE_MEM_ALLOC, CU_GRAPH_NODE_TYPE_KERNEL,
		CU_GRAPH_NODE_TYPE_MEM_FREE, CU_GRAPH_NODE_TYPE_MEM_ALLOC
	};
	CUDA_MEM_ALLOC_NODE_PARAMS ap;
	CUstreamCaptureStatus st;
	CUgraphNode nodes[5], kernel;
	CUgraphNodeType t;
	const CUgraphNode *deps;
	size_t n, ndeps;
	cuuint64_t id;
	CUmemoryPool pool;
	CUdeviceptr d, d2;
	CUstream s;
	CUevent ev;
	CUgraph g, g2;
	CUgraphExec e;
	CUfunction f;

	use_device(0);
	f = sleep_fn();
	OK(cuStreamCreate(&s, 0));
	OK(cuEventCreate(&ev, 0));
	OK(cuDeviceGetDefaultMemPool(&pool, 0));
	CHECK(cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL) ==
	      CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CHECK(cuStreamBeginCapture_v2(s, 3) == CUDA_ERROR_INVALID_VALUE);
	CHECK(cuStreamEndCapture(s, &g) == CUDA_ERROR_ILLEGAL_STATE);
	OK(cuStreamIsCapturing(s, &st));
	CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
	OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL) ==
	      CUDA_ERROR_ILLEGAL_STATE);
	OK(cuStreamIsCapturing(s, &st));
	CHECK(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	OK(cuMemAllocAsync(&d, 3 * MiB, s));
	launch_us(f, s, 1000);
	OK(cuStreamGetCaptureInfo_v2(s, &st, &id, &g, &deps, &ndeps));
	CHECK(st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id && ndeps == 1);
	kernel = ndeps ? deps[0] : NULL;
	OK(cuMemFreeAsync(d, s));
	OK(cuMemAllocFromPoolAsync(&d2, 5 * MiB, pool, s));
	CHECK(d && d2 && nvml_used(0) == 0);
	OK(cuStreamEndCapture(s, &g2));
	CHECK(g2 == g);
	OK(cuStreamIsCapturing(s, &st));
	CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
	OK(cuGraphGetNodes(g, NULL, &n));
	CHECK(n == 4);
	n = 5;
	OK(cuGraphGetNodes(g, nodes, &n));
	CHECK(n == 4 && nodes[4] == NULL && nodes[1] == kernel);
	for (size_t i = 0; i < 4; i++) {
		OK(cuGraphNodeGetType(nodes[i], &t));
		CHECK(t == want[i]);
	}
	OK(cuGraphMemAllocNodeGetParams(nodes[0], &ap));
	CHECK(ap.bytesize == 3 * MiB && ap.dptr == d &&
	      ap.poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	      ap.poolProps.location.id == 0);
	OK(cuGraphMemAllocNodeGetParams(nodes[3], &ap));
	CHECK(ap.bytesize == 5 * MiB && ap.dptr == d2);
	CHECK(cuGraphMemAllocNodeGetParams(nodes[1], &ap) == CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	CHECK(nvml_used(0) == 0);
	OK(cuGraphLaunch(e, s));
	CHECK(nvml_used(0) == 4 * MiB + 6 * MiB);
	OK(cuStreamSynchronize(s));
	/* Not captured any more: d2 outlives the graph until freed. */
	OK(cuMemFreeAsync(d2, s));
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	OK(cuDeviceGraphMemTrim(0));
	CHECK(nvml_used(0) == 0);
	/* Refused: the capture ends without a graph. */
	OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	OK(cuMemAllocAsync(&d, MiB, s));
	CHECK(cuStreamSynchronize(s) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CHECK(cuMemAllocAsync(&d, MiB, s) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	OK(cuStreamIsCapturing(s, &st));
	CHECK(st == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	g = (CUgraph)1;
	CHECK(cuStreamEndCapture(s, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED && !g);
	OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	CHECK(cuStreamQuery(s) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CHECK(cuStreamEndCapture(s, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CHECK(cuEventRecord(ev, s) == CUDA_ERROR_NOT_SUPPORTED);
	CHECK(cuStreamEndCapture(s, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	/* The stream works as before; a capture left open goes with it. */
	launch_us(f, s, 10);
	OK(cuStreamSynchronize(s));
	OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuStreamDestroy_v2(s));
	OK(cuEventDestroy_v2(ev));
	CHECK(nvml_used(0) == 0);
}

/*
 * Reads the simulator's exported names on stdin and checks that its
 * cuGetProcAddress_v2 resolves every base name like the real libcuda at
 * argv[0] does, for CUDA versions 2.0 to 12.9 and each stream mode: the same
 * variant where the simulator has it, nothing where it does not.
 */
static void test_procaddr(int argc, char **argv)
{
	typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t,
				  CUdriverProcAddressQueryResult *);
	void *real = argc > 0 ? dlopen(argv[0], RTLD_NOW | RTLD_LOCAL) : NULL;
	void *sim = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	gpa_t rg, sg;
	char base[128], exports[8192] = " ";
	int compared = 0;

	CHECK(real && sim);
	if (!real || !sim)
		return;
	rg = (gpa_t)dlsym(real, "cuGetProcAddress_v2");
	sg = (gpa_t)dlsym(sim, "cuGetProcAddress_v2");
	while (scanf("%127s", base) == 1) {
		strcat(exports, base);
		strcat(exports, " ");
	}
	for (char *tok = strtok(strdup(exports), " "); tok; tok = strtok(NULL, " ")) {
		char *suffix;

		snprintf(base, sizeof(base), "%s", tok);
		while ((suffix = strrchr(base, '_')) &&
		       (!strcmp(suffix, "_ptsz") || !strcmp(suffix, "_ptds") ||
			(suffix[1] == 'v' && suffix[2] >= '0' && suffix[2] <= '9')))
			*suffix = 0;
		for (int ver = 2000; ver <= 12090; ver += 10) {
			for (cuuint64_t fl = 0; fl <= 2; fl++) {
				void *rp = NULL, *sp = NULL;
				CUdriverProcAddressQueryResult rs, ss;
				Dl_info ri, si;
				char want[160];

				CHECK(rg(base, &rp, ver, fl, &rs) == CUDA_SUCCESS);
				CHECK(sg(base, &sp, ver, fl, &ss) == CUDA_SUCCESS);
				if (!rp || !dladdr(rp, &ri) || !ri.dli_sname) {
					CHECK(!sp);
					continue;
				}
				snprintf(want, sizeof(want), " %s ", ri.dli_sname);
				if (!strstr(exports, want)) {
					if (sp) {
						fprintf(stderr, "%s v%d f%llu: real %s, sim has it not\n",
							base, ver, (unsigned long long)fl, ri.dli_sname);
						failures++;
					}
					continue;
				}
				/* By address: a per-thread alias shares its code. */
				compared++;
				if (sp != dlsym(sim, ri.dli_sname)) {
					fprintf(stderr, "%s v%d f%llu: real %s, sim %s\n", base,
						ver, (unsigned long long)fl, ri.dli_sname,
						sp && dladdr(sp, &si) ? si.dli_sname : "none");
					failures++;
				}
			}
		}
	}
	CHECK(compared > 1000);
	printf("procaddr: %d resolutions compared\n", compared);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} groups[] = {
		{ "basics", test_basics },   { "memory", test_memory },
		{ "pools", test_pools },     { "vmm", test_vmm },
		{ "arrays", test_arrays },   { "timeline", test_timeline },
		{ "reap", test_reap },       { "fork", test_fork },
		{ "nvml", test_nvml },       { "churn", test_churn },
		{ "graphmem", test_graphmem }, { "capture", test_capture },
	};

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "visible"))
		test_visible(argc - 2, argv + 2);
	else if (!strcmp(argv[1], "procaddr"))
		test_procaddr(argc - 2, argv + 2);
	else {
		size_t i;

		for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
			if (!strcmp(groups[i].name, argv[1]))
				break;
		if (i == sizeof(groups) / sizeof(groups[0]))
			return 2;
		groups[i].fn();
	}
	printf("sim-test %s: %s\n", argv[1], failures ? "FAIL" : "ok");
	return failures != 0;
}
