// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The compute-slice scheduler of one GPU. docs/scheduler.md states each
 * policy's rule; this file is its one implementation.
 *
 * Accounting is by virtual time. Every entity that takes part in the
 * rotation (an instance, or the "ghost" that stands for the unassigned share
 * of policies 0 and 3) has a lag: the time it was charged, scaled by
 * CGS_WSCALE / weight, minus the GPU's virtual time (the smallest lag among
 * the participants, so the leader always sits at 0). A holder is charged the
 * wall time from its grant to its release, so an overrun past the deadline
 * (its queued work draining) costs it exactly what it took from the others.
 * The next slice goes to the smallest lag; slices have one length whatever
 * the weight, so weights 8:4 and 2:1 produce the same schedule.
 */
#include "cgs.h"

/* Divisible by every weight 1..16: charges there are exact integers. */
#define CGS_WSCALE	720720LL
#define LAG_MAX		((s64)CGS_MAX_CHARGE_NS * CGS_WSCALE * 4)
#define NS_PER_SEC	1000000000ULL

static u64 min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static s64 clamp_lag(s64 v)
{
	if (v > LAG_MAX)
		return LAG_MAX;
	if (v < -LAG_MAX)
		return -LAG_MAX;
	return v;
}

static bool work_conserving(const struct cgs *s)
{
	return s->policy == CGS_PREEMPT || s->policy == CGS_SOFT;
}

/* The weight an instance has in the rotation under this policy; 0: none. */
static u32 eff_weight(const struct cgs *s, const struct cgs_inst *in)
{
	if (!in->joined || in->weight == 0)
		return 0;
	if (s->policy == CGS_FAIR || s->policy == CGS_PREEMPT)
		return 1;
	return in->weight;
}

/*
 * Who the rotation serves: the busy instances when idle time may be given
 * away, every instance otherwise, except an idle high-priority one, which
 * takes no part in scheduling at all.
 */
static bool participates(const struct cgs *s, const struct cgs_inst *in)
{
	if (!eff_weight(s, in))
		return false;
	if (work_conserving(s))
		return in->busy;
	return in->busy || !in->highprio;
}

static u32 ghost_weight(const struct cgs *s)
{
	u32 used = 0, i;

	if (s->policy != CGS_FAIR && s->policy != CGS_FIXED)
		return 0;
	for (i = 0; i < s->ninst; i++)
		if (participates(s, &s->inst[i]))
			used += eff_weight(s, &s->inst[i]);
	return used < s->max_inst ? s->max_inst - used : 0;
}

/*
 * How far behind the GPU's virtual time an instance out of the rotation may
 * fall: under policy 4 a lender comes back one quantum ahead (it gave its
 * time away); elsewhere it comes back level, never ahead.
 */
static s64 lag_floor(const struct cgs *s, const struct cgs_inst *in)
{
	if (s->policy != CGS_SOFT || !in->weight)
		return 0;
	return -(s64)cgs_div_u64(s->quantum_ns * CGS_WSCALE, in->weight);
}

static void add_lag(struct cgs *s, s32 e, u64 ns)
{
	u32 w = e == CGS_GHOST ? ghost_weight(s) : eff_weight(s, &s->inst[e]);
	s64 *lag = e == CGS_GHOST ? &s->ghost_lag : &s->inst[e].lag;

	if (!w)
		return;
	ns = min_u64(ns, CGS_MAX_CHARGE_NS);
	*lag = clamp_lag(*lag + (s64)cgs_div_u64(ns * CGS_WSCALE, w));
}

/* The GPU's virtual time: the smallest lag in the rotation. */
static bool vmin(const struct cgs *s, s64 *m)
{
	bool any = false;
	u32 i;

	for (i = 0; i < s->ninst; i++) {
		if (!participates(s, &s->inst[i]))
			continue;
		if (!any || s->inst[i].lag < *m)
			*m = s->inst[i].lag;
		any = true;
	}
	if (ghost_weight(s) && (!any || s->ghost_lag < *m)) {
		*m = s->ghost_lag;
		any = true;
	}
	return any;
}

/*
 * Moves every lag so the rotation's leader is at 0. Instances out of the
 * rotation fall back with it down to their floor, so idle time is never
 * banked; lags stay bounded and never overflow however long the GPU runs.
 */
