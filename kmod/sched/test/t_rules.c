/*
 * Each policy's rule, measured with ideal processes: the shares every
 * policy promises, with and without the drain past a deadline.
 */
#include "check.h"
#include "drv.h"

#define RUN_NS	(10000 * MS)
#define TOL	0.01

/* Policy 0: 1/max_inst each, busy or not; nobody gets an empty slot. */
static void fair_share(void)
{
	struct drv d;

	drv_pair(&d, CGS_FAIR, 0, 1, 3);
	cgs_set_max_inst(&d.s, 4, 0);
	drv_busy(&d, 1, false);
	drv_window(&d, RUN_NS);
	CHECK_NEAR(drv_share(&d, 0), 0.25, TOL);
	CHECK(drv_share(&d, 1) == 0);

	drv_busy(&d, 1, true);
	drv_window(&d, RUN_NS);
	/* weights do not count under policy 0 */
	CHECK_NEAR(drv_share(&d, 0), 0.25, TOL);
	CHECK_NEAR(drv_share(&d, 1), 0.25, TOL);
}

/* Policy 1: idle skipped, N busy share 1/N, a lone one gets it all. */
static void preemptive(void)
{
	struct drv d;

	drv_pair(&d, CGS_PREEMPT, MS, 1, 5);
	drv_join(&d, 2, 1, false);
	drv_window(&d, RUN_NS);
	CHECK_NEAR(drv_share(&d, 0), 0.5, TOL);
	CHECK_NEAR(drv_share(&d, 1), 0.5, TOL);
	CHECK(drv_share(&d, 2) == 0);

	drv_busy(&d, 1, false);
	drv_window(&d, RUN_NS);
	CHECK_NEAR(drv_share(&d, 0), 1.0, TOL);
}

/*
 * Policies 2 and 4 with both busy: weight shares, exact despite a drain of
 * 3/4 of the quantum past every deadline. With one idle, policy 2 leaves
 * its slices idle and policy 4 lends them.
 */
static void weighted(void)
{
	static const u32 policies[] = { CGS_WEIGHT, CGS_SOFT };
	static const double lone[] = { 1.0 / 3, 1.0 };
	int k;

	for (k = 0; k < 2; k++) {
		struct drv d;

		drv_pair(&d, policies[k], 3 * MS, 1, 2);
		drv_window(&d, RUN_NS);
		CHECK_NEAR(drv_share(&d, 0), 1.0 / 3, TOL);
		CHECK_NEAR(drv_share(&d, 1), 2.0 / 3, TOL);

		drv_busy(&d, 1, false);
		drv_window(&d, RUN_NS);
		CHECK_NEAR(drv_share(&d, 0), lone[k], TOL);
	}
}

/* Policy 3: weight/max_inst, a hard cap even on an otherwise idle GPU. */
static void fixed(void)
{
	struct drv d;

	drv_pair(&d, CGS_FIXED, MS, 2, 4);
	cgs_set_max_inst(&d.s, 8, 0);
	drv_window(&d, RUN_NS);
	CHECK_NEAR(drv_share(&d, 0), 0.25, TOL);
	CHECK_NEAR(drv_share(&d, 1), 0.5, TOL);

	drv_busy(&d, 1, false);
	drv_window(&d, RUN_NS);
	CHECK_NEAR(drv_share(&d, 0), 0.25, TOL);
}

/*
 * The lender comes back first: under policy 4 an instance returning from
 * idle gets the GPU at the next switch point, ahead of the ones that borrowed.
 */
static void soft_lender_first(void)
{
	struct drv d;

	drv_pair(&d, CGS_SOFT, 0, 1, 1);
	drv_join(&d, 2, 1, false);
	drv_run(&d, 1000 * MS + MS);
	drv_measure(&d);
	drv_busy(&d, 2, true);
	drv_run(&d, CGS_DEF_QUANTUM_NS);
	CHECK(d.nseq >= 1 && d.seq[0] == 2);
}

/* Policy 5: no slicing: everyone with a weight submits, nobody holds. */
static void native(void)
{
	struct drv d;

	drv_init(&d, CGS_NATIVE);
	drv_join(&d, 0, 1, false);
	drv_join(&d, 1, 0, false);
	drv_busy(&d, 0, true);
	CHECK(cgs_holder(&d.s) == CGS_NONE);
	CHECK(cgs_may_submit(&d.s, 0, d.now));
	CHECK(!cgs_may_submit(&d.s, 1, d.now));
	CHECK(cgs_next_tick(&d.s) == CGS_NEVER);
}

/* Weight 0: no compute under any policy, busy or not. */
static void weight_zero(void)
{
	u32 p;

	for (p = 0; p < CGS_NPOLICIES; p++) {
		struct drv d;

		drv_pair(&d, p, 0, 0, 1);
		drv_window(&d, 100 * MS);
		CHECK(drv_share(&d, 0) == 0);
		CHECK(!cgs_may_submit(&d.s, 0, d.now));
	}
}

/* Weights 8:4 give exactly the schedule of 2:1: same holders, same order. */
static void common_divisor(void)
{
	static const u32 policies[] = { CGS_WEIGHT, CGS_SOFT };
	u32 k;

	for (k = 0; k < 2; k++) {
		struct drv a, b;
		int i, same = 1;

		drv_pair(&a, policies[k], 700000, 2, 1);
		drv_pair(&b, policies[k], 700000, 8, 4);
		drv_run(&a, 1000 * MS);
		drv_run(&b, 1000 * MS);
		CHECK(a.nseq == b.nseq && a.nseq > 100);
		for (i = 0; i < a.nseq && i < b.nseq; i++)
			same &= a.seq[i] == b.seq[i];
		CHECK(same);
		CHECK(a.s.switches == b.s.switches);
	}
}

void tests_rules(void)
{
	fair_share();
	preemptive();
	weighted();
	fixed();
	soft_lender_first();
	native();
	weight_zero();
	common_divisor();
}
