#include "gpu.h"

#include <string.h>

void gpu_init(struct gpu *g, uint64_t ctx_switch_ns, uint64_t hw_slice_ns)
{
	memset(g, 0, sizeof(*g));
	g->ctx_switch_ns = ctx_switch_ns;
	g->hw_slice_ns = hw_slice_ns;
	g->running = -1;
	g->cur = -1;
}

uint32_t gpu_inflight(const struct gpu *g, int ctx)
{
	return g->q[ctx].n + (g->running == ctx);
}

uint64_t gpu_next(const struct gpu *g)
{
	return g->running >= 0 ? g->run_end : UINT64_MAX;
}

/*
 * Like the hardware: the current context keeps the GPU while it has work,
 * unless another context has work too and the hardware slice is spent.
 */
static int pick(const struct gpu *g, uint64_t now)
{
	int i, c;

	if (g->cur >= 0 && g->q[g->cur].n &&
	    now - g->cur_since < g->hw_slice_ns)
		return g->cur;
	for (i = 1; i <= MODEL_MAX_CTX; i++) {
		c = ((g->cur < 0 ? 0 : g->cur) + i) % MODEL_MAX_CTX;
		if (g->q[c].n)
			return c;
	}
	return -1;
}

static void start(struct gpu *g, uint64_t now)
{
	int c = pick(g, now);
	struct gpu_queue *q;
	uint64_t at = now;

	if (c < 0)
		return;
	if (c != g->cur) {
		if (g->cur >= 0) {
			at += g->ctx_switch_ns;
			g->switch_ns += g->ctx_switch_ns;
		}
		g->cur = c;
		g->cur_since = at;
	}
	q = &g->q[c];
	g->running = c;
	g->run_end = at + q->dur[q->head];
	g->busy_ns[c] += q->dur[q->head];
	q->head = (q->head + 1) % MODEL_QUEUE;
	q->n--;
}

bool gpu_submit(struct gpu *g, int ctx, uint64_t dur, uint64_t now)
{
	struct gpu_queue *q = &g->q[ctx];

	if (q->n == MODEL_QUEUE)
		return false;
	q->dur[(q->head + q->n) % MODEL_QUEUE] = dur;
	q->n++;
	if (g->running < 0)
		start(g, now);
	return true;
}

void gpu_advance(struct gpu *g, uint64_t now)
{
	while (g->running >= 0 && g->run_end <= now) {
		uint64_t end = g->run_end;

		g->running = -1;
		g->kernels++;
		start(g, end);
	}
}
