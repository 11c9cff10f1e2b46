// SPDX-License-Identifier: MIT
/*
 * Modules, kernel launches, streams and events on the device timeline.
 *
 * Each GPU has one engine shared by every process on the node (the stand-in
 * driver's engine page, or the state file's): a launched kernel starts when the engine,
 * its stream and any event it waits on are all done, and occupies the
 * engine for the time it asks. Work from different processes and
 * containers therefore serialises as on a time-sliced GPU, and launches
 * return at once while the work is queued.
 *
 * Kernels: any module image loads; its functions are the built-in
 * "sleep_us" and "sleep_ns", whose one parameter (unsigned long long) is how
 * long the kernel runs. cuLaunchKernel, cuLaunchCooperativeKernel and
 * cuLaunchKernelEx check what the driver checks and queue the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "pool.h"

#define MOD_MAGIC 0x4d4f4431u
#define FN_MAGIC 0x464e4331u
#define STREAM_MAGIC 0x53545231u
#define EVENT_MAGIC 0x45564e31u

struct CUmod_st {
	uint32_t magic;
};

struct CUfunc_st {
	uint32_t magic;
	uint64_t ns_per_unit;
};

static struct CUfunc_st fn_sleep_us = { FN_MAGIC, 1000 };
static struct CUfunc_st fn_sleep_ns = { FN_MAGIC, 1 };

struct CUstream_st {
	uint32_t magic;
	struct CUctx_st *ctx;
	uint64_t tail;		/* when this stream's last work ends */
	struct sim_capture cap;
};

struct CUevent_st {
	uint32_t magic;
	unsigned int flags;
	int recorded;
	uint64_t time;
};

/* Lock-free: a launch is one compare-and-swap on the engine's end time. */
uint64_t sim_launch(int phys, uint64_t not_before, uint64_t dur_ns)
{
	struct sd_engine *g = sim_engine(phys);
	uint64_t now = sim_now_ns(), old, start, end;

	if (!g)
		return 0;
	old = __atomic_load_n(&g->busy_until, __ATOMIC_ACQUIRE);
	do {
		start = old > now ? old : now;
		if (not_before > start)
			start = not_before;
		end = start + dur_ns;
	} while (!__atomic_compare_exchange_n(&g->busy_until, &old, end, 1,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return end;
}

void sim_wait_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ULL),
			       (long)(t % 1000000000ULL) };

	while (sim_now_ns() < t &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

SIM_API CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	struct CUctx_st *c;
	struct CUmod_st *m;
	CUresult r = sim_current(&c);

	if (r)
		return r;
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	m = malloc(sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = MOD_MAGIC;
	*module = m;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuModuleUnload(CUmodule hmod)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!hmod || hmod->magic != MOD_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	hmod->magic = 0;
	free(hmod);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
				     const char *name)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!hmod || hmod->magic != MOD_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!strcmp(name, "sleep_us"))
		*hfunc = &fn_sleep_us;
	else if (!strcmp(name, "sleep_ns"))
		*hfunc = &fn_sleep_ns;
	else
		return CUDA_ERROR_NOT_FOUND;
	return CUDA_SUCCESS;
}

