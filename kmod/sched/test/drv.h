/*
 * Ideal processes driven straight against the scheduler's API, without the
 * simulated GPU: a busy one uses every slice to its deadline, drains for
 * `overrun` ns and releases; a hung one never calls again once granted.
 * Hold times are observed from the outside, not read from cgs's counters.
 */
#ifndef DRV_H
#define DRV_H

#include "../cgs.h"

#define DRV_N	8
#define DRV_SEQ	512
#define MS	1000000ULL

struct drv {
	struct cgs s;
	struct cgs_inst slot[DRV_N];
	u64 now;
	u64 overrun;
	bool busy[DRV_N];
	bool hung[DRV_N];
	u64 held[DRV_N];
	s32 cur;
	u64 since;
	s32 seq[DRV_SEQ];	/* holders in grant order */
	int nseq;
	u64 from;		/* start of the measured window */
};

void drv_init(struct drv *d, u32 policy);
void drv_join(struct drv *d, u32 i, u32 weight, bool highprio);
/* A fresh scheduler with instances 0 and 1 at these weights, both busy. */
void drv_pair(struct drv *d, u32 policy, u64 overrun, u32 w0, u32 w1);
/* Gives i endless work, or takes it away (a holder then releases at once). */
void drv_busy(struct drv *d, u32 i, bool busy);
void drv_run(struct drv *d, u64 ns);
/* Starts a new measured window. */
void drv_measure(struct drv *d);
/* A measured window of ns. */
void drv_window(struct drv *d, u64 ns);
/* Fraction of the window i held the GPU. */
double drv_share(const struct drv *d, u32 i);
/* Records a holder change after any direct call on d->s. */
void drv_observe(struct drv *d);

#endif
