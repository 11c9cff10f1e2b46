#include "work.h"

#define HOST_NS		20000	/* input copy and pre-processing per batch */

struct work work_resnet(enum work_kind kind, uint32_t batch)
{
	uint32_t kernels = 64 + 2 * batch;
	uint64_t total = 427000 + 161000 * (uint64_t)batch;

	return (struct work){
		.kind = kind,
		.batch = batch,
		.kernels = kernels,
		.kernel_ns = total / kernels,
		.host_ns = HOST_NS,
		.rng = 0x9e3779b97f4a7c15ULL ^ batch,
	};
}

uint64_t work_batch_ns(const struct work *w)
{
	return w->kernel_ns * w->kernels;
}

static uint64_t next_gap(struct work *w)
{
	uint64_t span = w->period_ns * w->jitter_pct / 100;

	w->rng = w->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	if (!span)
		return w->period_ns;
	return w->period_ns - span + (w->rng >> 33) % (2 * span + 1);
}

/*
 * A batch is step 0: host work, 1..kernels: launches, then a sync and the
 * count. What comes before step 0 depends on the kind of work.
 */
struct op work_next(struct work *w, uint64_t now, uint64_t *started)
{
	uint32_t s = w->step;

	if (w->kind == WORK_NONE)
		return (struct op){ OP_UNTIL, UINT64_MAX };
	if (s == 0) {
		if (w->kind == WORK_BUSY_IDLE) {
			if (!w->phase_end)
				w->phase_end = now + w->busy_ns;
			if (now >= w->phase_end) {
				w->phase_end = now + w->idle_ns + w->busy_ns;
				return (struct op){ OP_CPU, w->idle_ns };
			}
		}
		if (w->kind == WORK_REQUESTS) {
			if (!w->arrival)
				w->arrival = now + next_gap(w);
			if (now < w->arrival)
				return (struct op){ OP_UNTIL, w->arrival };
			*started = w->arrival;
			w->arrival += next_gap(w);
		}
		w->step = 1;
		return (struct op){ OP_CPU, w->host_ns };
	}
	if (s <= w->kernels) {
		w->step++;
		return (struct op){ OP_LAUNCH, w->kernel_ns };
	}
	if (s == w->kernels + 1) {
		w->step++;
		return (struct op){ OP_SYNC, 0 };
	}
	w->step = 0;
	return (struct op){ OP_DONE, w->batch };
}