static void normalize(struct cgs *s)
{
	s64 m = 0;
	u32 i;

	if (!vmin(s, &m))
		return;
	for (i = 0; i < s->ninst; i++) {
		struct cgs_inst *in = &s->inst[i];
		s64 floor = lag_floor(s, in);

		if (!in->joined)
			continue;
		in->lag = clamp_lag(in->lag - m);
		if (!participates(s, in) && in->lag < floor)
			in->lag = floor;
	}
	s->ghost_lag = ghost_weight(s) ? clamp_lag(s->ghost_lag - m) : 0;
}

static s64 prio_cap(const struct cgs *s)
{
	return (s64)(CGS_PRIO_WINDOW_NS / 100 * s->prio_ratio);
}

static void accrue(struct cgs *s, u64 now)
{
	u64 el = now - s->credit_at;
	s64 cap = prio_cap(s);

	s->credit_at = now;
	if (el >= CGS_PRIO_WINDOW_NS) {
		s->prio_credit = cap;
		return;
	}
	s->prio_credit += (s64)cgs_div_u64(el * s->prio_ratio, 100);
	if (s->prio_credit > cap)
		s->prio_credit = cap;
}

static u64 advance(struct cgs *s, u64 now)
{
	if (now < s->now)
		now = s->now;
	s->now = now;
	accrue(s, now);
	return now;
}

/* Charges the holder for the time since it was last charged. */
static void charge_holder(struct cgs *s, u64 now)
{
	struct cgs_inst *in = &s->inst[s->holder];
	u64 upto = now, ns;

#ifdef CGS_MODEL_ORIGINAL
	/*
	 * Only the benchmark's model of the original builds this (kmod/sched/Makefile):
	 * a slice charged its length, the drain past its deadline free, which gives
	 * SPEC's drift at large batches. cgpu_km charges the GPU time held.
	 */
	if (upto > s->deadline)
		upto = s->deadline > s->charged_to ? s->deadline : s->charged_to;
#endif
	ns = min_u64(upto - s->charged_to, CGS_MAX_CHARGE_NS);

	s->charged_to = now;
	s->held_ns += ns;
	in->charged_ns += ns;
	if (!s->prio_grant) {
		add_lag(s, s->holder, ns);
		return;
	}
	in->prio_ns += ns;
	s->prio_credit -= (s64)ns;
	if (s->prio_credit < -(s64)CGS_MAX_CHARGE_NS)
		s->prio_credit = -(s64)CGS_MAX_CHARGE_NS;
}

static void drop_holder(struct cgs *s, u64 now)
{
	charge_holder(s, now);
	s->holder = CGS_NONE;
	s->gen++;
}

static void end_idle(struct cgs *s, u64 now)
{
	s->idle_slot_ns += now - s->idle_from;
	add_lag(s, s->idle_owner, now - s->idle_from);
	s->idle_owner = CGS_NONE;
}

/* A busy high-priority instance other than `except` that may preempt now. */
static s32 hp_pick(const struct cgs *s, s32 except)
{
	s32 best = CGS_NONE;
	u32 i;

	if (s->prio_credit <= 0)
		return CGS_NONE;
	for (i = 0; i < s->ninst; i++) {
		const struct cgs_inst *in = &s->inst[i];

		if ((s32)i == except || !in->joined || !in->weight ||
		    !in->highprio || !in->busy)
			continue;
		if (best == CGS_NONE || in->last_grant < s->inst[best].last_grant)
			best = (s32)i;
	}
	return best;
}

static bool before(const struct cgs_inst *a, const struct cgs_inst *b)
{
	return a->lag < b->lag ||
	       (a->lag == b->lag && a->last_grant < b->last_grant);
}

/* Whose turn it is: high priority first, then the smallest lag. */
static s32 choose(struct cgs *s, bool *prio)
{
	s32 best = hp_pick(s, CGS_NONE);
	u32 i;

	*prio = best != CGS_NONE;
	if (*prio)
		return best;
	normalize(s);
	for (i = 0; i < s->ninst; i++)
		if (participates(s, &s->inst[i]) &&
		    (best == CGS_NONE || before(&s->inst[i], &s->inst[best])))
			best = (s32)i;
	if (ghost_weight(s) && (best == CGS_NONE || s->ghost_lag < s->inst[best].lag))
		best = CGS_GHOST;
	return best;
}

