/*
 * The scheduler's events one at a time: argument checks, arrivals and
 * departures, runtime changes, a silent holder, high priority, the clock.
 */
#include "check.h"
#include "drv.h"

#define Q	CGS_DEF_QUANTUM_NS
#define GRACE	CGS_DEF_GRACE_NS

static struct cgs s;
static struct cgs_inst slot[4];

static void fresh(u32 policy)
{
	cgs_init(&s, slot, 4, 1000);
	cgs_set_policy(&s, policy, 1000);
}

/* Instances 0 and 1 (weight w1) both waiting since 1000: 0 holds. */
static void two_waiting(u32 policy, u32 w1)
{
	fresh(policy);
	cgs_join(&s, 0, 1, false, 1000);
	cgs_join(&s, 1, w1, false, 1000);
	cgs_pending(&s, 0, 1000);
	cgs_pending(&s, 1, 1000);
}

static void defaults(void)
{
	fresh(CGPU_POLICY_DEFAULT);
	CHECK(s.policy == CGS_PREEMPT && s.max_inst == 16 && s.prio_ratio == 30);
	CHECK(cgs_holder(&s) == CGS_NONE);
	CHECK(cgs_next_tick(&s) == CGS_NEVER);
}

/* Every refused call returns its error and changes nothing. */
static void refusals(void)
{
	u64 gen;

	fresh(CGS_PREEMPT);
	CHECK(cgs_join(&s, 0, 1, false, 1000) == 0);
	gen = cgs_gen(&s);
	CHECK(cgs_join(&s, 4, 1, false, 1000) == CGS_EINVAL);
	CHECK(cgs_join(&s, 1, CGPU_MAX_INST_MAX + 1, false, 1000) == CGS_EINVAL);
	CHECK(cgs_join(&s, 0, 1, false, 1000) == CGS_EEXIST);
	CHECK(cgs_leave(&s, 1, 1000) == CGS_ENOENT);
	CHECK(cgs_pending(&s, 3, 1000) == CGS_ENOENT);
	CHECK(cgs_set_weight(&s, 2, 1, 1000) == CGS_ENOENT);
	CHECK(cgs_set_weight(&s, 0, CGPU_MAX_INST_MAX + 1, 1000) == CGS_EINVAL);
	CHECK(cgs_set_highprio(&s, 2, true, 1000) == CGS_ENOENT);
	CHECK(cgs_set_policy(&s, CGS_NPOLICIES, 1000) == CGS_EINVAL);
	CHECK(cgs_set_max_inst(&s, 0, 1000) == CGS_EINVAL);
	CHECK(cgs_set_max_inst(&s, CGPU_MAX_INST_MAX + 1, 1000) == CGS_EINVAL);
	CHECK(cgs_set_prio_ratio(&s, CGPU_PRIO_RATIO_MIN - 1, 1000) == CGS_EINVAL);
	CHECK(cgs_set_prio_ratio(&s, CGPU_PRIO_RATIO_MAX + 1, 1000) == CGS_EINVAL);
	CHECK(cgs_set_timing(&s, CGS_MIN_QUANTUM_NS - 1, GRACE, 1000) == CGS_EINVAL);
	CHECK(cgs_set_timing(&s, Q, CGS_MAX_GRACE_NS + 1, 1000) == CGS_EINVAL);
	CHECK(cgs_release(&s, 0, 0, false, 1000) == CGS_EPERM);
	CHECK(cgs_gen(&s) == gen);
	CHECK(s.policy == CGS_PREEMPT && s.max_inst == 16 && s.prio_ratio == 30);
	CHECK(slot[0].weight == 1 && !slot[0].busy);
}

