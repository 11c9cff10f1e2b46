/* A GPU on a virtual clock: one kernel runs at a time, each context has its own FIFO. */
#ifndef MODEL_GPU_H
#define MODEL_GPU_H

#include <stdbool.h>
#include <stdint.h>

#define MODEL_MAX_CTX	16
#define MODEL_QUEUE	4096	/* kernels one context may have queued */

struct gpu_queue {
	uint64_t dur[MODEL_QUEUE];
	uint32_t head, n;
};

struct gpu {
	uint64_t ctx_switch_ns;	/* GPU time lost when another context's kernel starts */
	uint64_t hw_slice_ns;	/* the hardware's own time slice between busy contexts */

	struct gpu_queue q[MODEL_MAX_CTX];
	int running;		/* context of the running kernel, -1 when idle */
	int cur;		/* context the GPU is switched to */
	uint64_t cur_since;
	uint64_t run_end;
	uint64_t busy_ns[MODEL_MAX_CTX];	/* kernel time completed, per context */
	uint64_t switch_ns;		/* time spent switching contexts */
	uint64_t kernels;
};

void gpu_init(struct gpu *g, uint64_t ctx_switch_ns, uint64_t hw_slice_ns);
/* Queues a kernel of dur ns; false when the context's queue is full. */
bool gpu_submit(struct gpu *g, int ctx, uint64_t dur, uint64_t now);
/* Completes every kernel that ended by now and starts the next one. */
void gpu_advance(struct gpu *g, uint64_t now);
/* Kernels of ctx queued or running. */
uint32_t gpu_inflight(const struct gpu *g, int ctx);
/* When the running kernel ends; UINT64_MAX when idle. */
uint64_t gpu_next(const struct gpu *g);

#endif