static int is_null_stream(CUstream s)
{
	return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

CUresult sim_stream_check(CUstream s)
{
	if (is_null_stream(s))
		return CUDA_SUCCESS;
	return s->magic == STREAM_MAGIC ? CUDA_SUCCESS :
					  CUDA_ERROR_INVALID_HANDLE;
}

struct sim_capture *sim_stream_capture(CUstream s)
{
	return is_null_stream(s) ? NULL : &s->cap;
}

/* The stream's context and its tail; the NULL streams are the current
 * context's (one default stream per context in the simulator). */
static CUresult stream_resolve(CUstream s, struct CUctx_st **ctx,
			       uint64_t **tail)
{
	CUresult r;

	if (is_null_stream(s)) {
		r = sim_current(ctx);
		if (r == CUDA_SUCCESS)
			*tail = &(*ctx)->null_tail;
		return r;
	}
	r = sim_check_init();
	if (r == CUDA_SUCCESS)
		r = sim_stream_check(s);
	if (r == CUDA_SUCCESS) {
		*ctx = s->ctx;
		*tail = &s->tail;
	}
	return r;
}

static void atomic_max(uint64_t *p, uint64_t v)
{
	uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (old < v && !__atomic_compare_exchange_n(p, &old, v, 1,
						       __ATOMIC_RELEASE,
						       __ATOMIC_RELAXED))
		;
}

/* Blocks of this many threads one SM holds at once (a T4: 1024 threads, 16 blocks). */
static unsigned int blocks_per_sm(unsigned int threads)
{
	unsigned int n = 1024 / threads;

	return n < 16 ? n : 16;
}

/*
 * The checks every launch makes; cooperative launches must also fit on the GPU
 * at once (40 SMs), as NVIDIA's driver requires. On success *dur_ns is how long
 * the kernel runs.
 */
CUresult sim_kernel_check(CUfunction f, const unsigned int grid[3],
			  const unsigned int block[3], void **kernelParams,
			  void **extra, int cooperative, uint64_t *dur_ns)
{
	unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
	unsigned int threads;

	if (!f || f->magic != FN_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] ||
	    !block[2] || (unsigned long long)block[0] * block[1] * block[2] > 1024 ||
	    !kernelParams || !kernelParams[0] || extra)
		return CUDA_ERROR_INVALID_VALUE;
	threads = block[0] * block[1] * block[2];
	if (cooperative && blocks > 40ULL * blocks_per_sm(threads))
		return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	*dur_ns = *(unsigned long long *)kernelParams[0] * f->ns_per_unit;
	return CUDA_SUCCESS;
}

/* A GPU whose engine is out of reach (its node gone) fails the launch, as a real
 * channel's would. */
static CUresult queue(struct CUctx_st *c, uint64_t *tail, uint64_t dur_ns)
{
	uint64_t end = sim_launch(c->phys, __atomic_load_n(tail, __ATOMIC_ACQUIRE),
				  dur_ns);

	if (!end)
		return CUDA_ERROR_LAUNCH_FAILED;
	atomic_max(tail, end);
	atomic_max(&c->last_end, end);
	return CUDA_SUCCESS;
}

/* Kernels of dur_ns[0..n) queued on the stream, one after the other; *end
 * is when the stream's work then ends. */
CUresult sim_stream_launch(CUstream hStream, const uint64_t *dur_ns, size_t n,
			   uint64_t *end)
{
	struct CUctx_st *c;
	uint64_t *tail;
	CUresult r = stream_resolve(hStream, &c, &tail);

	/* A graph launched into a capture would be a child graph node. */
	if (r == CUDA_SUCCESS)
		r = sim_capture_refuse(hStream, CUDA_ERROR_NOT_SUPPORTED);
	for (size_t i = 0; r == CUDA_SUCCESS && i < n; i++)
		r = queue(c, tail, dur_ns[i]);
	if (r == CUDA_SUCCESS)
		*end = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
	return r;
}

static CUresult launch(CUfunction f, const unsigned int grid[3],
		       const unsigned int block[3], CUstream hStream,
		       void **kernelParams, void **extra, int cooperative)
{
	struct CUctx_st *c;
	uint64_t *tail, dur;
	struct sim_capture *cap;
	CUresult r = stream_resolve(hStream, &c, &tail);

	if (r == CUDA_SUCCESS)
		r = sim_kernel_check(f, grid, block, kernelParams, extra,
				     cooperative, &dur);
	if (r)
		return r;
	cap = sim_capturing(hStream);
	if (cap)
		return sim_capture_kernel(cap, dur);
	return queue(c, tail, dur);
}

