// SPDX-License-Identifier: MIT
/*
 * cudaprobe: uses the CUDA driver API and NVML the way an application does
 * and prints what it saw as key=value lines, for scripts and demos. Works on
 * the simulated GPU and on a real one, with or without libcgpu preloaded.
 *
 *   cudaprobe [-d DEV] alloc-loop [-c CHUNK_MIB] [-b CHUNK_BYTES] [-k]
 *                                                       cuMemAlloc until refused
 *   cudaprobe [-d DEV] vmm-loop [-c CHUNK_MIB] [-k]     cuMemCreate + map, the handle
 *                                                       released while mapped, until refused
 *   cudaprobe [-d DEV] pool-loop [-c CHUNK_MIB] [-k]    a new pool per allocation
 *                                                       (cuMemAllocFromPoolAsync), until refused
 *   cudaprobe [-d DEV] alloc BYTES [-k]                 one cuMemAlloc
 *   cudaprobe [-d DEV] meminfo                          cuMemGetInfo + NVML
 *   cudaprobe [-d DEV] launch N US                      N sleep_us kernels
 *   cudaprobe [-d DEV] pool BYTES                       cuMemAllocAsync
 *   cudaprobe [-d DEV] vmm BYTES                        cuMemCreate + map
 *   cudaprobe [-d DEV] array W H                        cuArrayCreate (float)
 *   cudaprobe [-d DEV] managed BYTES                    cuMemAllocManaged
 *   cudaprobe procaddr SYMBOL VERSION [FLAGS]           cuGetProcAddress_v2
 *
 * -k keeps the memory and waits (prints "holding pid=PID") until killed.
 * The loops print allocated=BYTES, chunk=BYTES and stop=ERROR.
 * Exit status: 0 when every call succeeded (the loops: when they ended on
 * CUDA_ERROR_OUT_OF_MEMORY), else the failing CUresult (capped at 255).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgpu_cuda.h"
#include "cgpu_nvml.h"

static int dev;

static const char *errname(CUresult r)
{
	const char *s = NULL;

	cuGetErrorName(r, &s);
	return s ? s : "?";
}

static int fail(const char *call, CUresult r)
{
	printf("error=%s call=%s\n", errname(r), call);
	return r > 255 ? 255 : (int)r;
}

#define CK(call)                                    \
	do {                                        \
		CUresult r_ = (call);               \
		if (r_ != CUDA_SUCCESS)             \
			return fail(#call, r_);     \
	} while (0)

static int setup(void)
{
	CUcontext ctx;

	CK(cuInit(0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	return 0;
}

static void hold(int keep)
{
	if (!keep)
		return;
	printf("holding pid=%d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}

/* -c MIB, -b BYTES, -k of the loops: the chunk (default 64 MiB) and whether to hold. */
static size_t loop_opts(int argc, char **argv, int *keep)
{
	size_t chunk = 64ULL << 20;
	int opt;

	*keep = 0;
	while ((opt = getopt(argc, argv, "b:c:k")) != -1) {
		if (opt == 'c')
			chunk = strtoull(optarg, NULL, 0) << 20;
		else if (opt == 'b')
			chunk = strtoull(optarg, NULL, 0);
		else
			*keep = 1;
	}
	return chunk;
}

static int loop_end(const char *call, size_t total, size_t chunk, CUresult r, int keep)
{
	printf("allocated=%zu\nchunk=%zu\nstop=%s\n", total, chunk, errname(r));
	fflush(stdout);
	hold(keep);
	return r == CUDA_ERROR_OUT_OF_MEMORY ? 0 : fail(call, r);
}

static int alloc_loop(int argc, char **argv)
{
	int keep;
	size_t chunk = loop_opts(argc, argv, &keep), total = 0;
	CUdeviceptr p;
	CUresult r;

	while ((r = cuMemAlloc_v2(&p, chunk)) == CUDA_SUCCESS)
		total += chunk;
	return loop_end("cuMemAlloc_v2", total, chunk, r, keep);
}

/*
 * The handle goes back at once, the mapping stays: the memory is held until it is
 * unmapped (never, here), as NVIDIA documents cuMemRelease.
 */
static int vmm_loop(int argc, char **argv)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, dev } };
	int keep;
	size_t chunk = loop_opts(argc, argv, &keep), total = 0, gran;
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	CUresult r;

	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	chunk = (chunk + gran - 1) / gran * gran;
	for (;;) {
		r = cuMemCreate(&h, chunk, &prop, 0);
		if (r != CUDA_SUCCESS)
			break;
		CK(cuMemAddressReserve(&va, chunk, 0, 0, 0));
		CK(cuMemMap(va, chunk, 0, h, 0));
		CK(cuMemRelease(h));
		total += chunk;
	}
	return loop_end("cuMemCreate", total, chunk, r, keep);
}

