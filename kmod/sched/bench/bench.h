/* Helpers shared by the benchmark's tables: measured runs and verdicts. */
#ifndef BENCH_H
#define BENCH_H

#include "../model/model.h"

#define MS		1000000ULL
#define WARM_NS		(1000 * MS)
#define MEASURE_NS	(20000 * MS)
#define Q_NS		CGS_DEF_QUANTUM_NS

struct run {
	struct model w;
	struct model_snap a, b;
};

/* A simulated node: policy and max_inst set, nobody on it yet. */
struct run *run_new(bool gated, uint32_t policy, uint32_t max_inst);
/* Warms up, then measures a window. */
void run_go(struct run *r);
void run_free(struct run *r);
/* Fraction of the measured window id's kernels kept the GPU busy. */
double run_share(const struct run *r, int id);
double run_img_per_s(const struct run *r, int id);
/* Share of the GPU `work` reaches alone on the bare device. */
double alone_share(struct work w);

/* Prints ok or MISS for one target and counts the misses. */
const char *verdict(bool ok);
int bench_misses(void);
double rel_err(double got, double want);

void bench_ratio(void);
void bench_policies(void);
void bench_switching(void);

#endif
