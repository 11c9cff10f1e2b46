// SPDX-License-Identifier: MIT
/* Contexts: a per-thread stack, primary contexts with a retain count. */
#include <stdlib.h>

#include "core.h"
#include "rmclient.h"

#define STACK_MAX 32

static __thread struct CUctx_st *tls_stack[STACK_MAX];
static __thread int tls_depth;

CUresult sim_valid_ctx(struct CUctx_st *ctx)
{
	if (!ctx || ctx->magic != CTX_MAGIC ||
	    (ctx->primary && ctx->refs == 0))
		return CUDA_ERROR_INVALID_CONTEXT;
	return CUDA_SUCCESS;
}

CUresult sim_current(struct CUctx_st **ctx)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	*ctx = tls_depth ? tls_stack[tls_depth - 1] : NULL;
	return sim_valid_ctx(*ctx);
}

static void unbind_everywhere_in_thread(struct CUctx_st *ctx)
{
	int j = 0;

	for (int i = 0; i < tls_depth; i++)
		if (tls_stack[i] != ctx)
			tls_stack[j++] = tls_stack[i];
	tls_depth = j;
}

/* A context's own memory in the driver, as libcuda takes it at creation, and its way
 * to the GPU's engine; 0 or -1. */
static int ctx_take(struct CUctx_st *c)
{
	uint64_t bytes = sim_ctx_reserve();

	if (!sim_engine(c->phys))
		return -1;
	if (!bytes)
		return 0;
	if (sim_rm_take(c->phys, bytes))
		return -1;
	c->reserve = bytes;
	return 0;
}

static void ctx_give(struct CUctx_st *c)
{
	if (c->reserve)
		sim_rm_give(c->phys, c->reserve);
	c->reserve = 0;
}

SIM_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags,
				CUdevice dev)
{
	int phys;
	CUresult r = sim_device(dev, &phys);
	struct CUctx_st *c;

	if (r)
		return r;
	if (!pctx || flags > 0xff)
		return CUDA_ERROR_INVALID_VALUE;
	if (tls_depth == STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->magic = CTX_MAGIC;
	c->ordinal = dev;
	c->phys = phys;
	if (ctx_take(c)) {
		free(c);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	tls_stack[tls_depth++] = c;
	*pctx = c;
	return CUDA_SUCCESS;
}

/* Every SM is the context's: an SM-count affinity is accepted and moot. */
SIM_API CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params,
				int numParams, unsigned int flags, CUdevice dev)
{
	if (numParams < 0 || (numParams && !params))
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < numParams; i++)
		if (params[i].type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
			return CUDA_ERROR_INVALID_VALUE;
	return cuCtxCreate_v2(pctx, flags, dev);
}

SIM_API CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!ctx || ctx->magic != CTX_MAGIC || ctx->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	sim_free_ctx_memory(ctx);
	ctx_give(ctx);
	unbind_everywhere_in_thread(ctx);
	ctx->magic = 0;
	free(ctx);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (ctx && sim_valid_ctx(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (tls_depth == 0)
		tls_depth = 1;
	tls_stack[tls_depth - 1] = ctx;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = tls_depth ? tls_stack[tls_depth - 1] : NULL;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (sim_valid_ctx(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (tls_depth == STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	tls_stack[tls_depth++] = ctx;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (tls_depth == 0 || !tls_stack[tls_depth - 1])
		return CUDA_ERROR_INVALID_CONTEXT;
	tls_depth--;
	if (pctx)
		*pctx = tls_stack[tls_depth];
	return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxGetDevice(CUdevice *device)
{
	struct CUctx_st *c;
	CUresult r = sim_current(&c);

	if (r)
		return r;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = c->ordinal;
	return CUDA_SUCCESS;
}

static CUresult sync_ctx(struct CUctx_st *c)
{
	sim_wait_until(__atomic_load_n(&c->last_end, __ATOMIC_ACQUIRE));
	sim_pools_trim_on_sync();
	return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxSynchronize(void)
{
	struct CUctx_st *c;
	CUresult r = sim_current(&c);

	return r ? r : sync_ctx(c);
}

/* CUDA 13.0: the named context, or the current one for NULL. Exported, not
 * handed out by cuGetProcAddress (this driver is a 12.2 one, as 535), so that
 * libcgpu's hook of it has a driver function to reach in the tests. */
SIM_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!ctx)
		return cuCtxSynchronize();
	return sim_valid_ctx(ctx) ? CUDA_ERROR_INVALID_CONTEXT : sync_ctx(ctx);
}

SIM_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r = sim_device(dev, NULL);

	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_sim.lock);
	/* The first retain makes the context, taking its memory. */
	if (g_sim.primary[dev].refs == 0 && !g_sim.primary[dev].reserve &&
	    ctx_take(&g_sim.primary[dev]))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		g_sim.primary[dev].refs++;
	pthread_mutex_unlock(&g_sim.lock);
	if (r)
		return r;
	*pctx = &g_sim.primary[dev];
	return CUDA_SUCCESS;
}

static void primary_reset(CUdevice dev)
{
	struct CUctx_st *c = &g_sim.primary[dev];

	sim_free_ctx_memory(c);
	ctx_give(c);
	c->last_end = 0;
	c->null_tail = 0;
}

SIM_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult r = sim_device(dev, NULL);
	int last = 0;

	if (r)
		return r;
	pthread_mutex_lock(&g_sim.lock);
	if (g_sim.primary[dev].refs == 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else
		last = --g_sim.primary[dev].refs == 0;
	pthread_mutex_unlock(&g_sim.lock);
	if (last)
		primary_reset(dev);
	return r;
}

SIM_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	CUresult r = sim_device(dev, NULL);

	if (r)
		return r;
	pthread_mutex_lock(&g_sim.lock);
	g_sim.primary[dev].refs = 0;
	pthread_mutex_unlock(&g_sim.lock);
	primary_reset(dev);
	return CUDA_SUCCESS;
}

/* Before CUDA 11 the same calls, under their first names. */
SIM_API CUresult cuDevicePrimaryCtxRelease(CUdevice)
	__attribute__((alias("cuDevicePrimaryCtxRelease_v2")));
SIM_API CUresult cuDevicePrimaryCtxReset(CUdevice)
	__attribute__((alias("cuDevicePrimaryCtxReset_v2")));

SIM_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
					    int *active)
{
	CUresult r = sim_device(dev, NULL);

	if (r)
		return r;
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = 0;
	*active = __atomic_load_n(&g_sim.primary[dev].refs, __ATOMIC_ACQUIRE) > 0;
	return CUDA_SUCCESS;
}
