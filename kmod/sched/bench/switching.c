/*
 * Table (c): granularity. Slices have one length whatever the weights, so
 * weights 8:4 must switch exactly as often as 2:1, and a light container's
 * short task must wait no longer at 4:8 than at 1:2 (the original's slices
 * grow with the weight: 8:4 switches four times less often).
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>

static double switches_per_s(uint32_t policy, uint32_t wa, uint32_t wb, double *ratio)
{
	struct run *r = run_new(true, policy, CGPU_MAX_INST_MAX);
	double f;

	model_add(&r->w, work_resnet(WORK_BATCHES, 32), wa, false);
	model_add(&r->w, work_resnet(WORK_BATCHES, 32), wb, false);
	run_go(r);
	f = (double)(r->b.switches - r->a.switches) * 1e9 / (double)(r->b.at - r->a.at);
	*ratio = run_share(r, 0) / run_share(r, 1);
	run_free(r);
	return f;
}

static struct work short_tasks(void)
{
	struct work w = work_resnet(WORK_REQUESTS, 2);

	w.period_ns = 20 * MS;
	w.jitter_pct = 50;
	return w;
}

/* p99 latency and wait of a light container's short tasks beside a busy one. */
static void short_task(uint32_t policy, uint32_t wa, uint32_t wb, uint64_t *lat,
		       uint64_t *wait, uint64_t *wait_max)
{
	struct run *r = run_new(true, policy, CGPU_MAX_INST_MAX);

	model_add(&r->w, short_tasks(), wa, false);
	model_add(&r->w, work_resnet(WORK_BATCHES, 32), wb, false);
	run_go(r);
	*lat = samples_pct(&r->w.c[0].latency, 99);
	*wait = samples_pct(&r->w.c[0].wait, 99);
	*wait_max = r->w.c[0].wait.max;
	run_free(r);
}

static uint64_t alone_latency(void)
{
	struct run *r = run_new(false, CGS_NATIVE, CGPU_MAX_INST_DEFAULT);
	uint64_t l;

	model_add(&r->w, short_tasks(), 1, false);
	run_go(r);
	l = samples_pct(&r->w.c[0].latency, 99);
	run_free(r);
	return l;
}

void bench_switching(void)
{
	static const uint32_t policies[] = { CGS_WEIGHT, CGS_SOFT };
	struct work busy = work_resnet(WORK_BATCHES, 32);
	/* The busy neighbour stops submitting at its deadline; its kernels in flight drain. */
	uint64_t slice = Q_NS + (busy.kernels < hook_default.depth ? busy.kernels : hook_default.depth) *
			 busy.kernel_ns + hook_default.wake_ns;
	uint64_t alone = alone_latency();
	size_t i;

	printf("(c) granularity: two busy containers (batch 32), switches per second\n");
	printf("%-8s %12s %12s %9s %9s %s\n", "policy", "2:1", "8:4", "share 2:1", "share 8:4",
	       "verdict");
	for (i = 0; i < 2; i++) {
		double r21, r84, f21 = switches_per_s(policies[i], 2, 1, &r21);
		double f84 = switches_per_s(policies[i], 8, 4, &r84);

		printf("%-8u %10.1f/s %10.1f/s %9.3f %9.3f %s\n", policies[i], f21, f84, r21, r84,
		       verdict(f21 > 0 && fabs(rel_err(f84, f21)) <= 0.01));
	}
	printf("target: 8:4 switches as often as 2:1 (within 1%%), shares 2.0 both\n\n");

	printf("short tasks (batch 2, every 20 ms +-50%%) on the light container beside a busy "
	       "one; alone p99 latency %.3f ms\n", alone / 1e6);
	printf("%-8s %-6s %12s %12s %12s %12s %s\n", "policy", "weights", "p99 latency",
	       "p99 wait", "max wait", "bound", "verdict");
	for (i = 0; i < 2; i++) {
		uint64_t l12, w12, m12, l48, w48, m48;
		/* Policy 2 owes the heavy one its two slices; policy 4 one at most. */
		uint64_t bound = (policies[i] == CGS_WEIGHT ? 2 : 1) * slice;

		short_task(policies[i], 1, 2, &l12, &w12, &m12);
		short_task(policies[i], 4, 8, &l48, &w48, &m48);
		printf("%-8u %-7s %9.3f ms %9.3f ms %9.3f ms %9.3f ms %s\n", policies[i], "1:2",
		       l12 / 1e6, w12 / 1e6, m12 / 1e6, bound / 1e6, verdict(m12 <= bound));
		printf("%-8u %-7s %9.3f ms %9.3f ms %9.3f ms %9.3f ms %s\n", policies[i], "4:8",
		       l48 / 1e6, w48 / 1e6, m48 / 1e6, bound / 1e6,
		       verdict(m48 <= bound && fabs(rel_err((double)l48, (double)l12)) <= 0.02));
	}
	printf("targets: the wait stays within the bound (one slice under 4, the heavy one's "
	       "two under 2); 4:8 as responsive as 1:2 (p99 within 2%%)\n\n");
}
