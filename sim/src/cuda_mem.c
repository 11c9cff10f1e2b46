// SPDX-License-Identifier: MIT
/*
 * Linear and managed device memory. Device pointers are host mappings
 * (MAP_NORESERVE, so untouched memory costs nothing) to make copies real;
 * the device's physical memory is the shared ledger in the state file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core.h"
#include "pool.h"

struct ptrmap g_sim_mem = PTRMAP_INIT;

/*
 * Small allocations (cutil/memsize.h) share 2 MiB-aligned pages of their
 * context, granule by granule, first fit; a page is charged to the device
 * when it is made and goes back with its last allocation.
 */
#define GRANULES (CGPU_PAGE / CGPU_GRANULE)

struct small_page {
	struct small_page *next;
	struct CUctx_st *ctx;
	uintptr_t base;
	uint64_t live;
	uint64_t used[GRANULES / 64];
};

static pthread_mutex_t small_lock = PTHREAD_MUTEX_INITIALIZER;
static struct small_page *small_pages;

static int granule_used(const struct small_page *pg, uint64_t i)
{
	return pg->used[i / 64] >> (i % 64) & 1;
}

static void mark(struct small_page *pg, uint64_t first, uint64_t n, int on)
{
	for (uint64_t i = first; i < first + n; i++) {
		if (on)
			pg->used[i / 64] |= 1ULL << (i % 64);
		else
			pg->used[i / 64] &= ~(1ULL << (i % 64));
	}
	pg->live = on ? pg->live + n : pg->live - n;
}

/* The first run of n free granules, or GRANULES. */
static uint64_t find_run(const struct small_page *pg, uint64_t n)
{
	uint64_t run = 0;

	for (uint64_t i = 0; i < GRANULES; i++) {
		run = granule_used(pg, i) ? 0 : run + 1;
		if (run == n)
			return i + 1 - n;
	}
	return GRANULES;
}

/* len bytes at a page boundary, so that the page of an address is the
 * address rounded down, as libcgpu assumes; 0 if there is no room. */
static uintptr_t map_pages(uint64_t len, int flags)
{
	void *p = mmap(NULL, len + CGPU_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0);
	uintptr_t base;

	if (p == MAP_FAILED)
		return 0;
	base = ((uintptr_t)p + CGPU_PAGE - 1) & ~(uintptr_t)(CGPU_PAGE - 1);
	if (base > (uintptr_t)p)
		munmap(p, base - (uintptr_t)p);
	munmap((void *)(base + len), (uintptr_t)p + CGPU_PAGE - base);
	return base;
}

static struct small_page *new_page(struct CUctx_st *c)
{
	struct small_page *pg = calloc(1, sizeof(*pg));
	uintptr_t base;

	if (!pg)
		return NULL;
	if (sim_phys_reserve(c->phys, CGPU_PAGE)) {
		free(pg);
		return NULL;
	}
	base = map_pages(CGPU_PAGE, 0);
	if (!base) {
		sim_phys_release(c->phys, CGPU_PAGE);
		free(pg);
		return NULL;
	}
	pg->ctx = c;
	pg->base = base;
	pg->next = small_pages;
	small_pages = pg;
	return pg;
}

static uintptr_t small_alloc(struct CUctx_st *c, uint64_t bytes)
{
	uint64_t n = cgpu_granules(bytes), at = GRANULES;
	struct small_page *pg;

	pthread_mutex_lock(&small_lock);
	for (pg = small_pages; pg; pg = pg->next)
		if (pg->ctx == c && pg->live + n <= GRANULES &&
		    (at = find_run(pg, n)) < GRANULES)
			break;
	if (!pg && (pg = new_page(c)))
		at = 0;
	if (pg)
		mark(pg, at, n, 1);
	pthread_mutex_unlock(&small_lock);
	return pg ? pg->base + at * CGPU_GRANULE : 0;
}

