// SPDX-License-Identifier: MIT
/*
 * cuGetProcAddress of the simulated driver. Every entry point it exports is
 * listed with the CUDA version that introduced that variant and whether it
 * is the per-thread-default-stream one; a lookup picks the newest variant not
 * newer than the caller's CUDA version. The rules, including the return codes
 * for unknown symbols, follow Debian's libcuda 535 (checked side by side in
 * test/suites/30-libcgpu-host.sh).
 */
#include <string.h>

#include "core.h"

struct entry {
	const char *base;
	int version;
	int ptds;
	void *fn;
};

#define E(base, ver, fn) { #base, ver, 0, (void *)fn }
#define P(base, ver, fn) { #base, ver, 1, (void *)fn }

static const struct entry table[] = {
	E(cuInit, 2000, cuInit),
	E(cuDriverGetVersion, 2020, cuDriverGetVersion),
	E(cuGetErrorString, 6000, cuGetErrorString),
	E(cuGetErrorName, 6000, cuGetErrorName),
	E(cuGetProcAddress, 11030, cuGetProcAddress),
	E(cuGetProcAddress, 12000, cuGetProcAddress_v2),
	E(cuGetExportTable, 3000, cuGetExportTable),
	E(cuDeviceGetCount, 2000, cuDeviceGetCount),
	E(cuDeviceGet, 2000, cuDeviceGet),
	E(cuDeviceGetName, 2000, cuDeviceGetName),
	E(cuDeviceGetUuid, 9020, cuDeviceGetUuid),
	E(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2),
	E(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2),
	E(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute),
	E(cuDeviceGetPCIBusId, 4010, cuDeviceGetPCIBusId),
	E(cuCtxCreate, 3020, cuCtxCreate_v2),
	E(cuCtxCreate, 11040, cuCtxCreate_v3),
	E(cuCtxDestroy, 4000, cuCtxDestroy_v2),
	E(cuCtxSetCurrent, 4000, cuCtxSetCurrent),
	E(cuCtxGetCurrent, 4000, cuCtxGetCurrent),
	E(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2),
	E(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2),
	E(cuCtxGetDevice, 2000, cuCtxGetDevice),
	E(cuCtxSynchronize, 2000, cuCtxSynchronize),
	E(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain),
	E(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease),
	E(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2),
	E(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset),
	E(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2),
	E(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState),
	E(cuMemGetInfo, 3020, cuMemGetInfo_v2),
	E(cuMemAlloc, 2000, cuMemAlloc),
	E(cuMemAlloc, 3020, cuMemAlloc_v2),
	E(cuMemAllocPitch, 2000, cuMemAllocPitch),
	E(cuMemAllocPitch, 3020, cuMemAllocPitch_v2),
	E(cuMemFree, 2000, cuMemFree),
	E(cuMemFree, 3020, cuMemFree_v2),
	E(cuMemAllocManaged, 6000, cuMemAllocManaged),
	E(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2),
	P(cuMemcpyHtoD, 7000, cuMemcpyHtoD_v2_ptds),
	E(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2),
	P(cuMemcpyDtoH, 7000, cuMemcpyDtoH_v2_ptds),
	E(cuMemsetD8, 3020, cuMemsetD8_v2),
	P(cuMemsetD8, 7000, cuMemsetD8_v2_ptds),
	E(cuMemcpyAsync, 4000, cuMemcpyAsync),
	P(cuMemcpyAsync, 7000, cuMemcpyAsync_ptsz),
	E(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2),
	P(cuMemcpyHtoDAsync, 7000, cuMemcpyHtoDAsync_v2_ptsz),
	E(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2),
	P(cuMemcpyDtoHAsync, 7000, cuMemcpyDtoHAsync_v2_ptsz),
	E(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2),
	P(cuMemcpyDtoDAsync, 7000, cuMemcpyDtoDAsync_v2_ptsz),
	E(cuMemsetD8Async, 3020, cuMemsetD8Async),
	P(cuMemsetD8Async, 7000, cuMemsetD8Async_ptsz),
	E(cuMemsetD16Async, 3020, cuMemsetD16Async),
	P(cuMemsetD16Async, 7000, cuMemsetD16Async_ptsz),
	E(cuMemsetD32Async, 3020, cuMemsetD32Async),
	P(cuMemsetD32Async, 7000, cuMemsetD32Async_ptsz),
	E(cuDeviceGetDefaultMemPool, 11020, cuDeviceGetDefaultMemPool),
	E(cuDeviceGetMemPool, 11020, cuDeviceGetMemPool),
	E(cuDeviceSetMemPool, 11020, cuDeviceSetMemPool),
	E(cuMemPoolCreate, 11020, cuMemPoolCreate),
	E(cuMemPoolDestroy, 11020, cuMemPoolDestroy),
	E(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo),
	E(cuMemPoolSetAttribute, 11020, cuMemPoolSetAttribute),
	E(cuMemPoolGetAttribute, 11020, cuMemPoolGetAttribute),
	E(cuMemAllocAsync, 11020, cuMemAllocAsync),
	P(cuMemAllocAsync, 11020, cuMemAllocAsync_ptsz),
	E(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync),
	P(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync_ptsz),
	E(cuMemFreeAsync, 11020, cuMemFreeAsync),
	P(cuMemFreeAsync, 11020, cuMemFreeAsync_ptsz),
	E(cuMemGetAllocationGranularity, 10020, cuMemGetAllocationGranularity),
	E(cuMemCreate, 10020, cuMemCreate),
	E(cuMemRelease, 10020, cuMemRelease),
	E(cuMemAddressReserve, 10020, cuMemAddressReserve),
	E(cuMemAddressFree, 10020, cuMemAddressFree),
	E(cuMemMap, 10020, cuMemMap),
	E(cuMemUnmap, 10020, cuMemUnmap),
	E(cuMemSetAccess, 10020, cuMemSetAccess),
	E(cuArrayCreate, 2000, cuArrayCreate),
	E(cuArrayCreate, 3020, cuArrayCreate_v2),
	E(cuArray3DCreate, 2000, cuArray3DCreate),
	E(cuArray3DCreate, 3020, cuArray3DCreate_v2),
	E(cuArrayDestroy, 2000, cuArrayDestroy),
	E(cuMipmappedArrayCreate, 5000, cuMipmappedArrayCreate),
	E(cuMipmappedArrayDestroy, 5000, cuMipmappedArrayDestroy),
	E(cuModuleLoadData, 2000, cuModuleLoadData),
	E(cuModuleUnload, 2000, cuModuleUnload),
	E(cuModuleGetFunction, 2000, cuModuleGetFunction),
	E(cuLaunchKernel, 4000, cuLaunchKernel),
	P(cuLaunchKernel, 7000, cuLaunchKernel_ptsz),
	E(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel),
	P(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel_ptsz),
	E(cuLaunchKernelEx, 11060, cuLaunchKernelEx),
	P(cuLaunchKernelEx, 11060, cuLaunchKernelEx_ptsz),
	E(cuGraphCreate, 10000, cuGraphCreate),
	E(cuGraphAddKernelNode, 12000, cuGraphAddKernelNode_v2),
	E(cuGraphInstantiateWithFlags, 11040, cuGraphInstantiateWithFlags),
	E(cuGraphLaunch, 10000, cuGraphLaunch),
	P(cuGraphLaunch, 10000, cuGraphLaunch_ptsz),
	E(cuGraphExecDestroy, 10000, cuGraphExecDestroy),
	E(cuGraphDestroy, 10000, cuGraphDestroy),
	E(cuGraphUpload, 11010, cuGraphUpload),
	P(cuGraphUpload, 11010, cuGraphUpload_ptsz),
	E(cuGraphAddMemAllocNode, 11040, cuGraphAddMemAllocNode),
	E(cuGraphAddMemFreeNode, 11040, cuGraphAddMemFreeNode),
	/* libcuda 535 has no _v2 (CUDA 12.3) and hands the v1 out at every
	 * version from 12.2 (NVIDIA's 550 gives its _v2 from 12030). The _v2
	 * is exported all the same, as newer drivers export it, so that
	 * libcgpu's hook of it has a driver function to reach in the tests. */
	E(cuGraphAddNode, 12020, cuGraphAddNode),
	E(cuGraphGetNodes, 10000, cuGraphGetNodes),
	E(cuGraphNodeGetType, 10000, cuGraphNodeGetType),
	E(cuGraphMemAllocNodeGetParams, 11040, cuGraphMemAllocNodeGetParams),
	/* 535 hands out the v1 of 10.0 (no capture mode) below 10.1, and the
	 * v1 of cuStreamGetCaptureInfo below 11.3: not simulated, nothing there. */
	E(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2),
	P(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2_ptsz),
	E(cuStreamEndCapture, 10000, cuStreamEndCapture),
	P(cuStreamEndCapture, 10000, cuStreamEndCapture_ptsz),
	E(cuStreamIsCapturing, 10000, cuStreamIsCapturing),
	P(cuStreamIsCapturing, 10000, cuStreamIsCapturing_ptsz),
	E(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2),
	P(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2_ptsz),
	E(cuDeviceGetGraphMemAttribute, 11040, cuDeviceGetGraphMemAttribute),
	E(cuDeviceSetGraphMemAttribute, 11040, cuDeviceSetGraphMemAttribute),
	E(cuDeviceGraphMemTrim, 11040, cuDeviceGraphMemTrim),
	E(cuStreamCreate, 2000, cuStreamCreate),
	E(cuStreamDestroy, 4000, cuStreamDestroy_v2),
	E(cuStreamGetCtx, 9020, cuStreamGetCtx),
	P(cuStreamGetCtx, 9020, cuStreamGetCtx_ptsz),
	E(cuStreamSynchronize, 2000, cuStreamSynchronize),
	P(cuStreamSynchronize, 7000, cuStreamSynchronize_ptsz),
	E(cuStreamQuery, 2000, cuStreamQuery),
	P(cuStreamQuery, 7000, cuStreamQuery_ptsz),
	E(cuStreamWaitEvent, 3020, cuStreamWaitEvent),
	P(cuStreamWaitEvent, 7000, cuStreamWaitEvent_ptsz),
	E(cuEventCreate, 2000, cuEventCreate),
	E(cuEventDestroy, 4000, cuEventDestroy_v2),
	E(cuEventRecord, 2000, cuEventRecord),
	P(cuEventRecord, 7000, cuEventRecord_ptsz),
	E(cuEventQuery, 2000, cuEventQuery),
	E(cuEventSynchronize, 2000, cuEventSynchronize),
	E(cuEventElapsedTime, 2000, cuEventElapsedTime),
};