SIM_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
				unsigned int gridDimY, unsigned int gridDimZ,
				unsigned int blockDimX, unsigned int blockDimY,
				unsigned int blockDimZ,
				unsigned int sharedMemBytes, CUstream hStream,
				void **kernelParams, void **extra)
{
	const unsigned int grid[3] = { gridDimX, gridDimY, gridDimZ };
	const unsigned int block[3] = { blockDimX, blockDimY, blockDimZ };

	(void)sharedMemBytes;
	return launch(f, grid, block, hStream, kernelParams, extra, 0);
}

SIM_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					   unsigned int gridDimY,
					   unsigned int gridDimZ,
					   unsigned int blockDimX,
					   unsigned int blockDimY,
					   unsigned int blockDimZ,
					   unsigned int sharedMemBytes,
					   CUstream hStream, void **kernelParams)
{
	const unsigned int grid[3] = { gridDimX, gridDimY, gridDimZ };
	const unsigned int block[3] = { blockDimX, blockDimY, blockDimZ };

	(void)sharedMemBytes;
	return launch(f, grid, block, hStream, kernelParams, NULL, 1);
}

/* Attributes are checked by id; only COOPERATIVE changes what the launch does. */
SIM_API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
				  void **kernelParams, void **extra)
{
	int cooperative = 0;

	if (!config || (config->numAttrs && !config->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < config->numAttrs; i++) {
		if (config->attrs[i].id > CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN)
			return CUDA_ERROR_INVALID_VALUE;
		if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
			cooperative = config->attrs[i].value.cooperative != 0;
	}
	return launch(f,
		      (const unsigned int[3]){ config->gridDimX, config->gridDimY,
					       config->gridDimZ },
		      (const unsigned int[3]){ config->blockDimX, config->blockDimY,
					       config->blockDimZ },
		      config->hStream, kernelParams, extra, cooperative);
}

SIM_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	struct CUctx_st *c;
	struct CUstream_st *s;
	CUresult r = sim_current(&c);

	if (r)
		return r;
	if (!phStream || Flags > CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->magic = STREAM_MAGIC;
	s->ctx = c;
	*phStream = s;
	return CUDA_SUCCESS;
}

/* Which context a stream's work runs in, with or without a current one
 * (libcgpu's gate asks it for calls made without one). */
SIM_API CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
	struct CUctx_st *c;
	uint64_t *tail;
	CUresult r = stream_resolve(hStream, &c, &tail);

	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = c;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamDestroy_v2(CUstream hStream)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (is_null_stream(hStream) || hStream->magic != STREAM_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	/* A capture never ended leaves no graph behind. */
	if (hStream->cap.graph)
		cuGraphDestroy(hStream->cap.graph);
	hStream->magic = 0;
	free(hStream);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamSynchronize(CUstream hStream)
{
	struct CUctx_st *c;
	uint64_t *tail;
	CUresult r = stream_resolve(hStream, &c, &tail);

	if (r == CUDA_SUCCESS)
		r = sim_capture_refuse(hStream, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	if (r)
		return r;
	sim_wait_until(__atomic_load_n(tail, __ATOMIC_ACQUIRE));
	sim_pools_trim_on_sync();
	return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamQuery(CUstream hStream)
{
	struct CUctx_st *c;
	uint64_t *tail;
	CUresult r = stream_resolve(hStream, &c, &tail);

	if (r == CUDA_SUCCESS)
		r = sim_capture_refuse(hStream, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	if (r)
		return r;
	return sim_now_ns() >= __atomic_load_n(tail, __ATOMIC_ACQUIRE) ?
		       CUDA_SUCCESS :
		       CUDA_ERROR_NOT_READY;
}

static CUresult valid_event(CUevent e)
{
	return e && e->magic == EVENT_MAGIC ? CUDA_SUCCESS :
					      CUDA_ERROR_INVALID_HANDLE;
}

SIM_API CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
				   unsigned int Flags)
{
	struct CUctx_st *c;
	uint64_t *tail;
	CUresult r = stream_resolve(hStream, &c, &tail);

	/* Cross-stream capture (events joining streams) is not simulated. */
	if (r == CUDA_SUCCESS)
		r = sim_capture_refuse(hStream, CUDA_ERROR_NOT_SUPPORTED);
	if (r)
		return r;
	if (Flags > 1)
		return CUDA_ERROR_INVALID_VALUE;
	r = valid_event(hEvent);
	if (r == CUDA_SUCCESS && hEvent->recorded)
		atomic_max(tail, hEvent->time);
	return r;
}

SIM_API CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	struct CUctx_st *c;
	struct CUevent_st *e;
	CUresult r = sim_current(&c);

	if (r)
		return r;
	if (!phEvent || Flags > 0x7)
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = EVENT_MAGIC;
	e->flags = Flags;
	*phEvent = e;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuEventDestroy_v2(CUevent hEvent)
{
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = valid_event(hEvent);
	if (r)
		return r;
	hEvent->magic = 0;
	free(hEvent);
	return CUDA_SUCCESS;
}

/* An event completes when the work queued before it on its stream does. */
SIM_API CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	struct CUctx_st *c;
	uint64_t *tail, t;
	CUresult r = stream_resolve(hStream, &c, &tail);

	if (r == CUDA_SUCCESS)
		r = valid_event(hEvent);
	if (r == CUDA_SUCCESS)
		r = sim_capture_refuse(hStream, CUDA_ERROR_NOT_SUPPORTED);
	if (r)
		return r;
	t = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
	hEvent->time = t > sim_now_ns() ? t : sim_now_ns();
	hEvent->recorded = 1;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuEventQuery(CUevent hEvent)
{
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = valid_event(hEvent);
	if (r)
		return r;
	return !hEvent->recorded || sim_now_ns() >= hEvent->time ?
		       CUDA_SUCCESS :
		       CUDA_ERROR_NOT_READY;
}

SIM_API CUresult cuEventSynchronize(CUevent hEvent)
{
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = valid_event(hEvent);
	if (r)
		return r;
	if (hEvent->recorded)
		sim_wait_until(hEvent->time);
	sim_pools_trim_on_sync();
	return CUDA_SUCCESS;
}

SIM_API CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart,
				    CUevent hEnd)
{
	CUresult r = sim_check_init();

	if (r == CUDA_SUCCESS)
		r = valid_event(hStart);
	if (r == CUDA_SUCCESS)
		r = valid_event(hEnd);
	if (r)
		return r;
	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	if (!hStart->recorded || !hEnd->recorded ||
	    ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	if (sim_now_ns() < hStart->time || sim_now_ns() < hEnd->time)
		return CUDA_ERROR_NOT_READY;
	*pMilliseconds = (float)((double)((int64_t)(hEnd->time - hStart->time)) /
				 1e6);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int,
				     unsigned int, unsigned int, unsigned int,
				     unsigned int, unsigned int, CUstream,
				     void **, void **)
	__attribute__((alias("cuLaunchKernel")));
SIM_API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned int,
						unsigned int, unsigned int,
						unsigned int, unsigned int,
						unsigned int, unsigned int,
						CUstream, void **)
	__attribute__((alias("cuLaunchCooperativeKernel")));
SIM_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction,
				       void **, void **)
	__attribute__((alias("cuLaunchKernelEx")));
SIM_API CUresult cuStreamSynchronize_ptsz(CUstream)
	__attribute__((alias("cuStreamSynchronize")));
SIM_API CUresult cuStreamGetCtx_ptsz(CUstream, CUcontext *)
	__attribute__((alias("cuStreamGetCtx")));
SIM_API CUresult cuStreamQuery_ptsz(CUstream)
	__attribute__((alias("cuStreamQuery")));
SIM_API CUresult cuStreamWaitEvent_ptsz(CUstream, CUevent, unsigned int)
	__attribute__((alias("cuStreamWaitEvent")));
SIM_API CUresult cuEventRecord_ptsz(CUevent, CUstream)
	__attribute__((alias("cuEventRecord")));
