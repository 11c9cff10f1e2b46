// SPDX-License-Identifier: MIT
/*
 * The compute gate (gate.h): the slow path, and one helper thread per GPU
 * that speaks to the kernel for the whole process.
 *
 * A thread that finds no slice asks the kernel itself (SLICE_WAIT; the
 * others of the process wait for its answer), publishes the grant's go word
 * to the fast path and hands the slice to the helper, so the grant reaches
 * the submitting thread with one wakeup. The helper sleeps in SLICE_WATCH
 * while the status page shows that word (renewals keep it). When the page
 * changes (the deadline passed, high priority cut the slice, the policy
 * changed), it withdraws the word, waits for the calls already past the
 * check, drains this process's queued work (cuCtxSynchronize on each context
 * that submitted), and reports the slice's end with the time it spanned and
 * whether threads wait for more. The process's one /dev/cgpu file makes it
 * one participant, however many threads submit.
 *
 * A hot update of the module (link.c) withdraws every grant (gate_suspend),
 * so calls take the slow path and wait in link_call for the process to be
 * attached again; gate_relink then starts the gates afresh on the new page,
 * mapped where the old one was.
 */
#define _GNU_SOURCE
#include "gate.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "devmap.h"
#include "link.h"

/* Never a go word: the kernel keeps its serials to 31 bits. */
#define GO_NONE (~0ULL)
/* The kernel bounds each wait; the helper simply asks again. */
#define SLICE_TIMEOUT_MS 1000

int gate_state;
unsigned gate_epoch;
__thread struct gate_tls gate_tls __attribute__((tls_model("initial-exec")));

static struct gate gates[CGPU_MAX_GPUS];
static unsigned ngates;
static const struct cgpu_status_page *page;
static int said_old, said_map, said_off, said_long, said_moved;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void gate_reset(struct gate *g, unsigned gpu)
{
	*g = (struct gate){ .go = GO_NONE, .gpu = gpu };
	pthread_mutex_init(&g->m, NULL);
	pthread_cond_init(&g->granted, NULL);
	pthread_cond_init(&g->wanted, NULL);
	if (page)
		g->page_go = &page->gpu[gpu].go;
}

void gate_init(const struct cgpu_status_page *p, const struct cgpu_query *kq, unsigned kn)
{
	for (unsigned i = 0; i < kn; i++) {
		if (!kq[i].sched_id) {
			cgpu_say_once(&said_old,
				      "cgpu: cgpu_km before 0.2.0 has no compute slices; GPU work is not gated");
			return;
		}
	}
	if (!p) {
		cgpu_say_once(&said_map,
			      "cgpu: %s: cannot map the status page; GPU work is not gated",
			      CGPU_DEVICE_PATH);
		return;
	}
	page = p;
	ngates = kn;
	for (unsigned i = 0; i < kn; i++)
		gate_reset(&gates[i], kq[i].gpu);
	__atomic_add_fetch(&gate_epoch, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&gate_state, 1, __ATOMIC_RELEASE);
}

/* No grant holds any more: every call takes the slow path, until gate_relink. */
void gate_suspend(void)
{
	for (unsigned i = 0; i < ngates; i++)
		__atomic_store_n(&gates[i].go, GO_NONE, __ATOMIC_SEQ_CST);
}

/*
 * Attached again after a hot update, with the new page where the old one was:
 * the old module's go words mean nothing there, so no grant carries over.
 */
void gate_relink(const struct cgpu_query *kq, unsigned kn)
{
	if (!page)
		return;
	for (unsigned i = 0; i < kn; i++) {
		if (!kq[i].sched_id) {
			cgpu_say_once(&said_moved,
				      "cgpu: the new cgpu_km has no compute slices; GPU work is no longer gated");
			gate_stop();
			return;
		}
	}
	gate_suspend();
	__atomic_add_fetch(&gate_epoch, 1, __ATOMIC_RELEASE);
}

/*
 * The mapping is not inherited (the kernel marks it so) and the helpers are
 * gone: the child starts over once it has attached on its own.
 */
void gate_after_fork_child(void)
{
	page = NULL;
	for (unsigned i = 0; i < ngates; i++)
		gate_reset(&gates[i], gates[i].gpu);
	ngates = 0;
	__atomic_add_fetch(&gate_epoch, 1, __ATOMIC_RELEASE);
	if (gate_state == 1)
		gate_state = 2;
}