/* A symbol with per-thread variants resolves among those alone when the
 * caller asks for per-thread default stream semantics. */
static CUdriverProcAddressQueryResult lookup(const char *symbol, int version,
					     int ptds, void **out)
{
	const struct entry *best = NULL;
	int known = 0, has_ptds = 0;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].base, symbol) && table[i].ptds)
			has_ptds = 1;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct entry *e = &table[i];

		if (strcmp(e->base, symbol) || e->ptds != (ptds && has_ptds))
			continue;
		known = 1;
		if (e->version <= version && (!best || e->version > best->version))
			best = e;
	}
	if (best)
		*out = best->fn;
	return best ? CU_GET_PROC_ADDRESS_SUCCESS :
		      known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
			      CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
}

#define FLAGS_KNOWN (CU_GET_PROC_ADDRESS_LEGACY_STREAM | \
		     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)

/* Not finding a symbol is a success with a status, as libcuda 535 does. */
SIM_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn,
				     int cudaVersion, cuuint64_t flags,
				     CUdriverProcAddressQueryResult *symbolStatus)
{
	CUdriverProcAddressQueryResult st;
	void *fn = NULL;

	if (!symbol || !pfn || (flags & ~FLAGS_KNOWN)) {
		if (symbolStatus)
			*symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return CUDA_ERROR_INVALID_VALUE;
	}
	st = lookup(symbol, cudaVersion,
		    !!(flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), &fn);
	*pfn = fn;
	if (symbolStatus)
		*symbolStatus = st;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGetProcAddress(const char *symbol, void **pfn,
				  int cudaVersion, cuuint64_t flags)
{
	void *fn = NULL;

	if (!symbol || !pfn || (flags & ~FLAGS_KNOWN))
		return CUDA_ERROR_INVALID_VALUE;
	if (lookup(symbol, cudaVersion,
		   !!(flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
		   &fn) != CU_GET_PROC_ADDRESS_SUCCESS)
		return CUDA_ERROR_NOT_FOUND;
	*pfn = fn;
	return CUDA_SUCCESS;
}
