// SPDX-License-Identifier: MIT
/*
 * Every gated entry point (src/hook_launch.c) through the compute gate
 * (src/gate.c), both compiled in, on the status page fixture
 * (gate-fixture.h), with a stub driver and a stub kernel (link_call below).
 * For each, from one application thread:
 *  - no slice: the call asks the kernel (SLICE_WAIT) and does not reach the
 *    driver until the kernel grants; then it reaches it, once;
 *  - the slice held: the call reaches the driver without a call to the
 *    kernel and without the gate's lock, which the test holds meanwhile
 *    (the fast path: the page's go word read, no system call, no lock);
 *  - no current context (a call that names a stream): the call waits for the
 *    slice of the GPU of the stream's context, GPU 1, not the thread's last.
 *
 *   gate-test          the checks (test/suites/26-gate-host.sh)
 *   gate-test list     the entry points it checks, one a line
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <string.h>

#include "check.h"
#include "gate-fixture.h"

/* The stream each call names; the thread's context is on device 0, this
 * stream's on device 1 (where the driver runs its work). */
static int stream_cookie, ctx0_cookie, ctx1_cookie;
#define S ((CUstream)&stream_cookie)
static CUlaunchConfig ex_config = { .hStream = S };

/* Each gated entry point, with arguments of which the stream is S; last,
 * whether it takes a stream (those that do not run in the current context
 * only). */
#define K11 (0, 0, 0, 0, 0, 0, 0, 0, S, 0, 0)
#define K10 (0, 0, 0, 0, 0, 0, 0, 0, S, 0)
#define EX (&ex_config, 0, 0, 0)
#define S2 (0, S)
#define S4 (0, 0, 0, S)
#define S5 (0, 0, 0, 0, S)
#define S6 (0, 0, 0, 0, 0, S)
#define S8 (0, 0, 0, 0, 0, 0, 0, S)
#define S9 (0, 0, 0, 0, 0, 0, 0, 0, S)
#define S3 (0, 0, S)
#define FIRST3 (S, 0, 0)
#define FIRST4 (S, 0, 0, 0)
#define V2(X, n, a) X(n, a, 1) X(n##_ptsz, a, 1) X(n##_v2, a, 1) X(n##_v2_ptsz, a, 1)
#define GATED(X)                                                            \
	X(cuLaunchKernel, K11, 1) X(cuLaunchKernel_ptsz, K11, 1)            \
	X(cuLaunchKernelEx, EX, 1) X(cuLaunchKernelEx_ptsz, EX, 1)          \
	X(cuLaunchCooperativeKernel, K10, 1)                                \
	X(cuLaunchCooperativeKernel_ptsz, K10, 1)                           \
	X(cuLaunch, (0), 0) X(cuLaunchGrid, (0, 0, 0), 0)                   \
	X(cuLaunchGridAsync, S4, 1)                                         \
	X(cuGraphLaunch, S2, 1) X(cuGraphLaunch_ptsz, S2, 1)                \
	X(cuLaunchHostFunc, FIRST3, 1) X(cuLaunchHostFunc_ptsz, FIRST3, 1)  \
	X(cuLaunchHostFunc_v2, FIRST4, 1)                                   \
	X(cuMemcpyAsync, S4, 1) X(cuMemcpyAsync_ptsz, S4, 1)                \
	X(cuMemcpyHtoDAsync, S4, 1) X(cuMemcpyHtoDAsync_v2, S4, 1)          \
	X(cuMemcpyHtoDAsync_v2_ptsz, S4, 1)                                 \
	X(cuMemcpyDtoHAsync, S4, 1) X(cuMemcpyDtoHAsync_v2, S4, 1)          \
	X(cuMemcpyDtoHAsync_v2_ptsz, S4, 1)                                 \
	X(cuMemcpyDtoDAsync, S4, 1) X(cuMemcpyDtoDAsync_v2, S4, 1)          \
	X(cuMemcpyDtoDAsync_v2_ptsz, S4, 1)                                 \
	X(cuMemcpyPeerAsync, S6, 1) X(cuMemcpyPeerAsync_ptsz, S6, 1)        \
	X(cuMemcpyHtoAAsync, S5, 1) X(cuMemcpyHtoAAsync_v2, S5, 1)          \
	X(cuMemcpyHtoAAsync_v2_ptsz, S5, 1)                                 \
	X(cuMemcpyAtoHAsync, S5, 1) X(cuMemcpyAtoHAsync_v2, S5, 1)          \
	X(cuMemcpyAtoHAsync_v2_ptsz, S5, 1)                                 \
	X(cuMemcpy2DAsync, S2, 1) X(cuMemcpy2DAsync_v2, S2, 1)              \
	X(cuMemcpy2DAsync_v2_ptsz, S2, 1)                                   \
	X(cuMemcpy3DAsync, S2, 1) X(cuMemcpy3DAsync_v2, S2, 1)              \
	X(cuMemcpy3DAsync_v2_ptsz, S2, 1)                                   \
	X(cuMemcpy3DPeerAsync, S2, 1) X(cuMemcpy3DPeerAsync_ptsz, S2, 1)    \
	X(cuMemcpyBatchAsync, S9, 1) X(cuMemcpyBatchAsync_ptsz, S9, 1)      \
	X(cuMemcpyBatchAsync_v2, S8, 1) X(cuMemcpyBatchAsync_v2_ptsz, S8, 1) \
	X(cuMemcpy3DBatchAsync, S5, 1) X(cuMemcpy3DBatchAsync_ptsz, S5, 1)  \
	X(cuMemcpy3DBatchAsync_v2, S4, 1)                                   \
	X(cuMemcpy3DBatchAsync_v2_ptsz, S4, 1)                              \
	X(cuMemcpyWithAttributesAsync, S5, 1)                               \
	X(cuMemcpy3DWithAttributesAsync, S3, 1)                             \
	X(cuMemBatchDecompressAsync, S5, 1)                                 \
	X(cuMemsetD8Async, S4, 1) X(cuMemsetD8Async_ptsz, S4, 1)            \
	X(cuMemsetD16Async, S4, 1) X(cuMemsetD16Async_ptsz, S4, 1)          \
	X(cuMemsetD32Async, S4, 1) X(cuMemsetD32Async_ptsz, S4, 1)          \
	X(cuMemsetD2D8Async, S6, 1) X(cuMemsetD2D8Async_ptsz, S6, 1)        \
	X(cuMemsetD2D16Async, S6, 1) X(cuMemsetD2D16Async_ptsz, S6, 1)      \
	X(cuMemsetD2D32Async, S6, 1) X(cuMemsetD2D32Async_ptsz, S6, 1)      \
	V2(X, cuStreamWaitValue32, FIRST4) V2(X, cuStreamWaitValue64, FIRST4) \
	V2(X, cuStreamWriteValue32, FIRST4) V2(X, cuStreamWriteValue64, FIRST4) \
	V2(X, cuStreamBatchMemOp, FIRST4)