/* Pools without end: each allocation from a pool of its own. */
static int pool_loop(int argc, char **argv)
{
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { CU_MEM_LOCATION_TYPE_DEVICE, dev } };
	int keep;
	size_t chunk = loop_opts(argc, argv, &keep), total = 0;
	CUmemoryPool p;
	CUdeviceptr d;
	CUstream s;
	CUresult r;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (;;) {
		r = cuMemPoolCreate(&p, &props);
		if (r != CUDA_SUCCESS)
			break;
		r = cuMemAllocFromPoolAsync(&d, chunk, p, s);
		if (r != CUDA_SUCCESS)
			break;
		total += chunk;
	}
	return loop_end("cuMemAllocFromPoolAsync", total, chunk, r, keep);
}

static int alloc_one(int argc, char **argv)
{
	CUdeviceptr p;

	if (argc < 2)
		return 2;
	CK(cuMemAlloc_v2(&p, strtoull(argv[1], NULL, 0)));
	printf("allocated=%s\n", argv[1]);
	fflush(stdout);
	hold(argc > 2 && !strcmp(argv[2], "-k"));
	return 0;
}

/* NVML's view of the CUDA device, found by UUID as CUDA and NVML number
 * devices differently under CUDA_VISIBLE_DEVICES. */
static int nvml_info(void)
{
	CUuuid u;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	nvmlDevice_t d;
	nvmlMemory_t m;
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	unsigned int idx;
	int n;

	CK(cuDeviceGetUuid_v2(&u, dev));
	n = snprintf(uuid, sizeof(uuid), "GPU-");
	for (int i = 0; i < 16; i++)
		n += snprintf(uuid + n, sizeof(uuid) - (size_t)n, "%s%02x",
			      i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
			      (unsigned char)u.bytes[i]);
	printf("uuid=%s\n", uuid);
	if (nvmlInit_v2() || nvmlDeviceGetHandleByUUID(uuid, &d) ||
	    nvmlDeviceGetIndex(d, &idx) || nvmlDeviceGetMemoryInfo(d, &m) ||
	    nvmlDeviceGetMemoryInfo_v2(d, &m2)) {
		printf("error=nvml\n");
		return 1;
	}
	printf("nvml.index=%u\nnvml.total=%llu\nnvml.free=%llu\nnvml.used=%llu\n",
	       idx, m.total, m.free, m.used);
	printf("nvml2.total=%llu\nnvml2.free=%llu\nnvml2.used=%llu\n", m2.total,
	       m2.free, m2.used);
	nvmlShutdown();
	return 0;
}

static int meminfo(void)
{
	size_t free_b, total, dtotal;

	CK(cuMemGetInfo_v2(&free_b, &total));
	CK(cuDeviceTotalMem_v2(&dtotal, dev));
	printf("cuda.free=%zu\ncuda.total=%zu\ncuda.devtotal=%zu\n", free_b,
	       total, dtotal);
	return nvml_info();
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int launch(int argc, char **argv)
{
	static const char image[] = "sim";
	CUmodule mod;
	CUfunction f;
	CUstream s;
	CUevent e0, e1;
	unsigned long long us;
	void *params[] = { &us };
	float ms;
	int n;
	double t0;

	if (argc < 3)
		return 2;
	n = atoi(argv[1]);
	us = strtoull(argv[2], NULL, 0);
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&f, mod, "sleep_us"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
	t0 = now_ms();
	CK(cuEventRecord(e0, s));
	for (int i = 0; i < n; i++)
		CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
	CK(cuEventRecord(e1, s));
	printf("submit_ms=%.3f\n", now_ms() - t0);
	CK(cuStreamSynchronize(s));
	CK(cuEventElapsedTime(&ms, e0, e1));
	printf("wall_ms=%.3f\ngpu_ms=%.3f\n", now_ms() - t0, ms);
	return 0;
}

static int pool(int argc, char **argv)
{
	CUmemoryPool p;
	CUdeviceptr d;
	CUstream s;
	cuuint64_t reserved, used;

	if (argc < 2)
		return 2;
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuDeviceGetMemPool(&p, dev));
	CK(cuMemAllocAsync(&d, strtoull(argv[1], NULL, 0), s));
	CK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved));
	CK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
	printf("pool.reserved=%llu\npool.used=%llu\n",
	       (unsigned long long)reserved, (unsigned long long)used);
	CK(cuMemFreeAsync(d, s));
	CK(cuStreamSynchronize(s));
	CK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved));
	printf("pool.reserved_after_sync=%llu\n", (unsigned long long)reserved);
	return 0;
}

