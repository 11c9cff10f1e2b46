/*
 * What an application does, as a stream of operations: host work, kernel
 * launches, syncs. The ResNet50-like model is calibrated on SPEC's TensorRT
 * figures for an A10: a batch of B images takes 427 us + 161 us * B of GPU
 * time, spread over 64 + 2B kernels, with one sync per batch.
 */
#ifndef MODEL_WORK_H
#define MODEL_WORK_H

#include <stdint.h>

enum op_kind {
	OP_CPU,		/* host work for arg ns */
	OP_UNTIL,	/* nothing to do until time arg */
	OP_LAUNCH,	/* one kernel of arg ns */
	OP_SYNC,	/* wait for every kernel launched so far */
	OP_DONE,	/* a unit of work ended: arg images; a request if started */
};

struct op {
	enum op_kind kind;
	uint64_t arg;
};

enum work_kind {
	WORK_BATCHES,	/* back-to-back batches, always busy */
	WORK_BUSY_IDLE,	/* batches for busy_ns, then idle for idle_ns */
	WORK_REQUESTS,	/* one batch per request, arriving every period_ns */
	WORK_NONE,	/* a container whose processes never use the GPU */
};

struct work {
	enum work_kind kind;
	uint32_t batch;
	uint32_t kernels;	/* per batch */
	uint64_t kernel_ns;
	uint64_t host_ns;	/* host work before each batch */
	uint64_t busy_ns, idle_ns;
	uint64_t period_ns;	/* mean gap between requests */
	uint32_t jitter_pct;	/* arrivals spread +-jitter_pct% of the period */

	/* generator state */
	uint32_t step;		/* position in the current batch */
	uint64_t phase_end;	/* end of the busy phase (WORK_BUSY_IDLE) */
	uint64_t arrival;	/* next request (WORK_REQUESTS) */
	uint64_t rng;
};

/* A ResNet50-like batch of `batch` images. */
struct work work_resnet(enum work_kind kind, uint32_t batch);
/* GPU time one batch takes alone. */
uint64_t work_batch_ns(const struct work *w);
/* The next operation at time now; `started` is set to a request's arrival. */
struct op work_next(struct work *w, uint64_t now, uint64_t *started);

#endif