static void small_free(uintptr_t p, uint64_t bytes, int phys)
{
	struct small_page **link, *pg;

	pthread_mutex_lock(&small_lock);
	for (link = &small_pages; (pg = *link); link = &pg->next)
		if (pg->base == cgpu_page_of(p))
			break;
	if (pg) {
		mark(pg, (p - pg->base) / CGPU_GRANULE, cgpu_granules(bytes), 0);
		if (!pg->live) {
			*link = pg->next;
			munmap((void *)pg->base, CGPU_PAGE);
			sim_phys_release(phys, CGPU_PAGE);
			free(pg);
		}
	}
	pthread_mutex_unlock(&small_lock);
}

/* A fork child holds no device memory (cuda_device.c). */
void sim_small_after_fork_child(void)
{
	pthread_mutex_init(&small_lock, NULL);
	small_pages = NULL;
}

static void release_entry(uint64_t key, const struct ptrmap_val *v, void *arg)
{
	(void)arg;
	switch (v->kind) {
	case SIM_SMALL:
		small_free((uintptr_t)key, v->bytes, (int)v->slot);
		break;
	case SIM_LOW:
		munmap((void *)(uintptr_t)key, cgpu_round_page(v->bytes));
		sim_phys_release((int)v->slot, cgpu_round_page(v->bytes));
		break;
	case SIM_LINEAR:
	case SIM_MANAGED:
		munmap((void *)(uintptr_t)key, v->bytes);
		sim_phys_release((int)v->slot, cgpu_round_page(v->bytes));
		break;
	case SIM_ARRAY:
		free(v->aux);
		sim_phys_release((int)v->slot, cgpu_round_page(v->bytes));
		break;
	case SIM_POOLED:
		sim_pool_put_back(v->aux);
		break;
	}
}

void sim_free_ctx_memory(struct CUctx_st *ctx)
{
	ptrmap_take_ctx(&g_sim_mem, ctx, release_entry, NULL);
	sim_graph_mem_ctx_gone(ctx->phys);
}

static CUresult map_linear(struct CUctx_st *c, CUdeviceptr *dptr, size_t bytes,
			   enum sim_kind kind)
{
	struct ptrmap_val v = { .bytes = bytes, .slot = (uint32_t)c->phys,
				.kind = kind, .ctx = c };
	void *p;

