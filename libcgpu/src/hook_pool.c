// SPDX-License-Identifier: MIT
/*
 * Stream-ordered allocations are charged for what their pool reserves, not
 * for what is asked: a pool keeps freed memory and grows in chunks.
 *
 * Before the driver is asked, the ask (rounded up to 2 MiB pages) less what
 * the pool holds idle is charged; afterwards the charge is set to the pool's
 * CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT ("reconcile"). Growth past the
 * estimate that the budget cannot take is undone and refused. Pools release
 * memory at synchronisation points, on trim and on destroy: each reconciles
 * there.
 *
 * The table of pools grows as pools are made: a pool it cannot record is
 * one it cannot charge, so its allocations are refused.
 */
#include <stdlib.h>

#include "devmap.h"
#include "budget.h"
#include "memsize.h"
#include "track.h"

#define MAX_DEV 64

struct pool {
	CUmemoryPool handle;
	int slot;
	int destroyed;
	uint64_t charged;	/* what the budget carries for this pool */
	uint64_t inflight;	/* estimates charged for calls in progress */
	uint64_t live;		/* bytes of allocations from it not yet freed */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool *pools;	/* realloc'd: no pointer outlives lock */
static int npools, cap;
static int said_full;
static CUmemoryPool current[MAX_DEV];	/* cuDeviceGetMemPool, cached */

void pool_fork(enum track_fork_phase phase)
{
	if (track_fork_lock(phase, &lock))
		npools = 0;
}

/* Caller holds lock. */
static struct pool *find(CUmemoryPool h)
{
	for (int i = 0; i < npools; i++)
		if (pools[i].handle == h)
			return &pools[i];
	return NULL;
}

/* Caller holds lock. NULL when there is no memory to record another. */
static struct pool *get(CUmemoryPool h, int slot)
{
	struct pool *p = find(h);

	if (p)
		return p;
	if (npools == cap) {
		int n = cap ? 2 * cap : 16;
		struct pool *grown = realloc(pools, (size_t)n * sizeof(*pools));

		if (!grown)
			return NULL;
		pools = grown;
		cap = n;
	}
	p = &pools[npools++];
	*p = (struct pool){ .handle = h, .slot = slot };
	return p;
}

/* Caller holds lock. */
static void drop(struct pool *p)
{
	ledger_uncharge(p->slot, p->charged);
	*p = pools[--npools];
}

/* Sets the charge to what the driver says the pool reserves. 0, or -1 when
 * the budget cannot take the growth (charge unchanged). */
static int reconcile(CUmemoryPool h)
{
	cuuint64_t reserved;
	struct pool *p;
	int err = 0;

	if (REAL_CU(cuMemPoolGetAttribute, h, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
		    &reserved) != CUDA_SUCCESS)
		return 0;
	pthread_mutex_lock(&lock);
	p = find(h);
	if (p && !p->destroyed) {
		uint64_t want = reserved + p->inflight;

		if (want > p->charged) {
			if (ledger_charge(p->slot, want - p->charged))
				err = -1;
			else
				p->charged = want;
		} else if (want < p->charged) {
			ledger_uncharge(p->slot, p->charged - want);
			p->charged = want;
		}
	}
	pthread_mutex_unlock(&lock);
	return err;
}

void pool_released(void *pool, uint64_t bytes)
{
	struct pool *p;

	pthread_mutex_lock(&lock);
	p = find(pool);
	if (p) {
		p->live -= bytes;
		if (p->destroyed && p->live == 0)
			drop(p);
	}
	pthread_mutex_unlock(&lock);
}

/* Without memory for the list, the pools reconcile at a later sync. */
static void reconcile_all(void)
{
	CUmemoryPool *hs;
	int n = 0;

	pthread_mutex_lock(&lock);
	hs = malloc((size_t)npools * sizeof(*hs) + 1);
	for (int i = 0; hs && i < npools; i++)
		if (!pools[i].destroyed)
			hs[n++] = pools[i].handle;
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++)
		reconcile(hs[i]);
	free(hs);
}

/* The pool stream-ordered allocations on dev come from now. */
static CUmemoryPool current_pool(CUdevice dev)
{
	CUmemoryPool h = NULL;

	if (dev < 0 || dev >= MAX_DEV)
		return NULL;
	h = __atomic_load_n(&current[dev], __ATOMIC_ACQUIRE);
	if (!h && REAL_CU(cuDeviceGetMemPool, &h, dev) == CUDA_SUCCESS)
		__atomic_store_n(&current[dev], h, __ATOMIC_RELEASE);
	return h;
}

