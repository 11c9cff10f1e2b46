// SPDX-License-Identifier: MIT
/*
 * Stream-ordered allocator. A pool reserves device memory in chunks of whole
 * 2 MiB pages, one allocation per chunk, and reuses a freed chunk for any
 * request it can hold, so what a pool reserves is at least, and often more
 * than, what is allocated from it. Free chunks go back to the device at
 * synchronisation points above the release threshold (default 0), on
 * cuMemPoolTrimTo, and when the pool is destroyed. Stream order is not
 * modelled: a freed chunk is reusable at once.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

#include "pool.h"

#define POOL_MAGIC 0x504f4f4cu

struct chunk {
	struct chunk *next;
	struct CUmemPoolHandle_st *pool;
	void *addr;
	uint64_t size;		/* reserved bytes */
	uint64_t used;		/* bytes asked by the allocation in it */
	int in_use;
};

struct CUmemPoolHandle_st {
	uint32_t magic;
	int phys;
	int is_default;
	int destroyed;
	int reuse[3];
	uint64_t threshold, reserved, reserved_high, used, used_high;
	struct chunk *chunks;
	struct CUmemPoolHandle_st *next;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUmemPoolHandle_st *pools;
static struct CUmemPoolHandle_st *default_pool[SIM_MAX_GPUS];
static struct CUmemPoolHandle_st *current_pool[SIM_MAX_GPUS];

static void after_fork_child(void)
{
	pthread_mutex_init(&pool_lock, NULL);
	pools = NULL;
	for (int i = 0; i < SIM_MAX_GPUS; i++)
		default_pool[i] = current_pool[i] = NULL;
}

__attribute__((constructor)) static void pool_atfork(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

static struct CUmemPoolHandle_st *new_pool(int phys, int is_default)
{
	struct CUmemPoolHandle_st *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->magic = POOL_MAGIC;
	p->phys = phys;
	p->is_default = is_default;
	p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
	p->next = pools;
	pools = p;
	return p;
}

/* Caller holds pool_lock. */
static CUresult device_pool(CUdevice dev, int current,
			    struct CUmemPoolHandle_st **out)
{
	int phys;
	CUresult r = sim_device(dev, &phys);

	if (r)
		return r;
	if (!default_pool[dev])
		default_pool[dev] = new_pool(phys, 1);
	if (!default_pool[dev])
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = current && current_pool[dev] ? current_pool[dev] :
					      default_pool[dev];
	return CUDA_SUCCESS;
}

static CUresult valid_pool(struct CUmemPoolHandle_st *p)
{
	return p && p->magic == POOL_MAGIC && !p->destroyed ?
		       CUDA_SUCCESS :
		       CUDA_ERROR_INVALID_VALUE;
}

/* Caller holds pool_lock. */
static void release_chunk(struct CUmemPoolHandle_st *p, struct chunk **link)
{
	struct chunk *c = *link;

	*link = c->next;
	munmap(c->addr, c->size);
	sim_phys_release(p->phys, c->size);
	p->reserved -= c->size;
	free(c);
}

/* Caller holds pool_lock. */
static void trim(struct CUmemPoolHandle_st *p, uint64_t keep)
{
	struct chunk **link = &p->chunks;

	while (*link && p->reserved > keep) {
		if ((*link)->in_use)
			link = &(*link)->next;
		else
			release_chunk(p, link);
	}
}

void sim_pools_trim_on_sync(void)
{
	pthread_mutex_lock(&pool_lock);
	for (struct CUmemPoolHandle_st *p = pools; p; p = p->next)
		trim(p, p->threshold);
	pthread_mutex_unlock(&pool_lock);
}

static void account_use(struct CUmemPoolHandle_st *p, struct chunk *c,
			uint64_t bytes)
{
	c->in_use = 1;
	c->used = bytes;
	p->used += bytes;
	if (p->used > p->used_high)
		p->used_high = p->used;
	if (p->reserved > p->reserved_high)
		p->reserved_high = p->reserved;
}

static struct chunk *reuse_chunk(struct CUmemPoolHandle_st *p, uint64_t need)
{
	struct chunk *best = NULL;

	for (struct chunk *c = p->chunks; c; c = c->next)
		if (!c->in_use && c->size >= need &&
		    (!best || c->size < best->size))
			best = c;
	return best;
}

static CUresult grow(struct CUmemPoolHandle_st *p, uint64_t need,
		     struct chunk **out)
{
	struct chunk *c = calloc(1, sizeof(*c));

	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (sim_phys_reserve(p->phys, need)) {
		/* Idle chunks of this pool may be what fills the device. */
		trim(p, 0);
		if (sim_phys_reserve(p->phys, need)) {
			free(c);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	c->addr = mmap(NULL, need, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (c->addr == MAP_FAILED) {
		sim_phys_release(p->phys, need);
		free(c);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	c->pool = p;
	c->size = need;
	c->next = p->chunks;
	p->chunks = c;
	p->reserved += need;
	*out = c;
	return CUDA_SUCCESS;
}

static CUresult pool_alloc(struct CUmemPoolHandle_st *p, CUdeviceptr *dptr,
			   size_t bytes, CUstream stream)
{
	struct ptrmap_val v = { .bytes = bytes, .kind = SIM_POOLED };
	struct chunk *c;
	struct sim_capture *cap;
	CUresult r = sim_stream_check(stream);

	if (r)
		return r;
	if (!dptr || !bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (valid_pool(p))
		return CUDA_ERROR_INVALID_VALUE;
	/* Captured, it is a graph allocation: the pool gives it nothing. */
	cap = sim_capturing(stream);
	if (cap)
		return sim_capture_alloc(cap, bytes, dptr);
	c = reuse_chunk(p, cgpu_round_page(bytes));
	if (!c)
		r = grow(p, cgpu_round_page(bytes), &c);
	if (r)
		return r;
	account_use(p, c, bytes);
	v.slot = (uint32_t)p->phys;
	v.aux = c;
	if (ptrmap_put(&g_sim_mem, (uintptr_t)c->addr, &v)) {
		c->in_use = 0;
		p->used -= bytes;
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = (uintptr_t)c->addr;
	return CUDA_SUCCESS;
}

void sim_pool_put_back(void *chunk)
{
	struct chunk *c = chunk;
	struct CUmemPoolHandle_st *p = c->pool;

	pthread_mutex_lock(&pool_lock);
	c->in_use = 0;
	p->used -= c->used;
	if (p->destroyed)
		trim(p, 0);
	pthread_mutex_unlock(&pool_lock);
}

SIM_API CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize,
				 CUstream hStream)
{
	struct CUctx_st *ctx;
	struct CUmemPoolHandle_st *p;
	CUresult r = sim_current(&ctx);

	if (r)
		return r;
	pthread_mutex_lock(&pool_lock);
	r = device_pool(ctx->ordinal, 1, &p);
	if (r == CUDA_SUCCESS)
		r = pool_alloc(p, dptr, bytesize, hStream);
	pthread_mutex_unlock(&pool_lock);
	return r;
}

SIM_API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
					 CUmemoryPool pool, CUstream hStream)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	pthread_mutex_lock(&pool_lock);
	r = pool_alloc(pool, dptr, bytesize, hStream);
	pthread_mutex_unlock(&pool_lock);
	return r;
}

SIM_API CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	struct ptrmap_val v;
	struct sim_capture *cap;
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = sim_stream_check(hStream);
	if (r)
		return r;
	cap = sim_capturing(hStream);
	if (cap)
		return sim_capture_free(cap, dptr);
	if (!ptrmap_take(&g_sim_mem, dptr, &v))
		return sim_graph_mem_free(dptr);
	if (v.kind != SIM_POOLED) {
		ptrmap_put(&g_sim_mem, dptr, &v);
		return CUDA_ERROR_INVALID_VALUE;
	}
	sim_pool_put_back(v.aux);
	return CUDA_SUCCESS;
}

/*
 * A function of its own rather than an alias: dladdr names an address by one
 * of its aliases, and which one shifts as symbols are added; cudaprobe names
 * the variant cuGetProcAddress chose by address (test/suites/30).
 */
SIM_API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
				      CUstream hStream)
{
	return cuMemAllocAsync(dptr, bytesize, hStream);
}
SIM_API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t,
					      CUmemoryPool, CUstream)
	__attribute__((alias("cuMemAllocFromPoolAsync")));
SIM_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream)
	__attribute__((alias("cuMemFreeAsync")));

SIM_API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out,
					   CUdevice dev)
{
	CUresult r;

	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&pool_lock);
	r = device_pool(dev, 0, pool_out);
	pthread_mutex_unlock(&pool_lock);
	return r;
}