	if (kind == SIM_LINEAR && cgpu_is_small(bytes)) {
		uintptr_t s = small_alloc(c, bytes);

		if (!s)
			return CUDA_ERROR_OUT_OF_MEMORY;
		v.kind = SIM_SMALL;
		/* Outside small_lock: the map's lock is taken first elsewhere. */
		if (ptrmap_put(&g_sim_mem, s, &v)) {
			small_free(s, bytes, c->phys);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		*dptr = s;
		return CUDA_SUCCESS;
	}
	if (sim_phys_reserve(c->phys, cgpu_round_page(bytes)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		sim_phys_release(c->phys, cgpu_round_page(bytes));
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (ptrmap_put(&g_sim_mem, (uintptr_t)p, &v)) {
		munmap(p, bytes);
		sim_phys_release(c->phys, cgpu_round_page(bytes));
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = (uintptr_t)p;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct CUctx_st *c;
	CUresult r = sim_current(&c);

	if (r)
		return r;
	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	return map_linear(c, dptr, bytesize, SIM_LINEAR);
}

/* Rows are aligned to 512 bytes, the pitch a T4 reports. */
SIM_API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch,
				    size_t WidthInBytes, size_t Height,
				    unsigned int ElementSizeBytes)
{
	struct CUctx_st *c;
	CUresult r = sim_current(&c);
	size_t pitch;

	if (r)
		return r;
	if (!dptr || !pPitch || !WidthInBytes || !Height ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 &&
	     ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	pitch = (WidthInBytes + 511) & ~(size_t)511;
	r = map_linear(c, dptr, pitch * Height, SIM_LINEAR);
	if (r == CUDA_SUCCESS)
		*pPitch = pitch;
	return r;
}

/*
 * The entry points before CUDA 3.2 hand out 32-bit device pointers. The
 * simulator maps such memory below 2 GiB (MAP_32BIT: about 1 GiB of
 * address space) and packs nothing there: each allocation has whole pages
 * of its own, which the page rule libcgpu charges by also describes.
 */
static CUresult map_low(CUdeviceptr_v1 *dptr, uint64_t bytes)
{
	struct CUctx_st *c;
	struct ptrmap_val v = { .bytes = bytes, .kind = SIM_LOW };
	uintptr_t p;
	CUresult r = sim_current(&c);

	if (r)
		return r;
	if (!dptr || !bytes)
		return CUDA_ERROR_INVALID_VALUE;
	v.slot = (uint32_t)c->phys;
	v.ctx = c;
	if (sim_phys_reserve(c->phys, cgpu_round_page(bytes)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = map_pages(cgpu_round_page(bytes), MAP_32BIT);
	if (!p || p > UINT32_MAX - cgpu_round_page(bytes) ||
	    ptrmap_put(&g_sim_mem, p, &v)) {
		if (p)
			munmap((void *)p, cgpu_round_page(bytes));
		sim_phys_release(c->phys, cgpu_round_page(bytes));
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = (CUdeviceptr_v1)p;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	return map_low(dptr, bytesize);
}

SIM_API CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch,
				 unsigned int WidthInBytes, unsigned int Height,
				 unsigned int ElementSizeBytes)
{
	uint64_t pitch = ((uint64_t)WidthInBytes + 511) & ~511ULL;
	CUresult r;

	if (!pPitch || !WidthInBytes || !Height ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 &&
	     ElementSizeBytes != 16) || pitch > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	r = map_low(dptr, pitch * Height);
	if (r == CUDA_SUCCESS)
		*pPitch = (unsigned int)pitch;
	return r;
}

SIM_API CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
	return cuMemFree_v2(dptr);
}

SIM_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
				   unsigned int flags)
{
	struct CUctx_st *c;
	CUresult r = sim_current(&c);

	if (r)
		return r;
	if (!dptr || !bytesize || (flags != 0x1 && flags != 0x2))
		return CUDA_ERROR_INVALID_VALUE;
	return map_linear(c, dptr, bytesize, SIM_MANAGED);
}

SIM_API CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct ptrmap_val v;
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!dptr)
		return CUDA_SUCCESS;
	if (!ptrmap_take(&g_sim_mem, dptr, &v))
		return sim_graph_mem_free(dptr);
	if (v.kind == SIM_ARRAY) {
		ptrmap_put(&g_sim_mem, dptr, &v);
		return CUDA_ERROR_INVALID_VALUE;
	}
	release_entry(dptr, &v, NULL);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	struct CUctx_st *c;
	uint64_t t, used;
	CUresult r = sim_current(&c);

	if (r)
		return r;
	if (!free_bytes || !total)
		return CUDA_ERROR_INVALID_VALUE;
	sim_phys_info(c->phys, &t, &used);
	*total = t;
	*free_bytes = t - used;
	return CUDA_SUCCESS;
}

/* Synchronous copies wait for the context's queued work first. */
static CUresult sync_ctx(void)
{
	struct CUctx_st *c;
	CUresult r = sim_current(&c);

	if (r == CUDA_SUCCESS)
		sim_wait_until(__atomic_load_n(&c->last_end, __ATOMIC_ACQUIRE));
	return r;
}

/* The whole range must lie inside one live allocation. */
static int valid_range(CUdeviceptr p, size_t n)
{
	struct ptrmap_val v;

	return ptrmap_get(&g_sim_mem, p, &v) && v.kind != SIM_ARRAY &&
	       n <= v.bytes;
}

/* A copy's bytes, once r says the stream or context is ready for them. */
static CUresult htod(CUdeviceptr dst, const void *src, size_t n, CUresult r)
{
	if (r)
		return r;
	if (!src || !valid_range(dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy((void *)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

static CUresult dtoh(void *dst, CUdeviceptr src, size_t n, CUresult r)
{
	if (r)
		return r;
	if (!dst || !valid_range(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost,
				 size_t ByteCount)
{
	return htod(dstDevice, srcHost, ByteCount, sync_ctx());
}

SIM_API CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice,
				 size_t ByteCount)
{
	return dtoh(dstHost, srcDevice, ByteCount, sync_ctx());
}

SIM_API CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc,
			       size_t N)
{
	CUresult r = sync_ctx();

	if (r)
		return r;
	if (!valid_range(dstDevice, N))
		return CUDA_ERROR_INVALID_VALUE;
	memset((void *)(uintptr_t)dstDevice, uc, N);
	return CUDA_SUCCESS;
}

/*
 * Stream-ordered copies and memsets move their bytes at the call and take no
 * engine time. Kernels of the simulator do not touch memory, so doing it
 * before the stream's queued work ends is indistinguishable from doing it
 * after; the stream must be valid, and the ranges lie inside allocations
 * (cuMemcpyAsync, with unified addressing, may also name host memory).
 */
static CUresult async_check(CUstream s)
{
	struct CUctx_st *c;
	CUresult r = sim_current(&c);

	if (r == CUDA_SUCCESS)
		r = sim_stream_check(s);
	/* Copy and memset nodes are not simulated. */
	return r ? r : sim_capture_refuse(s, CUDA_ERROR_NOT_SUPPORTED);
}

SIM_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src,
			       size_t ByteCount, CUstream hStream)
{
	CUresult r = async_check(hStream);

	if (r)
		return r;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, ByteCount);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
				      size_t ByteCount, CUstream hStream)
{
	return htod(dstDevice, srcHost, ByteCount, async_check(hStream));
}

SIM_API CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
				      size_t ByteCount, CUstream hStream)
{
	return dtoh(dstHost, srcDevice, ByteCount, async_check(hStream));
}

SIM_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
				      size_t ByteCount, CUstream hStream)
{
	CUresult r = async_check(hStream);

	if (r)
		return r;
	if (!valid_range(dstDevice, ByteCount) || !valid_range(srcDevice, ByteCount))
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)dstDevice, (const void *)(uintptr_t)srcDevice,
		ByteCount);
	return CUDA_SUCCESS;
}

