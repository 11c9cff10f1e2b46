// SPDX-License-Identifier: MIT
/*
 * What a program in the container is told about memory: the budget as the
 * total, the budget less the container's use as free (never below 0, never
 * above what the GPU really has free).
 */
#include "devmap.h"
#include "budget.h"
#include "track.h"

/* 0 with *total, *free_b and *used replaced when slot has a budget. */
static int view(int slot, unsigned long long *total,
		unsigned long long *free_b, unsigned long long *used)
{
	uint64_t budget, held;

	if (slot < 0 || ledger_view(slot, &budget, &held))
		return -1;
	*total = budget;
	if (used)
		*used = held;
	if (held >= budget)
		*free_b = 0;
	else if (budget - held < *free_b)
		*free_b = budget - held;
	return 0;
}

CGPU_EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	unsigned long long f, t;
	CUcontext ctx;
	CUdevice dev;
	int slot;
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuMemGetInfo_v2, free_b, total);
	if (r != CUDA_SUCCESS || cgpu_mode == CGPU_OFF ||
	    track_current(&ctx, &dev, &slot) != CUDA_SUCCESS)
		return r;
	f = *free_b;
	if (view(slot, &t, &f, NULL) == 0) {
		*free_b = f;
		*total = t;
	}
	return r;
}

CGPU_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	unsigned long long f = 0, t;
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuDeviceTotalMem_v2, bytes, dev);
	if (r == CUDA_SUCCESS && cgpu_mode != CGPU_OFF &&
	    view(devmap_cuda(dev), &t, &f, NULL) == 0)
		*bytes = t;
	return r;
}

CGPU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
						 nvmlMemory_t *m)
{
	nvmlReturn_t r;

	NEED_NVML();
	r = REAL_NV(nvmlDeviceGetMemoryInfo, device, m);
	if (r == NVML_SUCCESS && cgpu_mode != CGPU_OFF)
		view(devmap_nvml(device), &m->total, &m->free, &m->used);
	return r;
}

CGPU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
						    nvmlMemory_v2_t *m)
{
	nvmlReturn_t r;

	NEED_NVML();
	r = REAL_NV(nvmlDeviceGetMemoryInfo_v2, device, m);
	if (r == NVML_SUCCESS && cgpu_mode != CGPU_OFF &&
	    view(devmap_nvml(device), &m->total, &m->free, &m->used) == 0)
		m->reserved = 0;
	return r;
}
