// SPDX-License-Identifier: MIT
/*
 * A context takes its memory with it when it is destroyed, and a primary
 * context when it is reset or released for the last time: the charges for
 * that memory go back then.
 */
#include "gate.h"
#include "budget.h"
#include "track.h"

#define MAX_DEV 64

static CUcontext primary[MAX_DEV];	/* learnt from cuDevicePrimaryCtxRetain */

static CUcontext primary_of(CUdevice dev)
{
	return dev >= 0 && dev < MAX_DEV ?
		       __atomic_load_n(&primary[dev], __ATOMIC_ACQUIRE) :
		       NULL;
}

CGPU_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	CUresult r;

	NEED_CUDA();
	gate_forget_ctx(ctx);
	r = REAL_CU(cuCtxDestroy_v2, ctx);
	if (r == CUDA_SUCCESS && cgpu_mode != CGPU_OFF) {
		track_purge_ctx(ctx);
		graph_ctx_gone();
	}
	return r;
}

CGPU_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuDevicePrimaryCtxRetain, pctx, dev);
	if (r == CUDA_SUCCESS && dev >= 0 && dev < MAX_DEV)
		__atomic_store_n(&primary[dev], *pctx, __ATOMIC_RELEASE);
	return r;
}

/* After a release: the context went with its last reference. */
static CUresult released(CUdevice dev, CUresult r)
{
	unsigned int flags;
	int active = 1;

	if (r == CUDA_SUCCESS && cgpu_mode != CGPU_OFF &&
	    REAL_CU(cuDevicePrimaryCtxGetState, dev, &flags, &active) ==
		    CUDA_SUCCESS &&
	    !active) {
		track_purge_ctx(primary_of(dev));
		graph_ctx_gone();
	}
	return r;
}

static CUresult reset(CUdevice dev, CUresult r)
{
	if (r == CUDA_SUCCESS && cgpu_mode != CGPU_OFF) {
		track_purge_ctx(primary_of(dev));
		graph_ctx_gone();
	}
	return r;
}

/* The names before CUDA 11 (what CUDA 11.x's cudart asks cuGetProcAddress
 * for with its version, e.g. in cudaDeviceReset) do the same. */
CGPU_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	NEED_CUDA();
	return released(dev, REAL_CU(cuDevicePrimaryCtxRelease_v2, dev));
}

CGPU_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	NEED_CUDA();
	return released(dev, REAL_CU(cuDevicePrimaryCtxRelease, dev));
}

CGPU_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	NEED_CUDA();
	return reset(dev, REAL_CU(cuDevicePrimaryCtxReset_v2, dev));
}

CGPU_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
	NEED_CUDA();
	return reset(dev, REAL_CU(cuDevicePrimaryCtxReset, dev));
}