#define CALL(n, args, st)                       \
	static CUresult call_##n(void)          \
	{                                       \
		return n args;                  \
	}
GATED(CALL)
#define ENTRY(n, args, st) { #n, call_##n, st },
static const struct entry {
	const char *name;
	CUresult (*call)(void);
	int stream;
} entries[] = { GATED(ENTRY) };

#define LOAD(p) __atomic_load_n(p, __ATOMIC_SEQ_CST)
/* Polls for up to 2 s; the value of cond at the end. */
#define WAIT_FOR(cond)                                             \
	({                                                         \
		for (int i_ = 0; !(cond) && i_ < 2000; i_++)       \
			usleep(1000);                              \
		(cond);                                            \
	})

/* The driver: every gated entry point is this one stub, which takes no
 * arguments (the callers' are left unread in the registers). */
static long reached;
static CUresult driver(void)
{
	__atomic_add_fetch(&reached, 1, __ATOMIC_SEQ_CST);
	return CUDA_SUCCESS;
}

/*
 * The driver's contexts: the application thread's is ctx0 (device 0), or
 * none at all; the stream S belongs to ctx1 (device 1). Pushing a context
 * makes it current for the thread until it is popped.
 */
static int no_ctx;
static __thread CUcontext pushed;

static CUresult get_current(CUcontext *c)
{
	*c = pushed ? pushed : LOAD(&no_ctx) ? NULL : (CUcontext)&ctx0_cookie;
	return CUDA_SUCCESS;
}

static CUresult get_device(CUdevice *d)
{
	CUcontext c;

	get_current(&c);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = c == (CUcontext)&ctx1_cookie;
	return CUDA_SUCCESS;
}

static CUresult stream_get_ctx(CUstream s, CUcontext *c)
{
	if (s != S)
		return CUDA_ERROR_INVALID_HANDLE;
	*c = (CUcontext)&ctx1_cookie;
	return CUDA_SUCCESS;
}

static CUresult push(CUcontext c)
{
	pushed = c;
	return CUDA_SUCCESS;
}

static CUresult pop(CUcontext *c)
{
	*c = pushed;
	pushed = NULL;
	return CUDA_SUCCESS;
}

/*
 * The kernel: SLICE_WAIT returns when the test grants (new_go(1)), SLICE_WATCH
 * (the process's helper thread) when the page's go word changes; SLICE_END
 * takes note. Its page is what the gate reads.
 */
static struct cgpu_status_page *page;
static pthread_mutex_t km = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kc = PTHREAD_COND_INITIALIZER;
static int waits, grants;
static unsigned wait_gpu;	/* the GPU of the last SLICE_WAIT */
static uint64_t serial;
static __thread int asked;	/* this thread's calls to the kernel */