SIM_API CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CUresult r;

	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&pool_lock);
	r = device_pool(dev, 1, pool);
	pthread_mutex_unlock(&pool_lock);
	return r;
}

SIM_API CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	int phys;
	CUresult r = sim_device(dev, &phys);

	if (r)
		return r;
	pthread_mutex_lock(&pool_lock);
	r = valid_pool(pool);
	if (r == CUDA_SUCCESS && pool->phys != phys)
		r = CUDA_ERROR_INVALID_DEVICE;
	if (r == CUDA_SUCCESS)
		current_pool[dev] = pool;
	pthread_mutex_unlock(&pool_lock);
	return r;
}

/* CUDA 13.0: a location's current pool; only devices' pools of device memory
 * are simulated. Exported like cuCtxSynchronize_v2 (cuda_ctx.c), not handed
 * out by cuGetProcAddress. */
SIM_API CUresult cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type,
				 CUmemoryPool pool)
{
	if (!location)
		return CUDA_ERROR_INVALID_VALUE;
	if (location->type != CU_MEM_LOCATION_TYPE_DEVICE || type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_NOT_SUPPORTED;
	return cuDeviceSetMemPool(location->id, pool);
}

SIM_API CUresult cuMemPoolCreate(CUmemoryPool *pool,
				 const CUmemPoolProps *props)
{
	int phys;
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    props->handleTypes > CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_INVALID_VALUE;
	r = sim_device(props->location.id, &phys);
	if (r)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&pool_lock);
	*pool = new_pool(phys, 0);
	pthread_mutex_unlock(&pool_lock);
	return *pool ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Chunks still allocated go back to the device when they are freed. The
 * handle is never reused, so a stale one stays refused. */
SIM_API CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	CUresult r;

	pthread_mutex_lock(&pool_lock);
	r = valid_pool(pool);
	if (r == CUDA_SUCCESS && pool->is_default)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		for (int i = 0; i < SIM_MAX_GPUS; i++)
			if (current_pool[i] == pool)
				current_pool[i] = NULL;
		pool->destroyed = 1;
		trim(pool, 0);
	}
	pthread_mutex_unlock(&pool_lock);
	return r;
}

