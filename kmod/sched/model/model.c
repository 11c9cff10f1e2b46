#include "model.h"

#include <stdio.h>
#include <stdlib.h>

void model_init(struct model *w, bool gated, uint32_t policy)
{
	*w = (struct model){ .gated = gated };
	gpu_init(&w->gpu, MODEL_CTX_SWITCH_NS, MODEL_HW_SLICE_NS);
	cgs_init(&w->sched, w->slots, MODEL_MAX_CTX, 0);
	cgs_set_policy(&w->sched, policy, 0);
}

int model_add(struct model *w, struct work work, uint32_t weight, bool highprio)
{
	int id = w->n++;

	if (id >= MODEL_MAX_CTX || cgs_join(&w->sched, id, weight, highprio, w->now)) {
		fprintf(stderr, "model: cannot add container %d\n", id);
		exit(2);
	}
	client_init(&w->c[id], id, work, w->gated);
	return id;
}

void model_free(struct model *w)
{
	int i;

	for (i = 0; i < w->n; i++) {
		samples_free(&w->c[i].latency);
		samples_free(&w->c[i].wait);
	}
}

/* Runs everything due at w->now until nothing more happens at that instant. */
static void settle(struct model *w)
{
	int rounds = 0;
	bool moved;

	do {
		uint64_t gen = cgs_gen(&w->sched);
		int i;

		moved = false;
		gpu_advance(&w->gpu, w->now);
		if (w->gated && cgs_next_tick(&w->sched) <= w->now)
			cgs_tick(&w->sched, w->now);
		for (i = 0; i < w->n; i++)
			moved |= client_step(&w->c[i], &w->sched, &w->gpu, w->now);
		moved |= gen != cgs_gen(&w->sched);
		if (++rounds > 10000) {
			fprintf(stderr, "model: no progress at %llu ns\n",
				(unsigned long long)w->now);
			exit(2);
		}
	} while (moved);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void model_run(struct model *w, uint64_t until)
{
	while (w->now < until) {
		uint64_t t = until;
		int i;

		settle(w);
		t = min64(t, gpu_next(&w->gpu));
		if (w->gated)
			t = min64(t, cgs_next_tick(&w->sched));
		for (i = 0; i < w->n; i++)
			t = min64(t, client_next(&w->c[i], &w->sched, w->now));
		if (t <= w->now) {
			fprintf(stderr, "model: time stands still at %llu ns\n",
				(unsigned long long)w->now);
			exit(2);
		}
		w->now = t;
	}
	settle(w);
}

void model_snap(const struct model *w, struct model_snap *s)
{
	int i;

	s->at = w->now;
	for (i = 0; i < MODEL_MAX_CTX; i++) {
		s->busy[i] = w->gpu.busy_ns[i];
		s->images[i] = i < w->n ? w->c[i].images : 0;
		s->prio[i] = w->slots[i].prio_ns;
	}
	s->switches = w->sched.switches;
	s->ctx_switch_ns = w->gpu.switch_ns;
}

uint64_t model_share_ppm(const struct model_snap *a, const struct model_snap *b, int ctx)
{
	return (b->busy[ctx] - a->busy[ctx]) * 1000000 / (b->at - a->at);
}

double model_img_per_s(const struct model_snap *a, const struct model_snap *b, int ctx)
{
	return (double)(b->images[ctx] - a->images[ctx]) * 1e9 / (double)(b->at - a->at);
}
