// SPDX-License-Identifier: MIT
/* Linear device memory and managed memory. */
#include "ledger.h"
#include "track.h"

/* Charged, then allocated; a driver failure gives the charge back. */
static CUresult linear(CUdeviceptr *dptr, uint64_t bytes,
		       CUresult (*alloc)(CUdeviceptr *, void *), void *arg,
		       uint64_t (*actual)(void *))
{
	CUcontext ctx;
	CUdevice dev;
	int slot;
	uint64_t got;
	CUresult r = track_current(&ctx, &dev, &slot);

	/* No context or no size: the driver says what is wrong. */
	if (r != CUDA_SUCCESS || bytes == 0)
		return alloc(dptr, arg);
	r = track_charge(slot, bytes);
	if (r != CUDA_SUCCESS)
		return r;
	r = alloc(dptr, arg);
	if (r != CUDA_SUCCESS) {
		ledger_uncharge(slot, bytes);
		return r;
	}
	/* The driver may round up past the estimate (pitch): charge the rest,
	 * or give back the excess. */
	got = actual ? actual(arg) : bytes;
	if (got > bytes && track_charge(slot, got - bytes) != CUDA_SUCCESS) {
		REAL_CU(cuMemFree_v2, *dptr);
		ledger_uncharge(slot, bytes);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (got < bytes)
		ledger_uncharge(slot, bytes - got);
	if (track_put(&track_dptr, *dptr, got, slot, T_LINEAR, ctx, NULL)) {
		REAL_CU(cuMemFree_v2, *dptr);
		ledger_uncharge(slot, got);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

static CUresult plain_alloc(CUdeviceptr *dptr, void *arg)
{
	return REAL_CU(cuMemAlloc_v2, dptr, *(size_t *)arg);
}

CGPU_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF || !dptr)
		return REAL_CU(cuMemAlloc_v2, dptr, bytesize);
	return linear(dptr, bytesize, plain_alloc, &bytesize, NULL);
}

struct pitch_args {
	size_t *pitch, width, height;
	unsigned elem;
};

static CUresult pitch_alloc(CUdeviceptr *dptr, void *arg)
{
	struct pitch_args *a = arg;

	return REAL_CU(cuMemAllocPitch_v2, dptr, a->pitch, a->width, a->height,
		       a->elem);
}

static uint64_t pitch_bytes(void *arg)
{
	struct pitch_args *a = arg;

	return (uint64_t)*a->pitch * a->height;
}

/* Estimated with rows aligned to 512 bytes; corrected to the real pitch. */
CGPU_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch,
					size_t WidthInBytes, size_t Height,
					unsigned int ElementSizeBytes)
{
	struct pitch_args a = { pPitch, WidthInBytes, Height, ElementSizeBytes };

	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF || !dptr || !pPitch)
		return pitch_alloc(dptr, &a);
	return linear(dptr, (uint64_t)((WidthInBytes + 511) & ~(size_t)511) * Height,
		      pitch_alloc, &a, pitch_bytes);
}

static CUresult free_dptr(uint64_t key, void *arg)
{
	(void)arg;
	return REAL_CU(cuMemFree_v2, key);
}

CGPU_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF || !dptr)
		return REAL_CU(cuMemFree_v2, dptr);
	return track_free(&track_dptr, dptr, free_dptr, NULL);
}

static int said_managed;

/* SPEC: managed memory is not supported in a cGPU container, and says so. */
CGPU_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
				       unsigned int flags)
{
	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF)
		return REAL_CU(cuMemAllocManaged, dptr, bytesize, flags);
	cgpu_say_once(&said_managed,
		      "cgpu: managed memory (cuMemAllocManaged / cudaMallocManaged) is not supported in a cGPU container; use cudaMalloc");
	return CUDA_ERROR_NOT_SUPPORTED;
}