SIM_API CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	CUresult r;

	pthread_mutex_lock(&pool_lock);
	r = valid_pool(pool);
	if (r == CUDA_SUCCESS)
		trim(pool, minBytesToKeep);
	pthread_mutex_unlock(&pool_lock);
	return r;
}

static CUresult pool_attr(struct CUmemPoolHandle_st *p, CUmemPool_attribute a,
			  void *value, int set)
{
	uint64_t *u = value;
	int *i = value;

	switch (a) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		if (set)
			p->reuse[a - 1] = *i != 0;
		else
			*i = p->reuse[a - 1];
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		if (set)
			p->threshold = *u;
		else
			*u = p->threshold;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		if (set)
			return CUDA_ERROR_INVALID_VALUE;
		*u = a == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT ? p->reserved :
								 p->used;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH: {
		uint64_t *high = a == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH ?
					 &p->reserved_high :
					 &p->used_high;
		/* Only a reset to 0 may be written. */
		if (set && *u)
			return CUDA_ERROR_INVALID_VALUE;
		if (set)
			*high = 0;
		else
			*u = *high;
		return CUDA_SUCCESS;
	}
	}
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult pool_attr_locked(CUmemoryPool pool, CUmemPool_attribute attr,
				 void *value, int set)
{
	CUresult r;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&pool_lock);
	r = valid_pool(pool);
	if (r == CUDA_SUCCESS)
		r = pool_attr(pool, attr, value, set);
	pthread_mutex_unlock(&pool_lock);
	return r;
}

SIM_API CUresult cuMemPoolSetAttribute(CUmemoryPool pool,
				       CUmemPool_attribute attr, void *value)
{
	return pool_attr_locked(pool, attr, value, 1);
}

SIM_API CUresult cuMemPoolGetAttribute(CUmemoryPool pool,
				       CUmemPool_attribute attr, void *value)
{
	return pool_attr_locked(pool, attr, value, 0);
}