/* A pending instance on a free GPU holds it at once, for one quantum. */
static void grant_and_release(void)
{
	fresh(CGS_PREEMPT);
	cgs_join(&s, 0, 1, false, 1000);
	cgs_join(&s, 1, 1, false, 1000);
	CHECK(!cgs_may_submit(&s, 0, 1000));
	cgs_pending(&s, 0, 2000);
	CHECK(cgs_holder(&s) == 0 && cgs_deadline(&s) == 2000 + Q);
	CHECK(cgs_may_submit(&s, 0, 2000) && !cgs_may_submit(&s, 0, 2000 + Q));
	CHECK(!cgs_may_submit(&s, 1, 2000));
	CHECK(cgs_next_tick(&s) == 2000 + Q);
	cgs_pending(&s, 1, 3000);
	CHECK(cgs_holder(&s) == 0);
	/* released early with nothing left: the waiter gets it at that instant */
	CHECK(cgs_release(&s, 0, 500, false, 5000) == 0);
	CHECK(cgs_holder(&s) == 1 && cgs_deadline(&s) == 5000 + Q);
	CHECK(slot[0].charged_ns == 3000 && slot[0].used_ns == 500);
	/* used can never exceed the time held */
	CHECK(cgs_release(&s, 1, 10 * Q, false, 6000) == 0);
	CHECK(slot[1].used_ns == 1000);
	CHECK(cgs_holder(&s) == CGS_NONE && cgs_next_tick(&s) == CGS_NEVER);
}

/* A waiter that leaves (killed while waiting) is no longer waited for. */
static void waiter_leaves(void)
{
	two_waiting(CGS_PREEMPT, 1);
	CHECK(cgs_idle(&s, 1, 2000) == 0 && !slot[1].busy);
	cgs_tick(&s, 1000 + Q);
	CHECK(cgs_holder(&s) == 0 && cgs_deadline(&s) == 1000 + 2 * Q);
	/* the holder's last process gone: the GPU is free at once */
	CHECK(cgs_idle(&s, 0, 3000 + Q) == 0);
	CHECK(cgs_holder(&s) == CGS_NONE && slot[0].charged_ns == 2000 + Q);
	CHECK(cgs_idle(&s, 3, 4000 + Q) == CGS_ENOENT);
}

/* Alone and still busy at the deadline: the slice is renewed in place. */
static void renewal(void)
{
	u64 gen;

	fresh(CGS_PREEMPT);
	cgs_join(&s, 0, 1, false, 1000);
	cgs_pending(&s, 0, 1000);
	gen = cgs_gen(&s);
	cgs_tick(&s, 1000 + Q);
	CHECK(cgs_holder(&s) == 0 && cgs_deadline(&s) == 1000 + 2 * Q);
	CHECK(cgs_gen(&s) != gen && s.switches == 1);
	/* with another one waiting it is not */
	cgs_join(&s, 1, 1, false, 1000 + Q);
	cgs_pending(&s, 1, 1000 + Q);
	cgs_tick(&s, 1000 + 2 * Q);
	CHECK(cgs_holder(&s) == 0 && cgs_deadline(&s) == 1000 + 2 * Q);
	CHECK(!cgs_may_submit(&s, 0, 1000 + 2 * Q));
	CHECK(cgs_next_tick(&s) == 1000 + 2 * Q + GRACE);
}

/* The holder leaving frees the GPU at that instant; its slot can be reused. */
static void holder_leaves(void)
{
	two_waiting(CGS_WEIGHT, 2);
	CHECK(cgs_holder(&s) == 0);
	CHECK(cgs_leave(&s, 0, 2000) == 0);
	CHECK(cgs_holder(&s) == 1 && cgs_deadline(&s) == 2000 + Q);
	CHECK(cgs_release(&s, 0, 0, true, 2000) == CGS_EPERM);
	CHECK(cgs_join(&s, 0, 3, false, 3000) == 0 && slot[0].charged_ns == 0);
	CHECK(cgs_leave(&s, 1, 4000) == 0);
	CHECK(cgs_holder(&s) == CGS_NONE);
}

