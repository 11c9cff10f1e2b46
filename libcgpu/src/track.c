// SPDX-License-Identifier: MIT
#include "track.h"

#include "devmap.h"
#include "budget.h"
#include "memsize.h"

struct ptrmap track_dptr = PTRMAP_INIT;
struct ptrmap track_array = PTRMAP_INIT;
struct ptrmap track_vmm = PTRMAP_INIT;
struct ptrmap track_vmm_map = PTRMAP_INIT;
/* Pages that hold small allocations: how many live ones each. The count
 * is read and rewritten as one step under small_lock. */
static struct ptrmap track_pages = PTRMAP_INIT;
static pthread_mutex_t small_lock = PTHREAD_MUTEX_INITIALIZER;

/* In lock order: a context's purge takes small_lock inside the maps'. */
static struct ptrmap *const maps[] = { &track_dptr, &track_array, &track_vmm,
				       &track_vmm_map };
static int said_foreign;

CUresult track_current(CUcontext *ctx, CUdevice *dev, int *slot)
{
	CUresult r = REAL_CU(cuCtxGetDevice, dev);

	if (r == CUDA_SUCCESS)
		r = REAL_CU(cuCtxGetCurrent, ctx);
	if (r == CUDA_SUCCESS)
		*slot = devmap_cuda(*dev);
	return r;
}

CUresult track_charge(int slot, uint64_t bytes)
{
	if (slot < 0) {
		cgpu_say_once(&said_foreign,
			      "cgpu: a visible GPU is not one of this container's; its memory is refused");
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return ledger_charge(slot, bytes) ? CUDA_ERROR_OUT_OF_MEMORY :
					    CUDA_SUCCESS;
}

int track_put(struct ptrmap *m, uint64_t key, uint64_t bytes, int slot,
	      int kind, void *ctx, void *aux)
{
	struct ptrmap_val v = { .bytes = bytes, .slot = (uint32_t)slot,
				.kind = (uint32_t)kind, .ctx = ctx, .aux = aux };

	return ptrmap_put(m, key, &v);
}

int track_small_placed(int slot, uint64_t addr)
{
	struct ptrmap_val v = { .bytes = 0, .slot = (uint32_t)slot };
	int held;

	pthread_mutex_lock(&small_lock);
	held = ptrmap_get(&track_pages, cgpu_page_of(addr), &v);
	v.bytes++;
	/* Without room for the record the page's charge stays: over, never
	 * under. */
	if (ptrmap_put(&track_pages, cgpu_page_of(addr), &v))
		held = 0;
	pthread_mutex_unlock(&small_lock);
	return held;
}

/* The page goes back to the device with its last small allocation. */
static void small_freed(uint64_t addr)
{
	struct ptrmap_val v;
	int gone = 0;

	pthread_mutex_lock(&small_lock);
	if (ptrmap_take(&track_pages, cgpu_page_of(addr), &v)) {
		if (--v.bytes)
			ptrmap_put(&track_pages, cgpu_page_of(addr), &v);
		else
			gone = 1;
	}
	pthread_mutex_unlock(&small_lock);
	if (gone)
		ledger_uncharge((int)v.slot, CGPU_PAGE);
}

void track_release(const struct ptrmap_val *v)
{
	if (v->kind == T_SMALL)
		small_freed((uintptr_t)v->aux);
	else if (v->kind == T_VMM)
		vmm_unref(v->aux);
	else if (v->kind == T_POOLED)
		pool_released(v->aux, v->bytes);
	else
		ledger_uncharge((int)v->slot, v->bytes);
}

/* Frees what `key` names with free_fn; the charge goes back only once the
 * driver has freed it. */
CUresult track_free(struct ptrmap *m, uint64_t key,
		    CUresult (*free_fn)(uint64_t key, void *arg), void *arg)
{
	struct ptrmap_val v;
	int known = ptrmap_take(m, key, &v);
	CUresult r = free_fn(key, arg);

	if (!known)
		return r;
	if (r == CUDA_SUCCESS)
		track_release(&v);
	else
		ptrmap_put(m, key, &v);
	return r;
}

static void release_entry(uint64_t key, const struct ptrmap_val *v, void *arg)
{
	(void)key;
	(void)arg;
	track_release(v);
}

void track_purge_ctx(void *ctx)
{
	if (!ctx)
		return;
	ptrmap_take_ctx(&track_dptr, ctx, release_entry, NULL);
	ptrmap_take_ctx(&track_array, ctx, release_entry, NULL);
}

/* A fork child holds no GPU memory: its parent's allocations stay the
 * parent's. The maps are locked over fork so the child's copy is whole. */
void track_fork(enum track_fork_phase phase)
{
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		if (phase == TRACK_FORK_PREPARE)
			pthread_mutex_lock(&maps[i]->lock);
		else if (phase == TRACK_FORK_PARENT)
			pthread_mutex_unlock(&maps[i]->lock);
		else
			ptrmap_reset(maps[i]);
	}
	if (phase == TRACK_FORK_PREPARE) {
		pthread_mutex_lock(&small_lock);
		pthread_mutex_lock(&track_pages.lock);
	} else if (phase == TRACK_FORK_PARENT) {
		pthread_mutex_unlock(&track_pages.lock);
		pthread_mutex_unlock(&small_lock);
	} else {
		pthread_mutex_init(&small_lock, NULL);
		ptrmap_reset(&track_pages);
	}
	pool_fork(phase);
	graph_fork(phase);
}
