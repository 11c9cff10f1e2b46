// SPDX-License-Identifier: MIT
/*
 * Virtual memory management: cuMemCreate makes physical memory (a memfd, so
 * every mapping of one handle sees the same bytes), cuMemAddressReserve a
 * PROT_NONE range, cuMemMap/cuMemSetAccess map and open it. As on the real
 * driver, physical memory goes back when the handle is released and no
 * longer mapped.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"

#define VMM_MAGIC 0x564d4d31u

struct vmm_alloc {
	uint32_t magic;
	int phys;
	int fd;
	int released;
	int maps;
	uint64_t size;
};

struct range {
	struct range *next;
	uint64_t ptr, size;
	struct vmm_alloc *alloc;	/* mappings only */
};

static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct range *reservations, *mappings;

static CUresult check_prop(const CUmemAllocationProp *prop, int *phys)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    prop->requestedHandleTypes > CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_INVALID_VALUE;
	return sim_device(prop->location.id, phys) ? CUDA_ERROR_INVALID_DEVICE :
						     CUDA_SUCCESS;
}

SIM_API CUresult cuMemGetAllocationGranularity(
	size_t *granularity, const CUmemAllocationProp *prop,
	CUmemAllocationGranularity_flags option)
{
	int phys;
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!granularity || option > CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
		return CUDA_ERROR_INVALID_VALUE;
	r = check_prop(prop, &phys);
	if (r == CUDA_SUCCESS)
		*granularity = CGPU_PAGE;
	return r;
}

SIM_API CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			     const CUmemAllocationProp *prop,
			     unsigned long long flags)
{
	struct vmm_alloc *a;
	int phys;
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!handle || !size || size % CGPU_PAGE || flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = check_prop(prop, &phys);
	if (r)
		return r;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (sim_phys_reserve(phys, size)) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->fd = memfd_create("cgpu-sim-vmm", MFD_CLOEXEC);
	if (a->fd < 0 || ftruncate(a->fd, (off_t)size)) {
		if (a->fd >= 0)
			close(a->fd);
		sim_phys_release(phys, size);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->magic = VMM_MAGIC;
	a->phys = phys;
	a->size = size;
	*handle = (uintptr_t)a;
	return CUDA_SUCCESS;
}

/* Caller holds vmm_lock. */
static void maybe_free(struct vmm_alloc *a)
{
	if (!a->released || a->maps)
		return;
	close(a->fd);
	sim_phys_release(a->phys, a->size);
	a->magic = 0;
	free(a);
}

static struct vmm_alloc *alloc_of(CUmemGenericAllocationHandle h)
{
	struct vmm_alloc *a = (struct vmm_alloc *)(uintptr_t)h;

	return a && a->magic == VMM_MAGIC && !a->released ? a : NULL;
}

SIM_API CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct vmm_alloc *a;
	CUresult r = sim_check_init();

	if (r)
		return r;
	pthread_mutex_lock(&vmm_lock);
	a = alloc_of(handle);
	if (a) {
		a->released = 1;
		maybe_free(a);
	}
	pthread_mutex_unlock(&vmm_lock);
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static struct range *add_range(struct range **list, uint64_t ptr,
			       uint64_t size, struct vmm_alloc *a)
{
	struct range *r = malloc(sizeof(*r));

	if (r) {
		*r = (struct range){ *list, ptr, size, a };
		*list = r;
	}
	return r;
}

static struct range **find_range(struct range **list, uint64_t ptr,
				 uint64_t size, int exact)
{
	for (; *list; list = &(*list)->next) {
		struct range *r = *list;

		if (exact ? r->ptr == ptr && r->size == size :
			    ptr >= r->ptr && ptr + size <= r->ptr + r->size)
			return list;
	}
	return NULL;
}

SIM_API CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size,
				     size_t alignment, CUdeviceptr addr,
				     unsigned long long flags)
{
	size_t align = alignment ? alignment : CGPU_PAGE;
	uintptr_t base, start;
	void *p;
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!ptr || !size || size % CGPU_PAGE || flags ||
	    (align & (align - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	p = mmap((void *)(uintptr_t)addr, size + align, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	base = (uintptr_t)p;
	start = (base + align - 1) & ~(uintptr_t)(align - 1);
	if (start > base)
		munmap(p, start - base);
	if (base + size + align > start + size)
		munmap((void *)(start + size), base + size + align - start - size);
	pthread_mutex_lock(&vmm_lock);
	if (!add_range(&reservations, start, size, NULL)) {
		munmap((void *)start, size);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&vmm_lock);
	if (r == CUDA_SUCCESS)
		*ptr = start;
	return r;
}

SIM_API CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct range **link, *gone = NULL;
	CUresult r = sim_check_init();

	if (r)
		return r;
	pthread_mutex_lock(&vmm_lock);
	link = find_range(&reservations, ptr, size, 1);
	if (link && !find_range(&mappings, ptr, size, 0)) {
		gone = *link;
		*link = gone->next;
		munmap((void *)(uintptr_t)ptr, size);
	}
	pthread_mutex_unlock(&vmm_lock);
	free(gone);
	return gone ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_API CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			  CUmemGenericAllocationHandle handle,
			  unsigned long long flags)
{
	struct vmm_alloc *a;
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!size || size % CGPU_PAGE || offset % CGPU_PAGE || flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&vmm_lock);
	a = alloc_of(handle);
	if (!a || offset + size > a->size ||
	    !find_range(&reservations, ptr, size, 0) ||
	    find_range(&mappings, ptr, size, 0))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
		      MAP_SHARED | MAP_FIXED, a->fd, (off_t)offset) == MAP_FAILED ||
		 !add_range(&mappings, ptr, size, a))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		a->maps++;
	pthread_mutex_unlock(&vmm_lock);
	return r;
}

SIM_API CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct range **link, *gone = NULL;
	CUresult r = sim_check_init();

	if (r)
		return r;
	pthread_mutex_lock(&vmm_lock);
	link = find_range(&mappings, ptr, size, 1);
	if (link) {
		gone = *link;
		*link = gone->next;
		/* Back to a reserved, inaccessible range. */
		mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
		     0);
		gone->alloc->maps--;
		maybe_free(gone->alloc);
	}
	pthread_mutex_unlock(&vmm_lock);
	free(gone);
	return gone ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_API CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
				const CUmemAccessDesc *desc, size_t count)
{
	int prot, phys;
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!desc || count != 1 ||
	    desc->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    sim_device(desc->location.id, &phys))
		return CUDA_ERROR_INVALID_VALUE;
	switch (desc->flags) {
	case CU_MEM_ACCESS_FLAGS_PROT_NONE: prot = PROT_NONE; break;
	case CU_MEM_ACCESS_FLAGS_PROT_READ: prot = PROT_READ; break;
	case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: prot = PROT_READ | PROT_WRITE; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&vmm_lock);
	if (!find_range(&mappings, ptr, size, 0) ||
	    mprotect((void *)(uintptr_t)ptr, size, prot))
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&vmm_lock);
	return r;
}
