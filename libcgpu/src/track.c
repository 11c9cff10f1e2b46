// SPDX-License-Identifier: MIT
#include "track.h"

#include "devmap.h"
#include "ledger.h"

struct ptrmap track_dptr = PTRMAP_INIT;
struct ptrmap track_array = PTRMAP_INIT;
struct ptrmap track_vmm = PTRMAP_INIT;

static struct ptrmap *const maps[] = { &track_dptr, &track_array, &track_vmm };
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

void track_release(const struct ptrmap_val *v)
{
	if (v->kind == T_POOLED)
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
	pool_fork(phase);
}
