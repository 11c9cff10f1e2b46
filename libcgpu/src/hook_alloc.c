// SPDX-License-Identifier: MIT
/* Linear device memory and managed memory. */
#include "budget.h"
#include "memsize.h"
#include "track.h"

/*
 * Charged what the driver takes (cutil/memsize.h), then allocated; a driver
 * failure gives the charge back. A small allocation is charged a page, given
 * back once the driver has put it in a page this process already holds: so
 * it needs a page's room in the budget even when it fits in a held one.
 */
static CUresult linear(CUdeviceptr *dptr, uint64_t bytes,
		       CUresult (*alloc)(CUdeviceptr *, void *), void *arg,
		       uint64_t (*actual)(void *))
{
	CUcontext ctx;
	CUdevice dev;
	int slot;
	uint64_t est, got, pages;
	CUresult r = track_current(&ctx, &dev, &slot);

	/* No context or no size: the driver says what is wrong. */
	if (r != CUDA_SUCCESS || bytes == 0)
		return alloc(dptr, arg);
	est = cgpu_linear_pages(bytes);
	r = track_charge(slot, est);
	if (r != CUDA_SUCCESS)
		return r;
	r = alloc(dptr, arg);
	if (r != CUDA_SUCCESS) {
		ledger_uncharge(slot, est);
		return r;
	}
	/* The driver may round up past the estimate (pitch): charge the rest,
	 * or give back the excess. */
	got = actual ? actual(arg) : bytes;
	pages = cgpu_linear_pages(got);
	if (pages > est && track_charge(slot, pages - est) != CUDA_SUCCESS) {
		REAL_CU(cuMemFree_v2, *dptr);
		ledger_uncharge(slot, est);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (pages < est)
		ledger_uncharge(slot, est - pages);
	if (cgpu_is_small(got)) {
		if (track_small_placed(slot, *dptr))
			ledger_uncharge(slot, CGPU_PAGE);
		/* Without room for the record the page stays charged. */
		track_put(&track_dptr, *dptr, got, slot, T_SMALL, ctx,
			  (void *)(uintptr_t)*dptr);
		return CUDA_SUCCESS;
	}
	if (track_put(&track_dptr, *dptr, pages, slot, T_LINEAR, ctx, NULL)) {
		REAL_CU(cuMemFree_v2, *dptr);
		ledger_uncharge(slot, pages);
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

/*
 * The entry points before CUDA 3.2, with 32-bit pointers and sizes: what
 * CUDA 11.x's cudart can get from cuGetProcAddress. Charged and freed as
 * their _v2 siblings.
 */
struct v1_args {
	CUdeviceptr_v1 *dptr;
	unsigned int *pitch, width, height, elem;
};

static CUresult alloc_v1(CUdeviceptr *dptr, void *arg)
{
	struct v1_args *a = arg;
	CUresult r = a->pitch ? REAL_CU(cuMemAllocPitch, a->dptr, a->pitch,
					a->width, a->height, a->elem) :
				REAL_CU(cuMemAlloc, a->dptr, a->width);

	if (r == CUDA_SUCCESS)
		*dptr = *a->dptr;
	return r;
}

static uint64_t pitch_bytes_v1(void *arg)
{
	struct v1_args *a = arg;

	return (uint64_t)*a->pitch * a->height;
}

CGPU_EXPORT CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	struct v1_args a = { .dptr = dptr, .width = bytesize };
	CUdeviceptr wide;

	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF || !dptr)
		return REAL_CU(cuMemAlloc, dptr, bytesize);
	return linear(&wide, bytesize, alloc_v1, &a, NULL);
}

CGPU_EXPORT CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch,
				     unsigned int WidthInBytes,
				     unsigned int Height,
				     unsigned int ElementSizeBytes)
{
	struct v1_args a = { dptr, pPitch, WidthInBytes, Height, ElementSizeBytes };
	CUdeviceptr wide;

	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF || !dptr || !pPitch)
		return REAL_CU(cuMemAllocPitch, dptr, pPitch, WidthInBytes,
			       Height, ElementSizeBytes);
	return linear(&wide, (((uint64_t)WidthInBytes + 511) & ~511ULL) * Height,
		      alloc_v1, &a, pitch_bytes_v1);
}

static CUresult free_v1(uint64_t key, void *arg)
{
	(void)arg;
	return REAL_CU(cuMemFree, (CUdeviceptr_v1)key);
}

CGPU_EXPORT CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF || !dptr)
		return REAL_CU(cuMemFree, dptr);
	return track_free(&track_dptr, dptr, free_v1, NULL);
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