static void remember_ctx(struct gate *g, CUcontext ctx)
{
	int i;

	pthread_mutex_lock(&g->m);
	for (i = 0; i < g->nctx && g->ctx[i] != ctx; i++)
		;
	if (i == g->nctx && g->nctx < GATE_MAX_CTX)
		g->ctx[g->nctx++] = ctx;
	pthread_mutex_unlock(&g->m);
}

void gate_forget_ctx(CUcontext ctx)
{
	for (unsigned i = 0; i < ngates; i++) {
		struct gate *g = &gates[i];

		pthread_mutex_lock(&g->m);
		for (int j = 0; j < g->nctx; j++)
			if (g->ctx[j] == ctx)
				g->ctx[j--] = g->ctx[--g->nctx];
		pthread_mutex_unlock(&g->m);
	}
	__atomic_add_fetch(&gate_epoch, 1, __ATOMIC_RELEASE);
}

/*
 * The context s belongs to, for a call made without a current one: the
 * driver runs a stream's work in the stream's context. The default streams
 * have no context of their own, and with no current one the driver refuses
 * the call.
 */
static CUcontext stream_ctx(CUstream s, CUdevice *dev)
{
	CUcontext c = NULL, popped;

	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD ||
	    REAL_CU(cuStreamGetCtx, s, &c) != CUDA_SUCCESS || !c ||
	    REAL_CU(cuCtxPushCurrent_v2, c) != CUDA_SUCCESS)
		return NULL;
	if (REAL_CU(cuCtxGetDevice, dev) != CUDA_SUCCESS)
		c = NULL;
	REAL_CU(cuCtxPopCurrent_v2, &popped);
	return c;
}

/* The slow part of binding: this thread's context changed, or the gates did. */
struct gate *gate_bind(CUcontext ctx, CUstream s)
{
	unsigned epoch;
	struct gate *g = NULL;
	CUcontext sctx = NULL;
	CUdevice dev;
	int slot, two = 2;

	if (__atomic_load_n(&gate_state, __ATOMIC_ACQUIRE) == 2) {
		link_ready();	/* attaches, and so calls gate_init */
		__atomic_compare_exchange_n(&gate_state, &two, 0, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	}
	epoch = __atomic_load_n(&gate_epoch, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&gate_state, __ATOMIC_ACQUIRE) != 1)
		return NULL;
	if (!ctx) {
		sctx = stream_ctx(s, &dev);
		if (!sctx)
			return NULL;
	} else if (REAL_CU(cuCtxGetDevice, &dev) != CUDA_SUCCESS) {
		return NULL;
	}
	slot = devmap_cuda(dev);
	if (slot >= 0 && (unsigned)slot < ngates && !gates[slot].off) {
		g = &gates[slot];
		remember_ctx(g, ctx ? ctx : sctx);
	}
	/* Not cached without a context: the next call may name another stream. */
	if (ctx)
		gate_tls = (struct gate_tls){ ctx, epoch, g };
	return g;
}

/* 0 or an errno; across a hot update on the file attached next. */
static int slice_call(struct gate *g, unsigned long cmd, struct cgpu_slice *s)
{
	s->abi_version = CGPU_ABI_VERSION;
	s->gpu = g->gpu;
	return -link_call(cmd, s);
}

static void gate_off(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	g->off = 1;
	pthread_cond_broadcast(&g->granted);
	pthread_mutex_unlock(&g->m);
	__atomic_add_fetch(&gate_epoch, 1, __ATOMIC_RELEASE);
}

/* The instance is gone (deleted) or the kernel refused: stop gating. */
static void give_up(struct gate *g, int err)
{
	cgpu_say_once(&said_off, "cgpu: compute slices on GPU %u: %s; GPU work is no longer gated",
		      g->gpu, strerror(err));
	gate_off(g);
}

void gate_stop(void)
{
	for (unsigned i = 0; i < ngates; i++)
		gate_off(&gates[i]);
}

/* Every context that submitted has finished its work. */
static void drain(struct gate *g)
{
	for (int i = 0; i < g->nctx; i++)
		if (REAL_CU(cuCtxSetCurrent, g->ctx[i]) == CUDA_SUCCESS)
			REAL_CU(cuCtxSynchronize);
}

/*
 * The end of one slice: sleep through it (renewals keep the go word), then
 * stop the fast path, wait for the calls past it, drain and report. 0 or an
 * errno.
 */
