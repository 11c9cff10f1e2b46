/*
 * The scheduler behind the model of libcgpu, on the simulated GPU: what the
 * containers' kernels actually got, measured on the device.
 */
#include <stdlib.h>

#include "check.h"
#include "../sim/sim.h"

#define MS	1000000ULL
#define Q	CGS_DEF_QUANTUM_NS

static struct sim *new_sim(uint32_t policy)
{
	struct sim *w = calloc(1, sizeof(*w));

	if (!w)
		abort();
	sim_init(w, true, policy);
	return w;
}

static void done(struct sim *w)
{
	sim_free(w);
	free(w);
}

/* Runs settle_ns, then measures a window of len_ns between a and b. */
static void window(struct sim *w, uint64_t settle_ns, uint64_t len_ns, struct sim_snap *a,
		   struct sim_snap *b)
{
	sim_run(w, w->now + settle_ns);
	sim_snap(w, a);
	sim_run(w, w->now + len_ns);
	sim_snap(w, b);
}

static double share(const struct sim_snap *a, const struct sim_snap *b, int i)
{
	return (double)sim_share_ppm(a, b, i) / 1e6;
}

/* SPEC's worst case: 1:2 at batch 128 holds 2.0 where the original gives 1.77. */
static void ratio_at_batch_128(void)
{
	struct sim *w = new_sim(CGS_WEIGHT);
	struct sim_snap a, b;

	sim_add(w, work_resnet(WORK_BATCHES, 128), 1, false);
	sim_add(w, work_resnet(WORK_BATCHES, 128), 2, false);
	window(w, 1000 * MS, 10000 * MS, &a, &b);
	CHECK_NEAR(sim_img_per_s(&a, &b, 1) / sim_img_per_s(&a, &b, 0), 2.0, 0.02);
	done(w);
}

/* A process stopped while holding: its slice is taken back, the other goes on. */
static void hung_holder(void)
{
	struct sim *w = new_sim(CGS_PREEMPT);
	struct sim_snap a, b;

	sim_add(w, work_resnet(WORK_BATCHES, 32), 1, false);
	sim_add(w, work_resnet(WORK_BATCHES, 32), 1, false);
	w->c[0].hangs = true;
	window(w, 1000 * MS, 4000 * MS, &a, &b);
	CHECK(w->slots[0].takebacks == 1);
	CHECK(share(&a, &b, 1) > 0.97);
	CHECK(w->c[1].wait.max <= Q + CGS_DEF_GRACE_NS + 2 * MS);
	done(w);
}

/* Work that drains far past the grace period: the scheduler moves on regardless. */
static void never_drains(void)
{
	struct sim *w = new_sim(CGS_PREEMPT);
	struct work hog = work_resnet(WORK_BATCHES, 1);

	hog.kernels = 1;
	hog.kernel_ns = 1000 * MS;
	sim_add(w, hog, 1, false);
	sim_add(w, work_resnet(WORK_BATCHES, 32), 1, false);
	sim_run(w, 6000 * MS);
	CHECK(w->slots[0].takebacks >= 2);
	CHECK(w->slots[1].grants >= 2);
	/*
	 * Each time, the hog is granted behind by the other's drain, so it is
	 * renewed once, fairly, then held to one grace period past that deadline.
	 */
	CHECK(w->c[1].wait.max <= 2 * Q + CGS_DEF_GRACE_NS + 2 * MS);
	CHECK(w->slots[0].charged_ns <= w->slots[0].grants * (2 * Q + CGS_DEF_GRACE_NS));
	done(w);
}

/* Policy written at runtime: 2 -> 1 -> 5 -> 2, each measured after the change. */
static void runtime_policy(void)
{
	struct sim *w = new_sim(CGS_WEIGHT);
	struct sim_snap a, b;
	size_t waits;

	sim_add(w, work_resnet(WORK_BATCHES, 16), 1, false);
	sim_add(w, work_resnet(WORK_BATCHES, 16), 2, false);
	window(w, 1000 * MS, 3000 * MS, &a, &b);
	CHECK_NEAR(share(&a, &b, 1) / share(&a, &b, 0), 2.0, 0.02);

	cgs_set_policy(&w->sched, CGS_PREEMPT, w->now);
	window(w, 500 * MS, 3000 * MS, &a, &b);
	CHECK_NEAR(share(&a, &b, 1) / share(&a, &b, 0), 1.0, 0.02);

	cgs_set_policy(&w->sched, CGS_NATIVE, w->now);
	sim_run(w, w->now + 500 * MS);
	waits = w->c[0].wait.n + w->c[1].wait.n;
	window(w, 0, 3000 * MS, &a, &b);
	CHECK(w->c[0].wait.n + w->c[1].wait.n == waits);
	CHECK(b.switches == a.switches);
	CHECK(share(&a, &b, 0) + share(&a, &b, 1) > 0.97);

	cgs_set_policy(&w->sched, CGS_WEIGHT, w->now);
	window(w, 500 * MS, 3000 * MS, &a, &b);
	CHECK_NEAR(share(&a, &b, 1) / share(&a, &b, 0), 2.0, 0.02);
	done(w);
}

/* A container arriving takes its share from the next decision on. */
static void arrival(void)
{
	struct sim *w = new_sim(CGS_PREEMPT);
	struct sim_snap a, b;

	sim_add(w, work_resnet(WORK_BATCHES, 8), 1, false);
	sim_run(w, 2000 * MS);
	sim_add(w, work_resnet(WORK_BATCHES, 8), 1, false);
	window(w, 100 * MS, 3000 * MS, &a, &b);
	CHECK_NEAR(share(&a, &b, 0), share(&a, &b, 1), 0.02);
	CHECK(share(&a, &b, 0) + share(&a, &b, 1) > 0.95);
	done(w);
}

/* A high-priority request waits at most one quantum for the GPU under 0..4. */
static void highprio_wait(void)
{
	uint32_t p;

	for (p = 0; p < CGS_NATIVE; p++) {
		struct sim *w = new_sim(p);
		struct work req = work_resnet(WORK_REQUESTS, 1);

		req.period_ns = 10 * MS;
		req.jitter_pct = 50;
		cgs_set_max_inst(&w->sched, 8, 0);
		sim_add(w, work_resnet(WORK_BATCHES, 64), 2, false);
		sim_add(w, work_resnet(WORK_BATCHES, 64), 4, false);
		sim_add(w, req, 1, true);
		sim_run(w, 3000 * MS);
		CHECK(w->c[2].wait.n > 100);
		CHECK(w->c[2].wait.max <= Q);
		done(w);
	}
}

void tests_sim(void)
{
	ratio_at_batch_128();
	hung_holder();
	never_drains();
	runtime_policy();
	arrival();
	highprio_wait();
}
