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
 *    (the fast path: the page's go word read, no system call, no lock).
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

#define A2 (0, 0)
#define A4 (0, 0, 0, 0)
#define A10 (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
#define A11 (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
/* Each gated entry point, with as many (ignored) arguments as it takes. */
#define GATED(X)                                                            \
	X(cuLaunchKernel, A11) X(cuLaunchKernel_ptsz, A11)                  \
	X(cuLaunchKernelEx, A4) X(cuLaunchKernelEx_ptsz, A4)                \
	X(cuLaunchCooperativeKernel, A10) X(cuLaunchCooperativeKernel_ptsz, A10) \
	X(cuGraphLaunch, A2) X(cuGraphLaunch_ptsz, A2)                      \
	X(cuMemcpyAsync, A4) X(cuMemcpyAsync_ptsz, A4)                      \
	X(cuMemcpyHtoDAsync_v2, A4) X(cuMemcpyHtoDAsync_v2_ptsz, A4)        \
	X(cuMemcpyDtoHAsync_v2, A4) X(cuMemcpyDtoHAsync_v2_ptsz, A4)        \
	X(cuMemcpyDtoDAsync_v2, A4) X(cuMemcpyDtoDAsync_v2_ptsz, A4)        \
	X(cuMemsetD8Async, A4) X(cuMemsetD8Async_ptsz, A4)                  \
	X(cuMemsetD16Async, A4) X(cuMemsetD16Async_ptsz, A4)                \
	X(cuMemsetD32Async, A4) X(cuMemsetD32Async_ptsz, A4)

#define CALL(n, args)                           \
	static CUresult call_##n(void)          \
	{                                       \
		return n args;                  \
	}
GATED(CALL)
#define ENTRY(n, args) { #n, call_##n },
static const struct entry {
	const char *name;
	CUresult (*call)(void);
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

static int ctx_cookie;
static CUresult get_current(CUcontext *c)
{
	*c = (CUcontext)&ctx_cookie;
	return CUDA_SUCCESS;
}

static CUresult get_device(CUdevice *d)
{
	*d = 0;
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
static uint64_t serial;
static __thread int asked;	/* this thread's calls to the kernel */

int link_call(unsigned long req, void *arg)
{
	struct cgpu_slice *s = arg;

	asked++;
	pthread_mutex_lock(&km);
	if (req == CGPU_IOC_SLICE_WAIT) {
		__atomic_add_fetch(&waits, 1, __ATOMIC_SEQ_CST);
		while (grants < waits)
			pthread_cond_wait(&kc, &km);
		s->go = page->gpu[0].go;
	} else if (req == CGPU_IOC_SLICE_WATCH) {
		while (page->gpu[0].go == s->go)
			pthread_cond_wait(&kc, &km);
	}
	pthread_mutex_unlock(&km);
	return 0;
}

/* The kernel writes a new go word: the end of the slice, or a grant's. */
static void new_go(int grant)
{
	pthread_mutex_lock(&km);
	__atomic_store_n(&page->gpu[0].go, ++serial << 32 | 1, __ATOMIC_SEQ_CST);
	grants += grant;
	pthread_cond_broadcast(&kc);
	pthread_mutex_unlock(&km);
}

/* The application's thread that submits: it makes each call the test posts.
 * One thread throughout, so it binds to the gate once (its first call). */
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

static void check(const struct entry *e, struct gate *g)
{
	long before = LOAD(&reached);
	int w = LOAD(&waits), done;

	/* No slice (the last one ended): the call waits for the kernel's grant. */
	new_go(0);
	post(e->call);
	WAIT_FOR(LOAD(&waits) > w || LOAD(&out.done));
	EXPECT(LOAD(&waits) == w + 1, "did not ask the kernel for a slice");
	EXPECT(LOAD(&reached) == before, "reached the driver without a slice");
	if (LOAD(&waits) > w)
		new_go(1);
	EXPECT(WAIT_FOR(LOAD(&out.done)), "did not return after the grant");
	EXPECT(out.r == CUDA_SUCCESS && LOAD(&reached) == before + 1,
	       "returned %d, reached the driver %ld times after the grant",
	       out.r, LOAD(&reached) - before);

	/* The slice held: straight to the driver, without the kernel or the lock. */
	pthread_mutex_lock(&g->m);
	post(e->call);
	done = WAIT_FOR(LOAD(&out.done));
	pthread_mutex_unlock(&g->m);
	EXPECT(done, "waited for the gate's lock with the slice held");
	WAIT_FOR(LOAD(&out.done));	/* the lock released: now it can return */
	EXPECT(out.asked == 0, "called the kernel %d times with the slice held", out.asked);
	EXPECT(LOAD(&reached) == before + 2, "did not reach the driver with the slice held");
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
#define SET(name, args) real_##name = (__typeof__(real_##name))(void (*)(void))driver;
	GATED(SET)
	real_cuCtxGetCurrent = get_current;
	real_cuCtxGetDevice = get_device;
	page = status_page_fixture();
	g = gate_bind((CUcontext)&ctx_cookie);
	if (!g || sem_init(&posted, 0, 0) || pthread_create(&t, NULL, app, NULL))
		return 2;
	for (unsigned i = 0; i < n; i++)
		check(&entries[i], g);
	printf("gate-test: %u gated entry points: %s\n", n, failures ? "FAIL" : "ok");
	return failures != 0;
}