static void grant(struct cgs *s, s32 i, bool prio, u64 now)
{
	struct cgs_inst *in = &s->inst[i];

	s->holder = i;
	s->prio_grant = prio;
	s->charged_to = now;
	s->held_ns = 0;
	s->deadline = now + s->quantum_ns;
	if (i != s->last_holder)
		s->switches++;
	s->last_holder = i;
	in->grants++;
	in->last_grant = ++s->gen;
}

static bool anyone_waits(const struct cgs *s)
{
	u32 i;

	for (i = 0; i < s->ninst; i++)
		if (s->inst[i].busy && participates(s, &s->inst[i]))
			return true;
	return false;
}

/* The GPU is free: grant it, or leave it idle for an idle entity's slot. */
static void pick_next(struct cgs *s, u64 now)
{
	bool prio;
	s32 e = choose(s, &prio);

	if (e >= 0 && s->inst[e].busy) {
		grant(s, e, prio, now);
	} else if (e != CGS_NONE && anyone_waits(s)) {
		s->idle_owner = e;
		s->idle_from = now;
		s->idle_until = now + s->quantum_ns;
	}
}

/*
 * A holder is told to stop at once when high priority waits; at the end of
 * its slice it keeps the GPU, without draining, if it would be chosen again.
 */
static void check_holder(struct cgs *s, u64 now)
{
	bool prio;

	if (!s->prio_grant && hp_pick(s, s->holder) != CGS_NONE) {
		if (s->deadline > now) {
			s->deadline = now;
			s->gen++;
		}
		return;
	}
	if (now < s->deadline)
		return;
	charge_holder(s, now);
	if (choose(s, &prio) != s->holder)
		return;
	s->prio_grant = prio;
	s->deadline = now + s->quantum_ns;
	s->inst[s->holder].last_grant = ++s->gen;
}

static void set_next_tick(struct cgs *s, u64 now)
{
	u64 t = CGS_NEVER;
	u32 i;

	if (s->holder >= 0)
		t = now < s->deadline ? s->deadline : s->deadline + s->grace_ns;
	else if (s->idle_owner != CGS_NONE)
		t = s->idle_until;
	/* Wake when the credit of a waiting high-priority instance is back. */
	if (t != CGS_NEVER && !(s->holder >= 0 && s->prio_grant) &&
	    s->prio_credit <= 0) {
		for (i = 0; i < s->ninst; i++) {
			const struct cgs_inst *in = &s->inst[i];

			if ((s32)i != s->holder && in->joined && in->weight &&
			    in->highprio && in->busy) {
				u64 need = (u64)(1 - s->prio_credit) * 100;

				t = min_u64(t, now + cgs_div_u64(need + s->prio_ratio - 1,
								 s->prio_ratio));
				break;
			}
		}
	}
	s->next_tick = t;
}

/* An idle slot ends when due, when its owner has work, or for high priority. */
static void check_idle_slot(struct cgs *s, u64 now)
{
	s32 o = s->idle_owner;
	bool back = o >= 0 && s->inst[o].busy && participates(s, &s->inst[o]);
	bool hp = hp_pick(s, CGS_NONE) != CGS_NONE;

	if (now < s->idle_until && !back && !hp)
		return;
	end_idle(s, now);
	if (back && !hp)
		grant(s, o, false, now);
	else
		pick_next(s, now);
}

static void decide(struct cgs *s, u64 now)
{
	if (s->policy == CGS_NATIVE) {
		s->next_tick = CGS_NEVER;
		return;
	}
	if (s->holder >= 0) {
		check_holder(s, now);
		if (now < s->deadline + s->grace_ns) {
			set_next_tick(s, now);
			return;
		}
		s->inst[s->holder].takebacks++;
		s->inst[s->holder].busy = 0;
		drop_holder(s, now);
	}
	if (s->idle_owner != CGS_NONE)
		check_idle_slot(s, now);
	else
		pick_next(s, now);
	set_next_tick(s, now);
}