/* N elements of size bytes each, from an address aligned to size. */
static CUresult memset_async(CUdeviceptr dst, uint32_t value, size_t size,
			     size_t N, CUstream hStream)
{
	CUresult r = async_check(hStream);

	if (r)
		return r;
	if (dst % size || N > SIZE_MAX / size || !valid_range(dst, N * size))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < N; i++)
		memcpy((char *)(uintptr_t)dst + i * size, &value, size);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc,
				 size_t N, CUstream hStream)
{
	return memset_async(dstDevice, uc, 1, N, hStream);
}

SIM_API CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us,
				  size_t N, CUstream hStream)
{
	return memset_async(dstDevice, us, 2, N, hStream);
}

SIM_API CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui,
				  size_t N, CUstream hStream)
{
	return memset_async(dstDevice, ui, 4, N, hStream);
}

/* The simulator has one default stream per context: the per-thread-stream
 * entry points behave as the legacy ones. */
SIM_API CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr, const void *, size_t)
	__attribute__((alias("cuMemcpyHtoD_v2")));
SIM_API CUresult cuMemcpyDtoH_v2_ptds(void *, CUdeviceptr, size_t)
	__attribute__((alias("cuMemcpyDtoH_v2")));
SIM_API CUresult cuMemsetD8_v2_ptds(CUdeviceptr, unsigned char, size_t)
	__attribute__((alias("cuMemsetD8_v2")));
SIM_API CUresult cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream)
	__attribute__((alias("cuMemcpyAsync")));
SIM_API CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void *, size_t,
					   CUstream)
	__attribute__((alias("cuMemcpyHtoDAsync_v2")));
SIM_API CUresult cuMemcpyDtoHAsync_v2_ptsz(void *, CUdeviceptr, size_t, CUstream)
	__attribute__((alias("cuMemcpyDtoHAsync_v2")));
SIM_API CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t,
					   CUstream)
	__attribute__((alias("cuMemcpyDtoDAsync_v2")));
SIM_API CUresult cuMemsetD8Async_ptsz(CUdeviceptr, unsigned char, size_t, CUstream)
	__attribute__((alias("cuMemsetD8Async")));
SIM_API CUresult cuMemsetD16Async_ptsz(CUdeviceptr, unsigned short, size_t,
				       CUstream)
	__attribute__((alias("cuMemsetD16Async")));
SIM_API CUresult cuMemsetD32Async_ptsz(CUdeviceptr, unsigned int, size_t, CUstream)
	__attribute__((alias("cuMemsetD32Async")));