struct async_call {
	CUdeviceptr *dptr;
	size_t bytes;
	CUmemoryPool pool;	/* NULL: the device's current pool */
	CUstream stream;
	CUresult (*from_current)(CUdeviceptr *, size_t, CUstream);
	CUresult (*from_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
};

static CUresult call(struct async_call *a)
{
	if (!a->from_current && !a->from_pool)
		return CUDA_ERROR_NOT_SUPPORTED;
	return a->from_current ?
		       a->from_current(a->dptr, a->bytes, a->stream) :
		       a->from_pool(a->dptr, a->bytes, a->pool, a->stream);
}

/* Growth the budget refused: the allocation goes back, the pool gives its
 * idle memory back to the device. */
static void undo(struct async_call *a, CUmemoryPool h)
{
	struct ptrmap_val v;

	REAL_CU(cuMemFreeAsync, *a->dptr, a->stream);
	REAL_CU(cuStreamSynchronize, a->stream);
	REAL_CU(cuMemPoolTrimTo, h, 0);
	if (ptrmap_take(&track_dptr, *a->dptr, &v))
		pool_released(h, v.bytes);
	reconcile(h);
}

/* Work on a capturing stream is not done but recorded into a graph: an
 * allocation there is a graph allocation node (hook_graph.c charges it when
 * its graph maps it), a free a free node. */
static int capturing(CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	return REAL_CU(cuStreamIsCapturing, s, &st) == CUDA_SUCCESS &&
	       st != CU_STREAM_CAPTURE_STATUS_NONE;
}

static CUresult async_alloc(struct async_call *a)
{
	CUcontext ctx;
	CUdevice dev;
	CUmemoryPool h = a->pool;
	struct pool *p;
	uint64_t est = cgpu_round_page(a->bytes), pre = 0;
	int slot;
	CUresult r;

	if (cgpu_mode == CGPU_OFF || !a->dptr || !a->bytes ||
	    track_current(&ctx, &dev, &slot) != CUDA_SUCCESS ||
	    capturing(a->stream))
		return call(a);
	if (!h)
		h = current_pool(dev);
	pthread_mutex_lock(&lock);
	p = h ? get(h, slot) : NULL;
	if (p) {
		uint64_t idle = p->charged > p->live + p->inflight ?
					p->charged - p->live - p->inflight : 0;

		pre = est > idle ? est - idle : 0;
		if (pre && track_charge(p->slot, pre) != CUDA_SUCCESS) {
			pthread_mutex_unlock(&lock);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		p->charged += pre;
		p->inflight += pre;
	}
	pthread_mutex_unlock(&lock);
	if (!p) {
		cgpu_say_once(&said_full,
			      "cgpu: no memory to record another memory pool (or no pool for the device); its stream-ordered allocations are refused");
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r = call(a);
	pthread_mutex_lock(&lock);
	p = find(h);
	if (p) {
		p->inflight -= pre;
		if (r == CUDA_SUCCESS)
			p->live += a->bytes;
	}
	pthread_mutex_unlock(&lock);
	if (r == CUDA_SUCCESS &&
	    track_put(&track_dptr, *a->dptr, a->bytes, slot, T_POOLED, NULL, h)) {
		pool_released(h, a->bytes);
		REAL_CU(cuMemFreeAsync, *a->dptr, a->stream);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (reconcile(h) && r == CUDA_SUCCESS) {
		undo(a, h);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	return r;
}

CGPU_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize,
				     CUstream hStream)
{
	NEED_CUDA();
	return async_alloc(&(struct async_call){
		.dptr = dptr, .bytes = bytesize, .stream = hStream,
		.from_current = real_cuMemAllocAsync });
}

CGPU_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
					  CUstream hStream)
{
	NEED_CUDA();
	return async_alloc(&(struct async_call){
		.dptr = dptr, .bytes = bytesize, .stream = hStream,
		.from_current = real_cuMemAllocAsync_ptsz });
}

CGPU_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr,
					     size_t bytesize, CUmemoryPool pool,
					     CUstream hStream)
{
	NEED_CUDA();
	return async_alloc(&(struct async_call){
		.dptr = dptr, .bytes = bytesize, .pool = pool, .stream = hStream,
		.from_pool = real_cuMemAllocFromPoolAsync });
}

CGPU_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr,
						  size_t bytesize,
						  CUmemoryPool pool,
						  CUstream hStream)
{
	NEED_CUDA();
	return async_alloc(&(struct async_call){
		.dptr = dptr, .bytes = bytesize, .pool = pool, .stream = hStream,
		.from_pool = real_cuMemAllocFromPoolAsync_ptsz });
}

static CUresult free_async(uint64_t key, void *arg)
{
	void **a = arg;

	return ((CUresult(*)(CUdeviceptr, CUstream))a[0])(key, a[1]);
}

static CUresult free_async_with(CUresult (*fn)(CUdeviceptr, CUstream),
				CUdeviceptr dptr, CUstream stream)
{
	void *arg[2] = { (void *)fn, stream };

	if (!fn)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (cgpu_mode == CGPU_OFF || capturing(stream))
		return fn(dptr, stream);
	return track_free(&track_dptr, dptr, free_async, arg);
}

CGPU_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	NEED_CUDA();
	return free_async_with(real_cuMemFreeAsync, dptr, hStream);
}