void cgs_init(struct cgs *s, struct cgs_inst *slots, u32 nslots, u64 now)
{
	u32 i;

	*s = (struct cgs){
		.inst = slots,
		.ninst = nslots,
		.policy = CGPU_POLICY_DEFAULT,
		.max_inst = CGPU_MAX_INST_DEFAULT,
		.prio_ratio = CGPU_PRIO_RATIO_DEFAULT,
		.quantum_ns = CGS_DEF_QUANTUM_NS,
		.grace_ns = CGS_DEF_GRACE_NS,
		.now = now,
		.holder = CGS_NONE,
		.last_holder = CGS_NONE,
		.idle_owner = CGS_NONE,
		.credit_at = now,
		.next_tick = CGS_NEVER,
	};
	s->prio_credit = prio_cap(s);
	for (i = 0; i < nslots; i++)
		slots[i] = (struct cgs_inst){ 0 };
}

int cgs_set_timing(struct cgs *s, u64 quantum_ns, u64 grace_ns, u64 now)
{
	if (quantum_ns < CGS_MIN_QUANTUM_NS || quantum_ns > CGS_MAX_QUANTUM_NS ||
	    grace_ns < CGS_MIN_GRACE_NS || grace_ns > CGS_MAX_GRACE_NS)
		return CGS_EINVAL;
	now = advance(s, now);
	s->quantum_ns = quantum_ns;
	s->grace_ns = grace_ns;
	decide(s, now);
	return 0;
}

static struct cgs_inst *joined(struct cgs *s, u32 i)
{
	return i < s->ninst && s->inst[i].joined ? &s->inst[i] : 0;
}

int cgs_join(struct cgs *s, u32 i, u32 weight, bool highprio, u64 now)
{
	struct cgs_inst *in;
	s64 v = 0;

	if (i >= s->ninst || weight > CGPU_MAX_INST_MAX)
		return CGS_EINVAL;
	in = &s->inst[i];
	if (in->joined)
		return CGS_EEXIST;
	now = advance(s, now);
	vmin(s, &v);
	*in = (struct cgs_inst){
		.lag = v, .weight = weight, .joined = 1, .highprio = highprio,
		.joined_at = now,
	};
	decide(s, now);
	return 0;
}

int cgs_leave(struct cgs *s, u32 i, u64 now)
{
	struct cgs_inst *in = joined(s, i);

	if (!in)
		return CGS_ENOENT;
	now = advance(s, now);
	if (s->holder == (s32)i)
		drop_holder(s, now);
	if (s->idle_owner == (s32)i)
		end_idle(s, now);
	if (s->last_holder == (s32)i)
		s->last_holder = CGS_NONE;
	*in = (struct cgs_inst){ 0 };
	decide(s, now);
	return 0;
}

/*
 * A new policy starts from a clean rotation: lags earned under another rule
 * mean nothing under this one. Entering or leaving policy 5 also drops the
 * holder and the busy marks: under 5 nobody waits, so nobody is known busy.
 */
int cgs_set_policy(struct cgs *s, u32 policy, u64 now)
{
	bool native_edge;
	u32 i;

	if (policy >= CGS_NPOLICIES)
		return CGS_EINVAL;
	now = advance(s, now);
	if (policy == s->policy) {
		decide(s, now);
		return 0;
	}
	native_edge = policy == CGS_NATIVE || s->policy == CGS_NATIVE;
	if (s->holder >= 0) {
		if (native_edge)
			drop_holder(s, now);
		else
			charge_holder(s, now);
	}
	if (s->idle_owner != CGS_NONE) {
		s->idle_slot_ns += now - s->idle_from;
		s->idle_owner = CGS_NONE;
	}
	for (i = 0; i < s->ninst; i++) {
		s->inst[i].lag = 0;
		if (native_edge)
			s->inst[i].busy = 0;
	}
	s->ghost_lag = 0;
	s->policy = policy;
	s->gen++;
	decide(s, now);
	return 0;
}

