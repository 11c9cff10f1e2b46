// SPDX-License-Identifier: MIT
/*
 * rmprobe STEP...: makes a CUDA context and then each step's memory in turn, and keeps
 * everything until it exits, so that test/gpu/rmtrace.sh can read the driver's figures
 * after every step. After a step it calls rmtrace_mark("STEP") when librmtrace.so is
 * preloaded, prints "at STEP pid=PID" and waits for a line on stdin; at EOF it exits.
 *
 *   ctx             cuInit, the primary context, cuCtxSynchronize
 *   alloc:BYTES     cuMemAlloc
 *   reserve:BYTES   cuMemAddressReserve alone (a VA range and no memory)
 *   vmm:BYTES       cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess
 *   pool:BYTES      cuMemAllocAsync on a stream of its own, then synchronized
 *   managed:BYTES   cuMemAllocManaged, written by cuMemsetD8 on the GPU
 *   host:BYTES      cuMemAllocHost (pinned system memory the GPU maps)
 *   ctx2            a second context (cuCtxCreate), synchronized
 *   drop2           the second context destroyed (cuCtxDestroy), the first made current
 *
 * libcuda.so.1 is opened with dlopen, so the same binary runs on NVIDIA's driver and
 * on the simulated one (sim/, found through LD_LIBRARY_PATH). A call that fails prints
 * "error=NAME call=CALL step=STEP"; the steps after it still run (what a GPU or driver
 * lacks, managed memory or pools, costs one step), but for ctx, which ends the run.
 * Exit status: 0, or 1 when a step failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgpu_cuda.h"

#define FN(name) static __typeof__(&name) p_##name
FN(cuInit);
FN(cuGetErrorName);
FN(cuDeviceGet);
FN(cuDevicePrimaryCtxRetain);
FN(cuCtxSetCurrent);
FN(cuCtxCreate_v2);
FN(cuCtxDestroy_v2);
FN(cuCtxSynchronize);
FN(cuMemAlloc_v2);
FN(cuMemAddressReserve);
FN(cuMemGetAllocationGranularity);
FN(cuMemCreate);
FN(cuMemMap);
FN(cuMemSetAccess);
FN(cuStreamCreate);
FN(cuStreamSynchronize);
FN(cuMemAllocAsync);
FN(cuMemAllocManaged);
FN(cuMemsetD8_v2);
/* Neither libcgpu nor the simulated GPU has it, so cgpu_cuda.h does not declare it. */
static CUresult (*p_cuMemAllocHost_v2)(void **pp, size_t bytesize);

static const char *step;
static CUcontext primary, second;
static CUdevice dev;

static int fail(const char *call, CUresult r)
{
	const char *s = NULL;

	if (p_cuGetErrorName)
		p_cuGetErrorName(r, &s);
	printf("error=%s call=%s step=%s\n", s ? s : "?", call, step);
	return 1;
}

/* CK(FN, ARGS...): FN(ARGS); a function this libcuda lacks fails its step alone. */
#define CK(fn, ...)                                                           \
	do {                                                                  \
		CUresult r_;                                                  \
		if (!p_##fn) {                                                \
			printf("error=missing call=%s step=%s\n", #fn, step);  \
			return 1;                                             \
		}                                                             \
		r_ = p_##fn(__VA_ARGS__);                                     \
		if (r_ != CUDA_SUCCESS)                                       \
			return fail(#fn, r_);                                 \
	} while (0)

static int load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);

	if (!h) {
		printf("error=dlopen call=%s step=load\n", dlerror());
		return 1;
	}
#define SYM(name) p_##name = (__typeof__(p_##name))dlsym(h, #name);
	SYM(cuInit) SYM(cuGetErrorName) SYM(cuDeviceGet) SYM(cuDevicePrimaryCtxRetain)
	SYM(cuCtxSetCurrent) SYM(cuCtxCreate_v2) SYM(cuCtxDestroy_v2) SYM(cuCtxSynchronize)
	SYM(cuMemAlloc_v2) SYM(cuMemAddressReserve) SYM(cuMemGetAllocationGranularity)
	SYM(cuMemCreate) SYM(cuMemMap) SYM(cuMemSetAccess) SYM(cuStreamCreate)
	SYM(cuStreamSynchronize) SYM(cuMemAllocAsync) SYM(cuMemAllocManaged) SYM(cuMemsetD8_v2)
	SYM(cuMemAllocHost_v2)
	return 0;
}

static int run(const char *name, size_t bytes)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, dev } };
	CUmemAccessDesc acc = { prop.location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h;
	CUdeviceptr p, va;
	CUstream s;
	void *hp;
	size_t gran;

	if (!strcmp(name, "ctx")) {
		CK(cuInit, 0);
		CK(cuDeviceGet, &dev, 0);
		CK(cuDevicePrimaryCtxRetain, &primary, dev);
		CK(cuCtxSetCurrent, primary);
		CK(cuCtxSynchronize);
	} else if (!strcmp(name, "alloc")) {
		CK(cuMemAlloc_v2, &p, bytes);
	} else if (!strcmp(name, "reserve")) {
		CK(cuMemAddressReserve, &va, bytes, 0, 0, 0);
	} else if (!strcmp(name, "vmm")) {
		CK(cuMemGetAllocationGranularity, &gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
		bytes = (bytes + gran - 1) / gran * gran;
		CK(cuMemCreate, &h, bytes, &prop, 0);
		CK(cuMemAddressReserve, &va, bytes, 0, 0, 0);
		CK(cuMemMap, va, bytes, 0, h, 0);
		CK(cuMemSetAccess, va, bytes, &acc, 1);
	} else if (!strcmp(name, "pool")) {
		CK(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
		CK(cuMemAllocAsync, &p, bytes, s);
		CK(cuStreamSynchronize, s);
	} else if (!strcmp(name, "managed")) {
		CK(cuMemAllocManaged, &p, bytes, CU_MEM_ATTACH_GLOBAL);
		CK(cuMemsetD8_v2, p, 0x5a, bytes);
		CK(cuCtxSynchronize);
	} else if (!strcmp(name, "host")) {
		CK(cuMemAllocHost_v2, &hp, bytes);
	} else if (!strcmp(name, "ctx2")) {
		CK(cuCtxCreate_v2, &second, 0, dev);
		CK(cuCtxSynchronize);
	} else if (!strcmp(name, "drop2")) {
		if (!second) {
			printf("error=skipped call=cuCtxDestroy_v2 step=%s (no second context)\n", step);
			return 1;
		}
		CK(cuCtxDestroy_v2, second);
		second = NULL;
		CK(cuCtxSetCurrent, primary);
	} else {
		printf("error=usage call=%s step=%s\n", name, step);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	void (*mark)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "rmtrace_mark");
	char line[64];
	int failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (load())
		return 1;
	for (int i = 1; i < argc; i++) {
		char name[32];
		const char *colon = strchr(argv[i], ':');
		size_t len = colon ? (size_t)(colon - argv[i]) : strlen(argv[i]);

		step = argv[i];
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, argv[i], len);
		name[len] = 0;
		if (run(name, colon ? strtoull(colon + 1, NULL, 0) : 0)) {
			if (!strcmp(name, "ctx"))
				return 1;
			failed = 1;
		}
		if (mark)
			mark(argv[i]);
		printf("at %s pid=%d\n", argv[i], (int)getpid());
		if (!fgets(line, sizeof(line), stdin))
			break;
	}
	return failed;
}
