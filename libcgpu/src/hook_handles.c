// SPDX-License-Identifier: MIT
/*
 * Memory named by a handle rather than a device pointer: physical
 * allocations of the virtual memory API (cuMemCreate/cuMemRelease) and CUDA
 * arrays. A cuMemCreate handle is uncharged at cuMemRelease, even if the
 * driver keeps the memory until it is also unmapped.
 */
#include "arraysize.h"
#include "devmap.h"
#include "ledger.h"
#include "memsize.h"
#include "track.h"

CGPU_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle,
				 size_t size, const CUmemAllocationProp *prop,
				 unsigned long long flags)
{
	int slot;
	CUresult r;

	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF || !handle || !prop || !size ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return REAL_CU(cuMemCreate, handle, size, prop, flags);
	slot = devmap_cuda(prop->location.id);
	r = track_charge(slot, size);
	if (r != CUDA_SUCCESS)
		return r;
	r = REAL_CU(cuMemCreate, handle, size, prop, flags);
	if (r != CUDA_SUCCESS) {
		ledger_uncharge(slot, size);
		return r;
	}
	if (track_put(&track_vmm, *handle, size, slot, T_VMM, NULL, NULL)) {
		REAL_CU(cuMemRelease, *handle);
		ledger_uncharge(slot, size);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

static CUresult release_vmm(uint64_t key, void *arg)
{
	(void)arg;
	return REAL_CU(cuMemRelease, key);
}

CGPU_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF)
		return REAL_CU(cuMemRelease, handle);
	return track_free(&track_vmm, handle, release_vmm, NULL);
}

/* create() makes the array with the driver: charged, then created. */
static CUresult array_create(void **out, const CUDA_ARRAY3D_DESCRIPTOR *d,
			     unsigned levels, CUresult (*create)(void **, void *),
			     void *arg)
{
	CUcontext ctx;
	CUdevice dev;
	int slot;
	uint64_t bytes;
	CUresult r;

	if (cgpu_mode == CGPU_OFF || !out || !d ||
	    track_current(&ctx, &dev, &slot) != CUDA_SUCCESS)
		return create(out, arg);
	bytes = cgpu_round_page(cgpu_array_bytes(d, levels));
	r = track_charge(slot, bytes);
	if (r != CUDA_SUCCESS)
		return r;
	r = create(out, arg);
	if (r != CUDA_SUCCESS) {
		ledger_uncharge(slot, bytes);
		return r;
	}
	/* Without room for the record the charge stays: over, never under. */
	track_put(&track_array, (uintptr_t)*out, bytes, slot, T_ARRAY, ctx, NULL);
	return CUDA_SUCCESS;
}

static CUresult create_2d(void **out, void *arg)
{
	return REAL_CU(cuArrayCreate_v2, (CUarray *)out, arg);
}

static CUresult create_3d(void **out, void *arg)
{
	return REAL_CU(cuArray3DCreate_v2, (CUarray *)out, arg);
}

struct mip_args {
	const CUDA_ARRAY3D_DESCRIPTOR *d;
	unsigned levels;
};

static CUresult create_mip(void **out, void *arg)
{
	struct mip_args *a = arg;

	return REAL_CU(cuMipmappedArrayCreate, (CUmipmappedArray *)out, a->d,
		       a->levels);
}

CGPU_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle,
				      const CUDA_ARRAY_DESCRIPTOR *d)
{
	CUDA_ARRAY3D_DESCRIPTOR d3;

	NEED_CUDA();
	if (d)
		d3 = (CUDA_ARRAY3D_DESCRIPTOR){ d->Width, d->Height, 0,
						d->Format, d->NumChannels, 0 };
	return array_create((void **)pHandle, d ? &d3 : NULL, 1, create_2d,
			    (void *)d);
}

CGPU_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle,
					const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	NEED_CUDA();
	return array_create((void **)pHandle, d, 1, create_3d, (void *)d);
}

CGPU_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
					    const CUDA_ARRAY3D_DESCRIPTOR *d,
					    unsigned int numMipmapLevels)
{
	struct mip_args a = { d, numMipmapLevels };

	NEED_CUDA();
	return array_create((void **)pHandle, d, numMipmapLevels, create_mip, &a);
}

static CUresult destroy_array(uint64_t key, void *arg)
{
	(void)arg;
	return REAL_CU(cuArrayDestroy, (CUarray)(uintptr_t)key);
}

static CUresult destroy_mip(uint64_t key, void *arg)
{
	(void)arg;
	return REAL_CU(cuMipmappedArrayDestroy, (CUmipmappedArray)(uintptr_t)key);
}

CGPU_EXPORT CUresult cuArrayDestroy(CUarray hArray)
{
	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF)
		return REAL_CU(cuArrayDestroy, hArray);
	return track_free(&track_array, (uintptr_t)hArray, destroy_array, NULL);
}

CGPU_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF)
		return REAL_CU(cuMipmappedArrayDestroy, hMipmappedArray);
	return track_free(&track_array, (uintptr_t)hMipmappedArray, destroy_mip,
			  NULL);
}