/* An idle instance's slot under policy 2: the GPU idles, the owner can take it. */
static void idle_slot(void)
{
	fresh(CGS_WEIGHT);
	cgs_join(&s, 0, 1, false, 1000);
	cgs_join(&s, 1, 1, false, 1000);
	cgs_pending(&s, 0, 1000);
	cgs_release(&s, 0, Q, true, 1000 + Q);
	CHECK(cgs_holder(&s) == CGS_NONE && s.idle_owner == 1);
	CHECK(cgs_next_tick(&s) == 1000 + 2 * Q);
	/* the slot's owner wakes up inside it: it gets the GPU now */
	cgs_pending(&s, 1, 2000 + Q);
	CHECK(cgs_holder(&s) == 1 && cgs_deadline(&s) == 2000 + 2 * Q);
	/* the idle owner leaving ends its slot */
	cgs_release(&s, 1, 0, false, 3000 + Q);
	CHECK(cgs_holder(&s) == CGS_NONE && s.idle_owner == 1);
	cgs_leave(&s, 1, 4000 + Q);
	CHECK(cgs_holder(&s) == 0 && s.idle_owner == CGS_NONE);
}

/* A holder that never reports is taken back after the grace period. */
static void silent_holder(void)
{
	u64 dl;

	two_waiting(CGS_PREEMPT, 1);
	dl = cgs_deadline(&s);
	cgs_tick(&s, dl);
	CHECK(cgs_holder(&s) == 0 && cgs_next_tick(&s) == dl + GRACE);
	cgs_tick(&s, dl + GRACE - 1);
	CHECK(cgs_holder(&s) == 0);
	cgs_tick(&s, dl + GRACE);
	CHECK(cgs_holder(&s) == 1 && slot[0].takebacks == 1);
	CHECK(slot[0].charged_ns == Q + GRACE && !slot[0].busy);
	/* its late report changes nothing */
	CHECK(cgs_release(&s, 0, Q, true, dl + GRACE + 5) == CGS_EPERM);
	CHECK(cgs_holder(&s) == 1);
}

/* Runtime policy changes: 1 -> 2 keeps the slice; 5 opens the gate to all. */
static void policy_switch(void)
{
	two_waiting(CGS_PREEMPT, 1);
	CHECK(cgs_set_policy(&s, CGS_WEIGHT, 2000) == 0);
	CHECK(cgs_holder(&s) == 0 && cgs_deadline(&s) == 1000 + Q);
	CHECK(cgs_set_policy(&s, CGS_NATIVE, 3000) == 0);
	CHECK(cgs_holder(&s) == CGS_NONE);
	CHECK(cgs_may_submit(&s, 0, 3000) && cgs_may_submit(&s, 1, 3000));
	CHECK(cgs_release(&s, 0, 0, true, 3000) == CGS_EPERM);
	CHECK(cgs_set_policy(&s, CGS_PREEMPT, 4000) == 0);
	CHECK(!cgs_may_submit(&s, 0, 4000) && !cgs_may_submit(&s, 1, 4000));
	CHECK(cgs_holder(&s) == CGS_NONE);
	cgs_pending(&s, 1, 5000);
	CHECK(cgs_holder(&s) == 1);
}

/* Weight 0 on the holder ends its slice now; max_inst moves policy 0's cap. */
static void weight_and_max_inst(void)
{
	struct drv d;

	fresh(CGS_PREEMPT);
	cgs_join(&s, 0, 1, false, 1000);
	cgs_pending(&s, 0, 1000);
	cgs_set_weight(&s, 0, 0, 2000);
	CHECK(cgs_deadline(&s) == 2000 && !cgs_may_submit(&s, 0, 2000));
	cgs_release(&s, 0, 0, true, 2500);
	CHECK(cgs_holder(&s) == CGS_NONE);
	cgs_set_weight(&s, 0, 2, 3000);
	CHECK(cgs_holder(&s) == 0);

	drv_init(&d, CGS_FAIR);
	cgs_set_max_inst(&d.s, 4, 0);
	drv_join(&d, 0, 1, false);
	drv_busy(&d, 0, true);
	drv_run(&d, 1000 * MS);
	cgs_set_max_inst(&d.s, 2, d.now);
	drv_window(&d, 4000 * MS);
	CHECK_NEAR(drv_share(&d, 0), 0.5, 0.01);

	/* a weight change takes effect on the shares that follow */
	drv_pair(&d, CGS_WEIGHT, 0, 1, 1);
	drv_run(&d, 1000 * MS);
	cgs_set_weight(&d.s, 1, 3, d.now);
	drv_window(&d, 4000 * MS);
	CHECK_NEAR(drv_share(&d, 1), 0.75, 0.01);
}