static int vmm(int argc, char **argv)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, dev } };
	CUmemAccessDesc acc = { prop.location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	size_t gran, size;
	unsigned char byte = 0;

	if (argc < 2)
		return 2;
	CK(cuMemGetAllocationGranularity(&gran, &prop,
					 CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	size = (strtoull(argv[1], NULL, 0) + gran - 1) / gran * gran;
	CK(cuMemCreate(&h, size, &prop, 0));
	CK(cuMemAddressReserve(&va, size, 0, 0, 0));
	CK(cuMemMap(va, size, 0, h, 0));
	CK(cuMemSetAccess(va, size, &acc, 1));
	((volatile unsigned char *)(uintptr_t)va)[size - 1] = 0x5a;
	byte = ((volatile unsigned char *)(uintptr_t)va)[size - 1];
	printf("vmm.size=%zu\nvmm.granularity=%zu\nvmm.readback=%u\n", size,
	       gran, byte);
	CK(cuMemUnmap(va, size));
	CK(cuMemAddressFree(va, size));
	CK(cuMemRelease(h));
	return 0;
}

static int array(int argc, char **argv)
{
	CUDA_ARRAY_DESCRIPTOR d = { 0 };
	CUarray a;

	if (argc < 3)
		return 2;
	d.Width = strtoull(argv[1], NULL, 0);
	d.Height = strtoull(argv[2], NULL, 0);
	d.Format = CU_AD_FORMAT_FLOAT;
	d.NumChannels = 1;
	CK(cuArrayCreate_v2(&a, &d));
	printf("array=created\n");
	CK(cuArrayDestroy(a));
	return 0;
}

static int managed(int argc, char **argv)
{
	CUdeviceptr p;

	if (argc < 2)
		return 2;
	CK(cuMemAllocManaged(&p, strtoull(argv[1], NULL, 0), CU_MEM_ATTACH_GLOBAL));
	printf("managed=allocated\n");
	CK(cuMemFree_v2(p));
	return 0;
}

/* Resolves through the driver's own cuGetProcAddress_v2, found by dlsym, as
 * the CUDA runtime does. */
static int procaddr(int argc, char **argv)
{
	CUresult (*gpa)(const char *, void **, int, cuuint64_t,
			CUdriverProcAddressQueryResult *);
	CUdriverProcAddressQueryResult st;
	void *h = dlopen("libcuda.so.1", RTLD_NOW), *fn = NULL;
	Dl_info info;

	if (argc < 3 || !h)
		return 2;
	gpa = (CUresult(*)(const char *, void **, int, cuuint64_t,
			   CUdriverProcAddressQueryResult *))
		dlsym(h, "cuGetProcAddress_v2");
	if (!gpa)
		return 2;
	CK(gpa(argv[1], &fn, atoi(argv[2]),
	       argc > 3 ? strtoull(argv[3], NULL, 0) : 0, &st));
	printf("status=%d\n", (int)st);
	if (fn && dladdr(fn, &info) && info.dli_sname)
		printf("symbol=%s\nobject=%s\n", info.dli_sname, info.dli_fname);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, err;

	if (argc > 2 && !strcmp(argv[1], "-d")) {
		dev = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: see the comment at the top of cudaprobe.c\n");
		return 2;
	}
	if (!strcmp(argv[i], "procaddr"))
		return procaddr(argc - i, argv + i);
	err = setup();
	if (err)
		return err;
	setvbuf(stdout, NULL, _IOLBF, 0);
	optind = 1;
	if (!strcmp(argv[i], "alloc-loop"))
		return alloc_loop(argc - i, argv + i);
	if (!strcmp(argv[i], "vmm-loop"))
		return vmm_loop(argc - i, argv + i);
	if (!strcmp(argv[i], "pool-loop"))
		return pool_loop(argc - i, argv + i);
	if (!strcmp(argv[i], "alloc"))
		return alloc_one(argc - i, argv + i);
	if (!strcmp(argv[i], "meminfo"))
		return meminfo();
	if (!strcmp(argv[i], "launch"))
		return launch(argc - i, argv + i);
	if (!strcmp(argv[i], "pool"))
		return pool(argc - i, argv + i);
	if (!strcmp(argv[i], "vmm"))
		return vmm(argc - i, argv + i);
	if (!strcmp(argv[i], "array"))
		return array(argc - i, argv + i);
	if (!strcmp(argv[i], "managed"))
		return managed(argc - i, argv + i);
	fprintf(stderr, "cudaprobe: unknown command %s\n", argv[i]);
	return 2;
}