static int hold(struct gate *g, uint64_t go, uint64_t granted_at)
{
	struct cgpu_slice s = { 0 };
	int err = 0, more;

	while (__atomic_load_n(g->page_go, __ATOMIC_ACQUIRE) == go) {
		s.go = go;
		s.timeout_ms = SLICE_TIMEOUT_MS;
		err = slice_call(g, CGPU_IOC_SLICE_WATCH, &s);
		/* EAGAIN: a hot update that did not bring the process back in time. */
		if (err && err != ETIMEDOUT)
			return err;
	}
	__atomic_store_n(&g->go, GO_NONE, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&g->inflight, __ATOMIC_SEQ_CST))
		sched_yield();
	pthread_mutex_lock(&g->m);
	drain(g);
	more = g->want > 0;
	pthread_mutex_unlock(&g->m);
	s = (struct cgpu_slice){ .go = go, .used_ns = now_ns() - granted_at,
				 .flags = more ? CGPU_SLICE_MORE : 0 };
	/* After a hot update the new module does not know the slice: STALE, no error. */
	return slice_call(g, CGPU_IOC_SLICE_END, &s);
}

static void *helper_main(void *arg)
{
	struct gate *g = arg;
	uint64_t go, at;
	int err;

	for (;;) {
		pthread_mutex_lock(&g->m);
		while (!g->held)
			pthread_cond_wait(&g->wanted, &g->m);
		go = g->go;
		at = g->granted_at;
		pthread_mutex_unlock(&g->m);
		err = hold(g, go, at);
		pthread_mutex_lock(&g->m);
		g->held = 0;
		pthread_cond_broadcast(&g->granted);
		pthread_mutex_unlock(&g->m);
		if (err) {
			give_up(g, err);
			return NULL;
		}
	}
}

/* Signals stay with the application's threads. Caller holds g->m. */
static int start_helper(struct gate *g)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t t;
	int err;

	sigfillset(&all);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, &a, helper_main, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	g->helper = !err;
	return err;
}

static int granted(struct gate *g)
{
	return __atomic_load_n(g->page_go, __ATOMIC_SEQ_CST) ==
	       __atomic_load_n(&g->go, __ATOMIC_SEQ_CST);
}

/*
 * One thread asks the kernel (a process is one file, and the kernel takes
 * one SLICE_WAIT per file at a time); it asks only once the helper has ended
 * the previous slice, or the kernel would count the undrained slice as ended.
 * Caller holds g->m; returns with it held.
 */
static void ask(struct gate *g)
{
	struct cgpu_slice s;
	int err;

	g->asking = 1;
	pthread_mutex_unlock(&g->m);
	for (int waited = 1;; waited++) {
		s = (struct cgpu_slice){ .timeout_ms = SLICE_TIMEOUT_MS };
		err = slice_call(g, CGPU_IOC_SLICE_WAIT, &s);
		if (err != ETIMEDOUT)
			break;
		/* Far past any share's turn: most likely no share at all. */
		if (waited * SLICE_TIMEOUT_MS == 10000)
			cgpu_say_once(&said_long,
				      "cgpu: GPU %u: no compute slice for this container in 10 s (is its weight 0?); still waiting",
				      g->gpu);
	}
	pthread_mutex_lock(&g->m);
	g->asking = 0;
	if (!err && !g->helper)
		err = start_helper(g);
	if (err) {
		pthread_mutex_unlock(&g->m);
		give_up(g, err);
		pthread_mutex_lock(&g->m);
		return;
	}
	g->granted_at = now_ns();
	__atomic_store_n(&g->go, s.go, __ATOMIC_SEQ_CST);
	g->held = 1;
	pthread_cond_signal(&g->wanted);
	pthread_cond_broadcast(&g->granted);
}

/* Entered with this call counted in inflight, and without the slice. */
struct gate *gate_slow(struct gate *g)
{
	int off;

	for (;;) {
		__atomic_fetch_sub(&g->inflight, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_lock(&g->m);
		g->want++;
		while (!g->off && !granted(g)) {
			if (!g->asking && !g->held)
				ask(g);
			else
				pthread_cond_wait(&g->granted, &g->m);
		}
		g->want--;
		off = g->off;
		pthread_mutex_unlock(&g->m);
		if (off)
			return NULL;
		__atomic_fetch_add(&g->inflight, 1, __ATOMIC_SEQ_CST);
		if (granted(g))
			return g;
	}
}