int cgs_set_max_inst(struct cgs *s, u32 max_inst, u64 now)
{
	if (max_inst < CGPU_MAX_INST_MIN || max_inst > CGPU_MAX_INST_MAX)
		return CGS_EINVAL;
	now = advance(s, now);
	s->max_inst = max_inst;
	decide(s, now);
	return 0;
}

int cgs_set_prio_ratio(struct cgs *s, u32 ratio, u64 now)
{
	if (ratio < CGPU_PRIO_RATIO_MIN || ratio > CGPU_PRIO_RATIO_MAX)
		return CGS_EINVAL;
	now = advance(s, now);
	s->prio_ratio = ratio;
	if (s->prio_credit > prio_cap(s))
		s->prio_credit = prio_cap(s);
	decide(s, now);
	return 0;
}

int cgs_set_weight(struct cgs *s, u32 i, u32 weight, u64 now)
{
	struct cgs_inst *in = joined(s, i);

	if (!in)
		return CGS_ENOENT;
	if (weight > CGPU_MAX_INST_MAX)
		return CGS_EINVAL;
	now = advance(s, now);
	if (s->holder == (s32)i) {
		/* What it held so far is charged at the weight it held it with. */
		charge_holder(s, now);
		if (!weight && s->deadline > now) {
			s->deadline = now;
			s->gen++;
		}
	}
	in->weight = weight;
	decide(s, now);
	return 0;
}

int cgs_set_highprio(struct cgs *s, u32 i, bool highprio, u64 now)
{
	struct cgs_inst *in = joined(s, i);

	if (!in)
		return CGS_ENOENT;
	now = advance(s, now);
	in->highprio = highprio;
	decide(s, now);
	return 0;
}

int cgs_pending(struct cgs *s, u32 i, u64 now)
{
	struct cgs_inst *in = joined(s, i);

	if (!in)
		return CGS_ENOENT;
	now = advance(s, now);
	in->busy = 1;
	decide(s, now);
	return 0;
}

int cgs_idle(struct cgs *s, u32 i, u64 now)
{
	struct cgs_inst *in = joined(s, i);

	if (!in)
		return CGS_ENOENT;
	if (s->holder == (s32)i)
		return cgs_release(s, i, 0, false, now);
	now = advance(s, now);
	in->busy = 0;
	decide(s, now);
	return 0;
}

/*
 * Only the second of the report is known, not when within the slice the GPU
 * worked, so the whole slice counts there: a second may show up to a slice's
 * length and drain more than 1e9, and the one before it that much less.
 */
static void count_second(struct cgs_inst *in, u64 used_ns, u64 now)
{
	u64 sec = cgs_div_u64(now, NS_PER_SEC);

	if (sec != in->sec) {
		in->prev_used = sec == in->sec + 1 ? in->sec_used : 0;
		in->sec = sec;
		in->sec_used = 0;
	}
	in->sec_used += used_ns;
}

int cgs_release(struct cgs *s, u32 i, u64 used_ns, bool more, u64 now)
{
	struct cgs_inst *in = joined(s, i);

	if (!in || s->holder != (s32)i)
		return CGS_EPERM;
	now = advance(s, now);
	charge_holder(s, now);
	used_ns = min_u64(used_ns, s->held_ns);
	in->used_ns += used_ns;
	count_second(in, used_ns, now);
	in->busy = more;
	drop_holder(s, now);
	decide(s, now);
	return 0;
}

void cgs_tick(struct cgs *s, u64 now)
{
	decide(s, advance(s, now));
}

u64 cgs_last_second_used(const struct cgs *s, u32 i, u64 now)
{
	const struct cgs_inst *in;
	u64 sec;

	if (i >= s->ninst || !s->inst[i].joined)
		return 0;
	in = &s->inst[i];
	/* Time never runs back (advance()), here without moving s->now. */
	sec = cgs_div_u64(now < s->now ? s->now : now, NS_PER_SEC);
	if (sec == in->sec)
		return in->prev_used;
	return sec == in->sec + 1 ? in->sec_used : 0;
}

bool cgs_may_submit(const struct cgs *s, u32 i, u64 now)
{
	if (i >= s->ninst || !s->inst[i].joined || !s->inst[i].weight)
		return false;
	if (s->policy == CGS_NATIVE)
		return true;
	return s->holder == (s32)i && now < s->deadline;
}
