// SPDX-License-Identifier: MIT
/*
 * CUDA arrays and mipmapped arrays: device memory without a device pointer.
 * The simulator keeps no texels (no array copies are implemented), only the
 * physical memory they take: their texel bytes in whole 2 MiB pages.
 */
#include <stdlib.h>

#include "arraysize.h"
#include "core.h"

struct CUarray_st {
	int mipmapped;
};

static CUresult create(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d,
		       unsigned levels, int mipmapped)
{
	struct CUctx_st *c;
	struct ptrmap_val v = { .kind = SIM_ARRAY };
	struct CUarray_st *a;
	CUresult r = sim_current(&c);

	if (r)
		return r;
	if (!out || !d || !d->Width || !cgpu_format_bytes(d->Format) || !levels ||
	    (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
		return CUDA_ERROR_INVALID_VALUE;
	v.bytes = cgpu_array_bytes(d, levels);
	a = malloc(sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->mipmapped = mipmapped;
	if (sim_phys_reserve(c->phys, cgpu_round_page(v.bytes))) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	v.slot = (uint32_t)c->phys;
	v.ctx = c;
	v.aux = a;
	if (ptrmap_put(&g_sim_mem, (uintptr_t)a, &v)) {
		sim_phys_release(c->phys, cgpu_round_page(v.bytes));
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = a;
	return CUDA_SUCCESS;
}

static CUresult destroy(void *h, int mipmapped)
{
	struct ptrmap_val v;
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!ptrmap_take(&g_sim_mem, (uintptr_t)h, &v))
		return CUDA_ERROR_INVALID_HANDLE;
	if (v.kind != SIM_ARRAY ||
	    ((struct CUarray_st *)v.aux)->mipmapped != mipmapped) {
		ptrmap_put(&g_sim_mem, (uintptr_t)h, &v);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	free(v.aux);
	sim_phys_release((int)v.slot, cgpu_round_page(v.bytes));
	return CUDA_SUCCESS;
}

SIM_API CUresult cuArrayCreate_v2(CUarray *pHandle,
				  const CUDA_ARRAY_DESCRIPTOR *d)
{
	CUDA_ARRAY3D_DESCRIPTOR d3;

	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	d3 = (CUDA_ARRAY3D_DESCRIPTOR){ d->Width, d->Height, 0, d->Format,
					d->NumChannels, 0 };
	return create(pHandle, &d3, 1, 0);
}

SIM_API CUresult cuArray3DCreate_v2(CUarray *pHandle,
				    const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	return create(pHandle, d, 1, 0);
}

SIM_API CUresult cuArrayCreate(CUarray *pHandle,
			       const CUDA_ARRAY_DESCRIPTOR_v1 *d)
{
	CUDA_ARRAY3D_DESCRIPTOR d3;

	if (d)
		d3 = (CUDA_ARRAY3D_DESCRIPTOR){ d->Width, d->Height, 0, d->Format,
						d->NumChannels, 0 };
	return create(pHandle, d ? &d3 : NULL, 1, 0);
}

SIM_API CUresult cuArray3DCreate(CUarray *pHandle,
				 const CUDA_ARRAY3D_DESCRIPTOR_v1 *d)
{
	CUDA_ARRAY3D_DESCRIPTOR d3;

	if (d)
		d3 = (CUDA_ARRAY3D_DESCRIPTOR){ d->Width, d->Height, d->Depth,
						d->Format, d->NumChannels,
						d->Flags };
	return create(pHandle, d ? &d3 : NULL, 1, 0);
}

SIM_API CUresult cuArrayDestroy(CUarray hArray)
{
	return destroy(hArray, 0);
}

SIM_API CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
					const CUDA_ARRAY3D_DESCRIPTOR *d,
					unsigned int numMipmapLevels)
{
	return create((CUarray *)pHandle, d, numMipmapLevels, 1);
}

SIM_API CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
	return destroy(hMipmappedArray, 1);
}
