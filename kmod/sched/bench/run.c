#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

static int misses;

struct run *run_new(bool gated, uint32_t policy, uint32_t max_inst)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r) {
		perror("run");
		exit(2);
	}
	model_init(&r->w, gated, policy);
	cgs_set_max_inst(&r->w.sched, max_inst, 0);
	return r;
}

void run_go(struct run *r)
{
	int i;

	model_run(&r->w, WARM_NS);
	for (i = 0; i < r->w.n; i++) {
		samples_clear(&r->w.c[i].wait);
		samples_clear(&r->w.c[i].latency);
	}
	model_snap(&r->w, &r->a);
	model_run(&r->w, WARM_NS + MEASURE_NS);
	model_snap(&r->w, &r->b);
}

void run_free(struct run *r)
{
	model_free(&r->w);
	free(r);
}

double run_share(const struct run *r, int id)
{
	return (double)model_share_ppm(&r->a, &r->b, id) / 1e6;
}

double run_img_per_s(const struct run *r, int id)
{
	return model_img_per_s(&r->a, &r->b, id);
}

double alone_share(struct work w)
{
	struct run *r = run_new(false, CGS_NATIVE, CGPU_MAX_INST_DEFAULT);
	double s;

	model_add(&r->w, w, 1, false);
	run_go(r);
	s = run_share(r, 0);
	run_free(r);
	return s;
}

const char *verdict(bool ok)
{
	misses += !ok;
	return ok ? "ok" : "MISS";
}

int bench_misses(void)
{
	return misses;
}

double rel_err(double got, double want)
{
	return want ? (got - want) / want : got;
}
