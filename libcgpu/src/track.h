/* SPDX-License-Identifier: MIT */
/*
 * What this process holds: each allocation with the size charged for it and
 * the GPU slot it was charged on, so a free uncharges exactly that.
 */
#ifndef CGPU_TRACK_H
#define CGPU_TRACK_H

#include <pthread.h>

#include "hook.h"
#include "ptrmap.h"

enum track_kind { T_LINEAR = 1, T_SMALL, T_POOLED, T_ARRAY, T_VMM };
enum track_fork_phase { TRACK_FORK_PREPARE, TRACK_FORK_PARENT, TRACK_FORK_CHILD };

/*
 * A leaf lock (nothing is taken under it) held over fork, so that a child inherits
 * whole tables and a free lock whichever thread was inside: taken before, given back
 * in the parent, made anew in the child. True in the child, which then resets what
 * the lock guards.
 */
static inline int track_fork_lock(enum track_fork_phase phase, pthread_mutex_t *m)
{
	if (phase == TRACK_FORK_PREPARE)
		pthread_mutex_lock(m);
	else if (phase == TRACK_FORK_PARENT)
		pthread_mutex_unlock(m);
	else
		pthread_mutex_init(m, NULL);
	return phase == TRACK_FORK_CHILD;
}

extern struct ptrmap track_dptr;	/* device pointers: linear, pooled */
extern struct ptrmap track_array;	/* CUarray, CUmipmappedArray */
extern struct ptrmap track_vmm;		/* cuMemCreate handles */
extern struct ptrmap track_vmm_map;	/* their mappings, by address */

/* The current context, its device and the device's slot (-1: not one of
 * the container's GPUs). */
CUresult track_current(CUcontext *ctx, CUdevice *dev, int *slot);
/* Charge before the driver is asked: CUDA_ERROR_OUT_OF_MEMORY if refused. */
CUresult track_charge(int slot, uint64_t bytes);
/* Record an allocation the driver made; on failure (no memory for the
 * record) the caller must undo it. */
int track_put(struct ptrmap *m, uint64_t key, uint64_t bytes, int slot,
	      int kind, void *ctx, void *aux);
/* A small allocation (cutil/memsize.h) the driver placed at addr, charged
 * a page beforehand: 1 when that page was already held, so the caller gives
 * the page back. */
int track_small_placed(int slot, uint64_t addr);
/* After the driver freed what v describes: give its charge back. */
void track_release(const struct ptrmap_val *v);
/* Frees what key names with free_fn (the driver call); the charge goes
 * back only once the driver has freed it. */
CUresult track_free(struct ptrmap *m, uint64_t key,
		    CUresult (*free_fn)(uint64_t key, void *arg), void *arg);
/* Everything a context held went with it. */
void track_purge_ctx(void *ctx);
void track_fork(enum track_fork_phase phase);

/* VMM (hook_handles.c): a handle or one of its mappings went away. */
void vmm_unref(void *phys);

/* Pools (hook_pool.c): an allocation from pool p of bytes was freed. */
void pool_released(void *p, uint64_t bytes);
void pool_fork(enum track_fork_phase phase);

/* Graph memory (hook_graph.c): a context went, with its graph memory. */
void graph_ctx_gone(void);
void graph_fork(enum track_fork_phase phase);

#endif
