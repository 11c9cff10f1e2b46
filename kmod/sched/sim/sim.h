/*
 * A shared GPU on a virtual clock: the scheduler (cgs), the device and the
 * containers' processes, advanced from event to event.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include "client.h"

struct sim {
	struct cgs sched;
	struct cgs_inst slots[SIM_MAX_CTX];
	struct gpu gpu;
	struct client c[SIM_MAX_CTX];
	int n;
	bool gated;
	uint64_t now;
};

/* Device timing (ns) shared by every run: an idle context switch costs this. */
#define SIM_CTX_SWITCH_NS	20000
#define SIM_HW_SLICE_NS		2000000

/* gated = false: the bare device, no scheduler (the exclusive baseline). */
void sim_init(struct sim *w, bool gated, uint32_t policy);
/* A process in a new container; returns its id. */
int sim_add(struct sim *w, struct work work, uint32_t weight, bool highprio);
void sim_run(struct sim *w, uint64_t until);
void sim_free(struct sim *w);

/* Counters of a measured window: what happened between two snapshots. */
struct sim_snap {
	uint64_t at;
	uint64_t busy[SIM_MAX_CTX];
	uint64_t images[SIM_MAX_CTX];
	uint64_t prio[SIM_MAX_CTX];	/* time held as high priority */
	uint64_t switches;
	uint64_t ctx_switch_ns;
};

void sim_snap(const struct sim *w, struct sim_snap *s);
/* Share of the window ctx's kernels kept the GPU busy, in parts per million. */
uint64_t sim_share_ppm(const struct sim_snap *a, const struct sim_snap *b, int ctx);
double sim_img_per_s(const struct sim_snap *a, const struct sim_snap *b, int ctx);

#endif