/* High priority with work: the holder is cut short, it goes next. */
static void highprio_preempts(void)
{
	fresh(CGS_PREEMPT);
	cgs_join(&s, 0, 1, false, 1000);
	cgs_join(&s, 1, 1, true, 1000);
	cgs_pending(&s, 0, 1000);
	cgs_pending(&s, 1, 2000);
	CHECK(cgs_holder(&s) == 0 && cgs_deadline(&s) == 2000);
	cgs_release(&s, 0, 1000, true, 2300);
	CHECK(cgs_holder(&s) == 1 && s.prio_grant);
	/* one high-priority holder is not cut by another one */
	cgs_join(&s, 2, 1, true, 2400);
	cgs_pending(&s, 2, 2400);
	CHECK(cgs_deadline(&s) == 2300 + Q);
	cgs_release(&s, 1, Q, false, 2300 + Q);
	CHECK(cgs_holder(&s) == 2 && slot[1].prio_ns == Q);
}

/* High priority without work takes no part: under policy 2 its slices go to others. */
static void highprio_idle(void)
{
	struct drv d;

	drv_init(&d, CGS_WEIGHT);
	drv_join(&d, 0, 1, false);
	drv_join(&d, 1, 2, true);
	drv_busy(&d, 0, true);
	drv_window(&d, 4000 * MS);
	CHECK_NEAR(drv_share(&d, 0), 1.0, 0.01);
	CHECK(d.slot[1].grants == 0);
}

/* A busy high-priority instance takes prio_ratio of any window as priority. */
static void highprio_bound(void)
{
	struct drv d;
	u64 before;

	drv_pair(&d, CGS_PREEMPT, 0, 1, 1);
	cgs_set_prio_ratio(&d.s, 20, 0);
	cgs_set_highprio(&d.s, 1, true, 0);
	drv_run(&d, 1000 * MS);
	before = d.slot[1].prio_ns;
	drv_measure(&d);
	drv_run(&d, CGS_PRIO_WINDOW_NS);
	CHECK(d.slot[1].prio_ns - before <= CGS_PRIO_WINDOW_NS / 5 + Q);
	drv_run(&d, 4000 * MS);
	CHECK_NEAR((double)(d.slot[1].prio_ns - before) / (double)(d.now - d.from), 0.2, 0.02);
	/* beyond its priority it still has its ordinary half of the rest */
	CHECK_NEAR(drv_share(&d, 1), 0.2 + 0.8 / 2, 0.02);
}

/* Time never runs back: an older `now` is read as the latest one seen. */
static void clock_backwards(void)
{
	fresh(CGS_PREEMPT);
	cgs_join(&s, 0, 1, false, 1000);
	cgs_pending(&s, 0, 5000);
	CHECK(cgs_deadline(&s) == 5000 + Q);
	cgs_release(&s, 0, 0, true, 100);
	CHECK(slot[0].charged_ns == 0 && cgs_holder(&s) == 0);
	CHECK(cgs_deadline(&s) == 5000 + Q);
}

