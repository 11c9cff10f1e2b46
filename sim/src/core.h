/* SPDX-License-Identifier: MIT */
/* What the simulated driver's parts share inside one process. */
#ifndef SIM_CORE_H
#define SIM_CORE_H

#include <pthread.h>
#include <stdint.h>

#include "cgpu_cuda.h"
#include "devices.h"
#include "ptrmap.h"
#include "state.h"

#define SIM_API __attribute__((visibility("default")))
/* The driver version the simulator's API matches: Debian's 535 / CUDA 12.2. */
#define SIM_CUDA_VERSION 12020

#define CTX_MAGIC 0x43545831u

struct CUctx_st {
	uint32_t magic;
	int ordinal;
	int phys;
	int primary;
	int refs;		/* primary contexts: retain count */
	uint64_t last_end;	/* when all work queued in this context ends */
	uint64_t null_tail;	/* the NULL stream's last work end */
	uint64_t reserve;	/* what its creation took in the driver (sim_ctx_reserve) */
};

struct sim_proc {
	pthread_mutex_t lock;	/* guards this struct and the sim's objects */
	int initialized;
	struct sim_view view;
	struct CUctx_st primary[SIM_MAX_GPUS];
};

extern struct sim_proc g_sim;

/* Memory the process holds, keyed by device pointer or handle. */
enum sim_kind { SIM_LINEAR = 1, SIM_SMALL, SIM_LOW, SIM_MANAGED, SIM_POOLED, SIM_ARRAY };
extern struct ptrmap g_sim_mem;

CUresult sim_check_init(void);
CUresult sim_device(CUdevice dev, int *phys);
CUresult sim_current(struct CUctx_st **ctx);
CUresult sim_valid_ctx(struct CUctx_st *ctx);
/* Frees everything a context holds (destroy or primary reset). */
void sim_free_ctx_memory(struct CUctx_st *ctx);
void sim_small_after_fork_child(void);
/* Graph memory: a graph allocation freed outside its graph (cuMemFree*):
 * CUDA_ERROR_INVALID_VALUE when dptr is none; a context's device lost its
 * graph memory pool. */
CUresult sim_graph_mem_free(CUdeviceptr dptr);
void sim_graph_mem_ctx_gone(int phys);

/* Whether a stream handle may be used for stream-ordered work. */
CUresult sim_stream_check(CUstream s);

/* Stream capture (cuda_graph.c). A stream's capture: graph NULL when the
 * stream is not capturing; work captured goes in as a node after last. */
struct sim_capture {
	CUgraph graph;
	CUgraphNode last;
	int invalidated;
	int ordinal;		/* the stream's device */
	cuuint64_t id;
};
/* The capture of a valid stream s; NULL for the NULL streams, which never
 * capture (cuda_exec.c). */
struct sim_capture *sim_stream_capture(CUstream s);
/* The capture of s when s is a valid stream capturing, else NULL. */
struct sim_capture *sim_capturing(CUstream s);
/* Work on a capturing stream becomes a node of its graph. */
CUresult sim_capture_kernel(struct sim_capture *c, uint64_t dur_ns);
CUresult sim_capture_alloc(struct sim_capture *c, size_t bytes,
			   CUdeviceptr *dptr);
CUresult sim_capture_free(struct sim_capture *c, CUdeviceptr dptr);
/* Work a capture may not (or the simulator cannot) take: CUDA_SUCCESS when
 * s does not capture; else why, and the capture is invalidated. */
CUresult sim_capture_refuse(CUstream s, CUresult why);

/* Device timeline: when the kernel ends, or 0 when the GPU's engine is out of reach. */
uint64_t sim_launch(int phys, uint64_t not_before, uint64_t dur_ns);
CUresult sim_kernel_check(CUfunction f, const unsigned int grid[3],
			  const unsigned int block[3], void **kernelParams,
			  void **extra, int cooperative, uint64_t *dur_ns);
CUresult sim_stream_launch(CUstream hStream, const uint64_t *dur_ns, size_t n,
			   uint64_t *end);
void sim_wait_until(uint64_t t);
/* At synchronisation points pools hand memory above their release
 * threshold back to the device, as the real driver does. */
void sim_pools_trim_on_sync(void);

#endif