CGPU_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	NEED_CUDA();
	return free_async_with(real_cuMemFreeAsync_ptsz, dptr, hStream);
}

CGPU_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool,
				     const CUmemPoolProps *props)
{
	CUresult r;
	int slot;

	NEED_CUDA();
	r = REAL_CU(cuMemPoolCreate, pool, props);
	if (r != CUDA_SUCCESS || cgpu_mode == CGPU_OFF ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return r;
	slot = devmap_cuda(props->location.id);
	pthread_mutex_lock(&lock);
	if (slot >= 0)
		get(*pool, slot);
	pthread_mutex_unlock(&lock);
	return r;
}

/* The driver frees a destroyed pool's memory once its last allocation is
 * freed; its charge goes with it then. */
CGPU_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	struct pool *p;
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuMemPoolDestroy, pool);
	if (r != CUDA_SUCCESS || cgpu_mode == CGPU_OFF)
		return r;
	for (int i = 0; i < MAX_DEV; i++)
		__atomic_compare_exchange_n(&current[i], &(CUmemoryPool){ pool },
					    NULL, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
	pthread_mutex_lock(&lock);
	p = find(pool);
	if (p) {
		p->destroyed = 1;
		if (p->live == 0)
			drop(p);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

CGPU_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuMemPoolTrimTo, pool, minBytesToKeep);
	if (r == CUDA_SUCCESS && cgpu_mode != CGPU_OFF)
		reconcile(pool);
	return r;
}

CGPU_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool,
					   CUmemPool_attribute attr, void *value)
{
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuMemPoolSetAttribute, pool, attr, value);
	if (r == CUDA_SUCCESS && cgpu_mode != CGPU_OFF)
		reconcile(pool);
	return r;
}

/* After the driver took it: the pool cuMemAllocAsync on dev now takes from. */
static CUresult now_current(CUresult r, CUdevice dev, CUmemoryPool pool)
{
	if (r == CUDA_SUCCESS && dev >= 0 && dev < MAX_DEV)
		__atomic_store_n(&current[dev], pool, __ATOMIC_RELEASE);
	return r;
}

CGPU_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	NEED_CUDA();
	return now_current(REAL_CU(cuDeviceSetMemPool, dev, pool), dev, pool);
}

/* CUDA 13.0: any location's pool of any type; only a device's pool of device
 * memory is the one cuMemAllocAsync takes from. */
CGPU_EXPORT CUresult cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type,
				     CUmemoryPool pool)
{
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuMemSetMemPool, location, type, pool);
	if (!location || location->type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return r;
	return now_current(r, location->id, pool);
}

/* Synchronisation is where pools hand memory back to the device. */
static CUresult synced(CUresult r)
{
	if (r == CUDA_SUCCESS && cgpu_mode != CGPU_OFF &&
	    __atomic_load_n(&npools, __ATOMIC_RELAXED))
		reconcile_all();
	return r;
}

CGPU_EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
	NEED_CUDA();
	return synced(REAL_CU(cuStreamSynchronize, hStream));
}

CGPU_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
	NEED_CUDA();
	return synced(REAL_CU(cuStreamSynchronize_ptsz, hStream));
}

CGPU_EXPORT CUresult cuCtxSynchronize(void)
{
	NEED_CUDA();
	return synced(REAL_CU(cuCtxSynchronize));
}

CGPU_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	NEED_CUDA();
	return synced(REAL_CU(cuCtxSynchronize_v2, ctx));
}

CGPU_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
	NEED_CUDA();
	return synced(REAL_CU(cuEventSynchronize, hEvent));
}