/* An hour of overrun is charged, capped, and the shares recover afterwards. */
static void huge_overrun(void)
{
	struct drv d;

	drv_pair(&d, CGS_WEIGHT, 3600000 * MS, 1, 1);
	drv_run(&d, Q);
	d.overrun = 0;
	CHECK(cgs_holder(&d.s) == 1);
	/* the slice to its deadline, then the overrun capped as one charge */
	CHECK(d.slot[0].charged_ns == Q + CGS_MAX_CHARGE_NS);
	CHECK(d.slot[0].lag > 0 && d.slot[1].lag == 0);
	drv_run(&d, 2 * CGS_MAX_CHARGE_NS);
	drv_window(&d, 4000 * MS);
	CHECK_NEAR(drv_share(&d, 0), 0.5, 0.02);
}

#define SEC	1000000000ULL

/* One slice of instance 0 from t, used u ns, released at t + d with nothing left. */
static void slice_at(u64 t, u64 d, u64 u)
{
	cgs_pending(&s, 0, t);
	CHECK(cgs_holder(&s) == 0);
	CHECK(cgs_release(&s, 0, u, false, t + d) == 0);
}

/*
 * The last complete second's use: the same figure however often it is asked, a
 * slice counted in the second it ends in, 0 after a silent second, and the
 * figure of an instance's own slot only.
 */
static void last_second(void)
{
	fresh(CGS_PREEMPT);
	cgs_join(&s, 0, 1, false, 1000);
	cgs_join(&s, 1, 1, false, 1000);
	CHECK(slot[0].joined_at == 1000);
	CHECK(cgs_last_second_used(&s, 0, 1000) == 0);
	slice_at(SEC + 1000, Q, 3000000);
	slice_at(SEC + 2 * Q, Q, 1000000);
	/* asked within second 1: second 0 had nothing */
	CHECK(cgs_last_second_used(&s, 0, SEC + 3 * Q) == 0);
	CHECK(cgs_last_second_used(&s, 0, 2 * SEC) == 4000000);
	CHECK(cgs_last_second_used(&s, 0, 2 * SEC + SEC / 2) == 4000000);
	CHECK(cgs_last_second_used(&s, 0, 2 * SEC + SEC / 2) == 4000000);
	CHECK(cgs_last_second_used(&s, 1, 2 * SEC) == 0);
	/* from second 2 on it is second 1's, unless asked in second 3 */
	CHECK(cgs_last_second_used(&s, 0, 3 * SEC) == 0);
	/* a slice from second 2 into 3 counts in 3, whole */
	slice_at(3 * SEC - Q / 2, Q, Q);
	CHECK(cgs_last_second_used(&s, 0, 3 * SEC + Q) == 0);
	CHECK(cgs_last_second_used(&s, 0, 4 * SEC) == Q);
	/* used is capped at the time held, as used_ns is */
	slice_at(4 * SEC + 10, Q, 10 * Q);
	CHECK(cgs_last_second_used(&s, 0, 5 * SEC) == Q);
	/* second 4 came right after 3: 3 moves to prev, then a gap of a second */
	slice_at(6 * SEC, Q, 2000);
	CHECK(cgs_last_second_used(&s, 0, 6 * SEC + Q) == 0);
	CHECK(cgs_last_second_used(&s, 0, 7 * SEC) == 2000);
	/* a clock read behind the scheduler's latest time counts as that time */
	CHECK(cgs_last_second_used(&s, 0, 1000) == 0);
	CHECK(slot[0].used_ns == 3000000 + 1000000 + 2 * Q + 2000);
	/* a slot that left answers 0, and so does one out of range */
	cgs_leave(&s, 0, 7 * SEC);
	CHECK(cgs_last_second_used(&s, 0, 7 * SEC) == 0);
	CHECK(cgs_last_second_used(&s, 4, 7 * SEC) == 0);
}

void tests_events(void)
{
	defaults();
	refusals();
	grant_and_release();
	waiter_leaves();
	renewal();
	holder_leaves();
	idle_slot();
	silent_holder();
	policy_switch();
	weight_and_max_inst();
	highprio_preempts();
	highprio_idle();
	highprio_bound();
	clock_backwards();
	huge_overrun();
	last_second();
}
