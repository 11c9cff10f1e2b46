/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cgs: the compute-slice scheduler of one GPU (docs/scheduler.md).
 *
 * Pure decision logic: no allocation, no locking, no clock. The caller owns
 * the memory (struct cgs and an array of struct cgs_inst slots), serialises
 * every call on one GPU (one spinlock per GPU in cgpu_km) and passes the
 * current time in nanoseconds on one monotonic clock. Every call does at most
 * O(number of slots) work.
 *
 * After each mutating call the caller reads the outcome:
 *   cgs_holder()/cgs_deadline(): who may submit and until when;
 *   cgs_gen(): changes whenever the holder or its deadline changed (wake the
 *              waiters and republish the status page when it moved);
 *   cgs_next_tick(): when to call cgs_tick() at the latest (arm one timer).
 */
#ifndef CGS_H
#define CGS_H

#include "cgs_types.h"
/* The procfs ranges and defaults (CGPU_*): one definition for cgpu_km and cgs. */
#include "../lib/types.h"

enum cgs_policy {
	CGS_FAIR = CGPU_POLICY_FAIR,
	CGS_PREEMPT = CGPU_POLICY_PREEMPT,
	CGS_WEIGHT = CGPU_POLICY_WEIGHT,
	CGS_FIXED = CGPU_POLICY_FIXED,
	CGS_SOFT = CGPU_POLICY_SOFT,
	CGS_NATIVE = CGPU_POLICY_NATIVE,
};

#define CGS_NPOLICIES		(CGPU_POLICY_MAX + 1)

#define CGS_DEF_QUANTUM_NS	4000000ULL	/* 4 ms */
#define CGS_MIN_QUANTUM_NS	100000ULL
#define CGS_MAX_QUANTUM_NS	1000000000ULL
#define CGS_DEF_GRACE_NS	100000000ULL	/* 100 ms */
#define CGS_MIN_GRACE_NS	1000000ULL
#define CGS_MAX_GRACE_NS	10000000000ULL
/* High priority may take prio_ratio percent of any window this long. */
#define CGS_PRIO_WINDOW_NS	100000000ULL
/* One charge is capped so that charge * CGS_WSCALE cannot overflow. */
#define CGS_MAX_CHARGE_NS	60000000000ULL

#define CGS_NONE	(-1)	/* no holder */
#define CGS_GHOST	(-2)	/* the unassigned share of policies 0 and 3 */
#define CGS_NEVER	(~0ULL)

/* Negative Linux errno values, so cgpu_km can return them unchanged. */
#define CGS_EPERM	(-1)
#define CGS_ENOENT	(-2)
#define CGS_EEXIST	(-17)
#define CGS_EINVAL	(-22)

struct cgs_inst {
	s64 lag;		/* virtual time ahead of the GPU's (see cgs.c) */
	u64 last_grant;		/* round-robin order among equals */
	u64 charged_ns;		/* time held, overrun included, every grant */
	u64 prio_ns;		/* part of charged_ns held as high priority */
	u64 used_ns;		/* GPU time the holder reported */
	u64 joined_at;		/* when it joined */
	/*
	 * used_ns by second of the clock (now / 1e9), so that a reader sees the
	 * same figure however often it asks: sec_used in second sec, prev_used
	 * in the one before it. A slice counts in the second it ends in.
	 */
	u64 sec;
	u64 sec_used;
	u64 prev_used;
	u64 grants;
	u64 takebacks;		/* slices taken back from a silent holder */
	u32 weight;
	u8 joined;
	u8 highprio;
	u8 busy;		/* has work: pending, or holding it */
};

struct cgs {
	struct cgs_inst *inst;
	u32 ninst;
	u32 policy;
	u32 max_inst;
	u32 prio_ratio;
	u64 quantum_ns;
	u64 grace_ns;
	u64 now;		/* latest time seen: time never runs back */

	s32 holder;		/* instance index, or CGS_NONE */
	s32 last_holder;
	u8 prio_grant;		/* the holder's grant is charged to prio_credit */
	u64 charged_to;		/* the holder is charged up to here */
	u64 held_ns;		/* charged for the current hold so far */
	u64 deadline;		/* the holder submits nothing from here on */

	s32 idle_owner;		/* whose slot leaves the GPU idle, or CGS_NONE */
	u64 idle_from;
	u64 idle_until;
	s64 ghost_lag;

	s64 prio_credit;	/* ns high priority may still take */
	u64 credit_at;

	u64 gen;
	u64 next_tick;
	u64 switches;		/* grants to another instance than the last */
	u64 idle_slot_ns;	/* time left idle for idle or unassigned shares */
};

void cgs_init(struct cgs *s, struct cgs_inst *slots, u32 nslots, u64 now);
int cgs_set_timing(struct cgs *s, u64 quantum_ns, u64 grace_ns, u64 now);

int cgs_join(struct cgs *s, u32 i, u32 weight, bool highprio, u64 now);
int cgs_leave(struct cgs *s, u32 i, u64 now);
int cgs_set_policy(struct cgs *s, u32 policy, u64 now);
int cgs_set_max_inst(struct cgs *s, u32 max_inst, u64 now);
int cgs_set_prio_ratio(struct cgs *s, u32 ratio, u64 now);
int cgs_set_weight(struct cgs *s, u32 i, u32 weight, u64 now);
int cgs_set_highprio(struct cgs *s, u32 i, bool highprio, u64 now);

/* Instance i has work it may not submit yet. */
int cgs_pending(struct cgs *s, u32 i, u64 now);
/*
 * Instance i no longer has work waiting (its last waiter left: a signal, a
 * closed file). A holder is released as if it reported no use.
 */
int cgs_idle(struct cgs *s, u32 i, u64 now);
/*
 * The holder i has stopped submitting and its queued work has completed
 * (or it had none left): used_ns is the GPU time its work took during the
 * hold, more says whether it still has work. CGS_EPERM if i is not the
 * holder (its slice was taken back, or it never had one): nothing changes.
 */
int cgs_release(struct cgs *s, u32 i, u64 used_ns, bool more, u64 now);
/* Time passed: take back overdue slices, end idle slots, renew a slice. */
void cgs_tick(struct cgs *s, u64 now);

bool cgs_may_submit(const struct cgs *s, u32 i, u64 now);
/* GPU time instance i reported in the last complete second before now; 0 if none. */
u64 cgs_last_second_used(const struct cgs *s, u32 i, u64 now);

static inline s32 cgs_holder(const struct cgs *s) { return s->holder; }
static inline u64 cgs_deadline(const struct cgs *s) { return s->deadline; }
static inline u64 cgs_gen(const struct cgs *s) { return s->gen; }
static inline u64 cgs_next_tick(const struct cgs *s) { return s->next_tick; }

#endif /* CGS_H */
