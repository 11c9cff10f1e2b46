/* SPDX-License-Identifier: MIT */
/*
 * The compute gate: every call that submits GPU work passes it, so that a
 * container submits only while it holds the GPU's compute slice (kernel mode:
 * the cgpu_km scheduler, docs/scheduler.md). In local and off modes, and with
 * a module that does not publish slices, there is no gate.
 *
 *	struct gate *g = gate_begin(stream);   may wait for the slice
 *	r = <the driver's call>;
 *	gate_end(g);
 *
 * gate_begin's fast path (the slice is held) reads the status page mapped from
 * /dev/cgpu: no system call, no lock.
 */
#ifndef CGPU_GATE_H
#define CGPU_GATE_H

#include <pthread.h>
#include <stdint.h>

#include "hook.h"
#include "cgpu_ioctl.h"

#define GATE_MAX_CTX 8

/* One per GPU of the container, per process. */
struct gate {
	/* The fast path's: */
	const __u64 *page_go;		/* this GPU's go word on the status page */
	uint64_t go;			/* atomic: our grant's go word; GO_NONE: none */
	long inflight;			/* atomic: calls past the check, not returned */
	/* The slow path's and the helper thread's, under m: */
	pthread_mutex_t m;
	pthread_cond_t granted;		/* a grant came, a slice ended, gating ended */
	pthread_cond_t wanted;		/* the helper: a slice to see through */
	unsigned gpu;			/* host GPU index */
	int want;			/* threads waiting for a grant */
	int asking;			/* a thread is in SLICE_WAIT */
	int held;			/* a slice granted and not yet ended */
	uint64_t granted_at;
	int helper;			/* the helper thread runs */
	int off;			/* gating ended (instance deleted, error) */
	int nctx;
	CUcontext ctx[GATE_MAX_CTX];	/* contexts that submitted: drained */
};

/* The gate the calling thread's current context submits through. */
struct gate_tls {
	CUcontext ctx;
	unsigned epoch;
	struct gate *g;
};

/* 1: gating on; 0: off; 2: a fork child that must attach again first. */
extern int gate_state;
extern unsigned gate_epoch;
extern __thread struct gate_tls gate_tls __attribute__((tls_model("initial-exec")));

/* Kernel mode attached, the status page mapped at p (NULL: it could not
 * be): a gate per slot of the container (the kernel's QUERY answers in kq). */
void gate_init(const struct cgpu_status_page *p, const struct cgpu_query *kq, unsigned kn);
void gate_after_fork_child(void);
/* A hot update (link.c): no grant holds from now on ... */
void gate_suspend(void);
/* ... until the process is attached again, the new page where the old was. */
void gate_relink(const struct cgpu_query *kq, unsigned kn);
/* Gating ends for good: every call goes straight to the driver. */
void gate_stop(void);
/* The context is about to go: its work is no longer drained by the gate. */
void gate_forget_ctx(CUcontext ctx);
/* The gate of ctx's GPU; without a current context (ctx NULL), that of the
 * GPU of s's context, where the driver runs the work, uncached. */
struct gate *gate_bind(CUcontext ctx, CUstream s);
struct gate *gate_slow(struct gate *g);

static inline struct gate *gate_begin(CUstream s)
{
	int state = __atomic_load_n(&gate_state, __ATOMIC_ACQUIRE);
	CUcontext ctx;
	struct gate *g;

	if (likely(state == 0) || REAL_CU(cuCtxGetCurrent, &ctx) != CUDA_SUCCESS)
		return NULL;
	if (likely(state == 1 && ctx == gate_tls.ctx &&
		   gate_tls.epoch == __atomic_load_n(&gate_epoch, __ATOMIC_ACQUIRE)))
		g = gate_tls.g;
	else
		g = gate_bind(ctx, s);
	if (!g)
		return NULL;
	/* Counted before the check, so the end of a slice can wait for this call. */
	__atomic_fetch_add(&g->inflight, 1, __ATOMIC_SEQ_CST);
	if (likely(__atomic_load_n(g->page_go, __ATOMIC_SEQ_CST) ==
		   __atomic_load_n(&g->go, __ATOMIC_SEQ_CST)))
		return g;
	return gate_slow(g);
}

static inline void gate_end(struct gate *g)
{
	if (g)
		__atomic_fetch_sub(&g->inflight, 1, __ATOMIC_RELEASE);
}

#endif
