// SPDX-License-Identifier: MIT
/*
 * Memory named by a handle rather than a device pointer: physical
 * allocations of the virtual memory API and CUDA arrays. The driver keeps a
 * cuMemCreate allocation until it is released and every mapping of it is
 * unmapped (PyTorch's expandable segments release while mapped), so the
 * charge holds one reference for the handle and one per mapping.
 */
#include <stdlib.h>

#include "arraysize.h"
#include "devmap.h"
#include "budget.h"
#include "memsize.h"
#include "track.h"

struct vmm_phys {
	uint64_t bytes;
	int slot;
	unsigned refs;
};

void vmm_unref(void *phys)
{
	struct vmm_phys *p = phys;

	if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		ledger_uncharge(p->slot, p->bytes);
		free(p);
	}
}

CGPU_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle,
				 size_t size, const CUmemAllocationProp *prop,
				 unsigned long long flags)
{
	struct vmm_phys *p;
	int slot;
	CUresult r;

	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF || !handle || !prop || !size ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return REAL_CU(cuMemCreate, handle, size, prop, flags);
	slot = devmap_cuda(prop->location.id);
	p = malloc(sizeof(*p));
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (struct vmm_phys){ cgpu_round_page(size), slot, 1 };
	r = track_charge(slot, p->bytes);
	if (r != CUDA_SUCCESS) {
		free(p);
		return r;
	}
	r = REAL_CU(cuMemCreate, handle, size, prop, flags);
	if (r == CUDA_SUCCESS &&
	    track_put(&track_vmm, *handle, p->bytes, slot, T_VMM, NULL, p)) {
		REAL_CU(cuMemRelease, *handle);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (r != CUDA_SUCCESS)
		vmm_unref(p);
	return r;
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

CGPU_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			      CUmemGenericAllocationHandle handle,
			      unsigned long long flags)
{
	struct ptrmap_val h;
	struct vmm_phys *p;
	CUresult r;

	NEED_CUDA();
	if (cgpu_mode == CGPU_OFF || !ptrmap_get(&track_vmm, handle, &h))
		return REAL_CU(cuMemMap, ptr, size, offset, handle, flags);
	p = h.aux;
	__atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
	r = REAL_CU(cuMemMap, ptr, size, offset, handle, flags);
	if (r != CUDA_SUCCESS)
		vmm_unref(p);
	/* Without room for the record the reference stays: over, never
	 * under. */
	else
		track_put(&track_vmm_map, ptr, size, h.slot, T_VMM, NULL, p);
	return r;
}

/* The range is whole mappings (the driver unmaps no part of one); should a
 * driver take several end to end in one call, each goes. */
CGPU_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct ptrmap_val m;
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuMemUnmap, ptr, size);
	if (cgpu_mode == CGPU_OFF || r != CUDA_SUCCESS)
		return r;
	for (uint64_t at = ptr; at < ptr + size &&
	     ptrmap_take(&track_vmm_map, at, &m); at += m.bytes)
		track_release(&m);
	return r;
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

static CUresult create_2d_v1(void **out, void *arg)
{
	return REAL_CU(cuArrayCreate, (CUarray *)out, arg);
}

static CUresult create_3d_v1(void **out, void *arg)
{
	return REAL_CU(cuArray3DCreate, (CUarray *)out, arg);
}

/* Before CUDA 3.2: 32-bit extents, the same charge. */
CGPU_EXPORT CUresult cuArrayCreate(CUarray *pHandle,
				   const CUDA_ARRAY_DESCRIPTOR_v1 *d)
{
	CUDA_ARRAY3D_DESCRIPTOR d3;

	NEED_CUDA();
	if (d)
		d3 = (CUDA_ARRAY3D_DESCRIPTOR){ d->Width, d->Height, 0,
						d->Format, d->NumChannels, 0 };
	return array_create((void **)pHandle, d ? &d3 : NULL, 1, create_2d_v1,
			    (void *)d);
}

CGPU_EXPORT CUresult cuArray3DCreate(CUarray *pHandle,
				     const CUDA_ARRAY3D_DESCRIPTOR_v1 *d)
{
	CUDA_ARRAY3D_DESCRIPTOR d3;

	NEED_CUDA();
	if (d)
		d3 = (CUDA_ARRAY3D_DESCRIPTOR){ d->Width, d->Height, d->Depth,
						d->Format, d->NumChannels,
						d->Flags };
	return array_create((void **)pHandle, d ? &d3 : NULL, 1, create_3d_v1,
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
