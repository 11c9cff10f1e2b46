/*
 * A shared GPU on a virtual clock: the scheduler (cgs), the device and the
 * containers' processes, advanced from event to event.
 */
#ifndef MODEL_SIM_H
#define MODEL_SIM_H

#include "client.h"

struct model {
	struct cgs sched;
	struct cgs_inst slots[MODEL_MAX_CTX];
	struct gpu gpu;
	struct client c[MODEL_MAX_CTX];
	int n;
	bool gated;
	uint64_t now;
};

/* Device timing (ns) shared by every run: an idle context switch costs this. */
#define MODEL_CTX_SWITCH_NS	20000
#define MODEL_HW_SLICE_NS		2000000

/* gated = false: the bare device, no scheduler (the exclusive baseline). */
void model_init(struct model *w, bool gated, uint32_t policy);
/* A process in a new container; returns its id. */
int model_add(struct model *w, struct work work, uint32_t weight, bool highprio);
void model_run(struct model *w, uint64_t until);
void model_free(struct model *w);

/* Counters of a measured window: what happened between two snapshots. */
struct model_snap {
	uint64_t at;
	uint64_t busy[MODEL_MAX_CTX];
	uint64_t images[MODEL_MAX_CTX];
	uint64_t prio[MODEL_MAX_CTX];	/* time held as high priority */
	uint64_t switches;
	uint64_t ctx_switch_ns;
};

void model_snap(const struct model *w, struct model_snap *s);
/* Share of the window ctx's kernels kept the GPU busy, in parts per million. */
uint64_t model_share_ppm(const struct model_snap *a, const struct model_snap *b, int ctx);
double model_img_per_s(const struct model_snap *a, const struct model_snap *b, int ctx);

#endif
