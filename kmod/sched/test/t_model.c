/*
 * The scheduler behind the model of libcgpu, on the simulated GPU: what the
 * containers' kernels actually got, measured on the device.
 */
#include <stdlib.h>

#include "check.h"
#include "../model/model.h"

#define MS	1000000ULL
#define Q	CGS_DEF_QUANTUM_NS

static struct model *new_model(uint32_t policy)
{
	struct model *w = calloc(1, sizeof(*w));

	if (!w)
		abort();
	model_init(w, true, policy);
	return w;
}

static void done(struct model *w)
{
	model_free(w);
	free(w);
}

/* Runs settle_ns, then measures a window of len_ns between a and b. */
static void window(struct model *w, uint64_t settle_ns, uint64_t len_ns, struct model_snap *a,
		   struct model_snap *b)
{
	model_run(w, w->now + settle_ns);
	model_snap(w, a);
	model_run(w, w->now + len_ns);
	model_snap(w, b);
}

static double share(const struct model_snap *a, const struct model_snap *b, int i)
{
	return (double)model_share_ppm(a, b, i) / 1e6;
}

/* SPEC's worst case: 1:2 at batch 128 holds 2.0 where the original gives 1.77. */
static void ratio_at_batch_128(void)
{
	struct model *w = new_model(CGS_WEIGHT);
	struct model_snap a, b;

	model_add(w, work_resnet(WORK_BATCHES, 128), 1, false);
	model_add(w, work_resnet(WORK_BATCHES, 128), 2, false);
	window(w, 1000 * MS, 10000 * MS, &a, &b);
	CHECK_NEAR(model_img_per_s(&a, &b, 1) / model_img_per_s(&a, &b, 0), 2.0, 0.02);
	done(w);
}

/* A process stopped while holding: its slice is taken back, the other goes on. */
static void hung_holder(void)
{
	struct model *w = new_model(CGS_PREEMPT);
	struct model_snap a, b;

	model_add(w, work_resnet(WORK_BATCHES, 32), 1, false);
	model_add(w, work_resnet(WORK_BATCHES, 32), 1, false);
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
	struct model *w = new_model(CGS_PREEMPT);
	struct work hog = work_resnet(WORK_BATCHES, 1);

	hog.kernels = 1;
	hog.kernel_ns = 1000 * MS;
	model_add(w, hog, 1, false);
	model_add(w, work_resnet(WORK_BATCHES, 32), 1, false);
	model_run(w, 6000 * MS);
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
	struct model *w = new_model(CGS_WEIGHT);
	struct model_snap a, b;
	size_t waits;

	model_add(w, work_resnet(WORK_BATCHES, 16), 1, false);
	model_add(w, work_resnet(WORK_BATCHES, 16), 2, false);
	window(w, 1000 * MS, 3000 * MS, &a, &b);
	CHECK_NEAR(share(&a, &b, 1) / share(&a, &b, 0), 2.0, 0.02);

	cgs_set_policy(&w->sched, CGS_PREEMPT, w->now);
	window(w, 500 * MS, 3000 * MS, &a, &b);
	CHECK_NEAR(share(&a, &b, 1) / share(&a, &b, 0), 1.0, 0.02);

	cgs_set_policy(&w->sched, CGS_NATIVE, w->now);
	model_run(w, w->now + 500 * MS);
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
	struct model *w = new_model(CGS_PREEMPT);
	struct model_snap a, b;

	model_add(w, work_resnet(WORK_BATCHES, 8), 1, false);
	model_run(w, 2000 * MS);
	model_add(w, work_resnet(WORK_BATCHES, 8), 1, false);
	window(w, 100 * MS, 3000 * MS, &a, &b);
	CHECK_NEAR(share(&a, &b, 0), share(&a, &b, 1), 0.02);
	CHECK(share(&a, &b, 0) + share(&a, &b, 1) > 0.95);
	done(w);
}

/*
 * A high-priority request waits under 0..4 at most one quantum or the step the
 * holder already queued, whichever is longer (queued kernels cannot be taken
 * back), and a wakeup.
 */
static void highprio_wait(void)
{
	uint32_t p;

	for (p = 0; p < CGS_NATIVE; p++) {
		struct model *w = new_model(p);
		struct work req = work_resnet(WORK_REQUESTS, 1), busy = work_resnet(WORK_BATCHES, 64);
		uint64_t step = work_batch_ns(&busy);

		req.period_ns = 10 * MS;
		req.jitter_pct = 50;
		cgs_set_max_inst(&w->sched, 8, 0);
		model_add(w, busy, 2, false);
		model_add(w, busy, 4, false);
		model_add(w, req, 1, true);
		model_run(w, 3000 * MS);
		CHECK(w->c[2].wait.n > 100);
		CHECK(w->c[2].wait.max <= (step > Q ? step : Q) + hook_default.wake_ns);
		done(w);
	}
}

void tests_model(void)
{
	ratio_at_batch_128();
	hung_holder();
	never_drains();
	runtime_policy();
	arrival();
	highprio_wait();
}