int link_call(unsigned long req, void *arg)
{
	struct cgpu_slice *s = arg;

	asked++;
	pthread_mutex_lock(&km);
	if (req == CGPU_IOC_SLICE_WAIT) {
		wait_gpu = s->gpu;
		__atomic_add_fetch(&waits, 1, __ATOMIC_SEQ_CST);
		while (grants < waits)
			pthread_cond_wait(&kc, &km);
		s->go = page->gpu[s->gpu].go;
	} else if (req == CGPU_IOC_SLICE_WATCH) {
		while (page->gpu[s->gpu].go == s->go)
			pthread_cond_wait(&kc, &km);
	}
	pthread_mutex_unlock(&km);
	return 0;
}

/* The kernel writes a new go word on a GPU: the end of the slice, or a grant's. */
static void new_go(unsigned gpu, int grant)
{
	pthread_mutex_lock(&km);
	__atomic_store_n(&page->gpu[gpu].go, ++serial << 32 | (gpu + 1), __ATOMIC_SEQ_CST);
	grants += grant;
	pthread_cond_broadcast(&kc);
	pthread_mutex_unlock(&km);
}

/* The application's thread that submits: it makes each call the test posts.
 * One thread throughout, so with its context it binds to the gate once (its
 * first call); without one, it binds at every call. */
static sem_t posted;
static CUresult (*job)(void);
static struct {
	CUresult r;
	int asked;
	int done;
} out;

static void *app(void *arg)
{
	(void)arg;
	for (;;) {
		sem_wait(&posted);
		asked = 0;
		out.r = job();
		out.asked = asked;
		__atomic_store_n(&out.done, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void post(CUresult (*fn)(void))
{
	__atomic_store_n(&out.done, 0, __ATOMIC_SEQ_CST);
	job = fn;
	sem_post(&posted);
}

/* A check of entry e, named in the failure's line. */
#define EXPECT(cond, ...)                                                  \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,      \
				__LINE__, e->name);                        \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			failures++;                                        \
		}                                                          \
	} while (0)

/* No slice on GPU gpu (the last one ended): the call asks the kernel for
 * that GPU's, reaches the driver only after the grant, and once. */
static void check_waits(const struct entry *e, unsigned gpu)
{
	long before = LOAD(&reached);
	int w = LOAD(&waits);

	new_go(gpu, 0);
	post(e->call);
	WAIT_FOR(LOAD(&waits) > w || LOAD(&out.done));
	EXPECT(LOAD(&waits) == w + 1, "did not ask the kernel for a slice");
	EXPECT(LOAD(&waits) == w || wait_gpu == gpu, "asked for GPU %u's slice, not GPU %u's",
	       wait_gpu, gpu);
	EXPECT(LOAD(&reached) == before, "reached the driver without a slice");
	if (LOAD(&waits) > w)
		new_go(gpu, 1);
	EXPECT(WAIT_FOR(LOAD(&out.done)), "did not return after the grant");
	EXPECT(out.r == CUDA_SUCCESS && LOAD(&reached) == before + 1,
	       "returned %d, reached the driver %ld times after the grant",
	       out.r, LOAD(&reached) - before);
}

static void check(const struct entry *e, struct gate *g)
{
	long before;
	int done;

	check_waits(e, 0);

	/* The slice held: straight to the driver, without the kernel or the lock. */
	before = LOAD(&reached);
	pthread_mutex_lock(&g->m);
	post(e->call);
	done = WAIT_FOR(LOAD(&out.done));
	pthread_mutex_unlock(&g->m);
	EXPECT(done, "waited for the gate's lock with the slice held");
	WAIT_FOR(LOAD(&out.done));	/* the lock released: now it can return */
	EXPECT(out.asked == 0, "called the kernel %d times with the slice held", out.asked);
	EXPECT(LOAD(&reached) == before + 1, "did not reach the driver with the slice held");

	/* No current context: the driver runs it in the stream's, on GPU 1. */
	if (e->stream) {
		__atomic_store_n(&no_ctx, 1, __ATOMIC_SEQ_CST);
		check_waits(e, 1);
		__atomic_store_n(&no_ctx, 0, __ATOMIC_SEQ_CST);
	}
}

int main(int argc, char **argv)
{
	unsigned n = sizeof(entries) / sizeof(entries[0]);
	struct gate *g;
	pthread_t t;

	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (unsigned i = 0; i < n; i++)
			puts(entries[i].name);
		return 0;
	}
#define SET(name, args, st) real_##name = (__typeof__(real_##name))(void (*)(void))driver;
	GATED(SET)
	real_cuCtxGetCurrent = get_current;
	real_cuCtxGetDevice = get_device;
	real_cuStreamGetCtx = stream_get_ctx;
	real_cuCtxPushCurrent_v2 = push;
	real_cuCtxPopCurrent_v2 = pop;
	page = status_page_fixture(2);
	g = gate_bind((CUcontext)&ctx0_cookie, NULL);
	if (!g || sem_init(&posted, 0, 0) || pthread_create(&t, NULL, app, NULL))
		return 2;
	for (unsigned i = 0; i < n; i++)
		check(&entries[i], g);
	printf("gate-test: %u gated entry points: %s\n", n, failures ? "FAIL" : "ok");
	return failures != 0;
}
