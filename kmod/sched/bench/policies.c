/*
 * Table (b): one table per policy. Each scenario puts a few containers on
 * the GPU and measures what their kernels got: the share of wall time (caps)
 * or of the GPU time used (splits) against the policy's target, the total
 * against one busy container alone, and high priority's wait for the GPU.
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>

enum role {
	BUSY,		/* back-to-back batches of 32 */
	IDLE,		/* joined, never uses the GPU */
	ONOFF,		/* busy 50 ms, idle 50 ms */
	REQUESTS,	/* batch-1 requests every 10 ms +-50% */
};

struct member {
	enum role role;
	uint32_t weight;
	bool hp;
	double target;	/* share to reach; 0: none */
};

struct scenario {
	const char *what;
	bool split;	/* targets are shares of the GPU time used, else of wall time */
	bool full_use;	/* all together must use >= 97% of what one busy one does alone */
	struct member m[4];
};

struct policy_table {
	uint32_t policy;
	const char *name;
	uint32_t max_inst;
	struct scenario sc[6];
};

#define SHARE_TOL	0.02
#define USE_MIN		0.97
#define THIRD		(1.0 / 3)

static const struct policy_table tables[] = {
	{ CGS_FAIR, "fair-share: 1/max_inst each, busy or not", 4, {
		{ "2 busy", false, false, { { BUSY, 1, 0, 0.25 }, { BUSY, 1, 0, 0.25 } } },
		{ "1 busy, 1 idle", false, false, { { BUSY, 1, 0, 0.25 }, { IDLE, 1, 0, 0 } } },
		{ "2 busy + hp requests", false, false,
		  { { BUSY, 1, 0, 0 }, { BUSY, 1, 0, 0 }, { REQUESTS, 1, 1, 0 } } },
		{ "2 busy + hp busy", false, false,
		  { { BUSY, 1, 0, 0 }, { BUSY, 1, 0, 0 }, { BUSY, 1, 1, 0 } } },
	} },
	{ CGS_PREEMPT, "preemptive: idle skipped, N busy share 1/N", 16, {
		{ "2 busy", true, true, { { BUSY, 1, 0, 0.5 }, { BUSY, 1, 0, 0.5 } } },
		{ "1 busy, 1 idle", true, true, { { BUSY, 1, 0, 1 }, { IDLE, 1, 0, 0 } } },
		{ "1 busy, 1 on/off", false, true, { { BUSY, 1, 0, 0 }, { ONOFF, 1, 0, 0 } } },
		{ "2 busy + hp requests", false, false,
		  { { BUSY, 1, 0, 0 }, { BUSY, 1, 0, 0 }, { REQUESTS, 1, 1, 0 } } },
		{ "2 busy + hp busy", false, false,
		  { { BUSY, 1, 0, 0 }, { BUSY, 1, 0, 0 }, { BUSY, 1, 1, 0 } } },
	} },
	{ CGS_WEIGHT, "weight-based: weight shares, idle keep theirs", 16, {
		{ "2 busy 1:2", true, true, { { BUSY, 1, 0, THIRD }, { BUSY, 2, 0, 2 * THIRD } } },
		{ "w1 busy, w2 idle", false, false, { { BUSY, 1, 0, THIRD }, { IDLE, 2, 0, 0 } } },
		{ "w1 busy, w2 on/off", false, false, { { BUSY, 1, 0, THIRD }, { ONOFF, 2, 0, 0 } } },
		{ "1:2 busy + hp requests", false, false,
		  { { BUSY, 1, 0, 0 }, { BUSY, 2, 0, 0 }, { REQUESTS, 1, 1, 0 } } },
		{ "1:2 busy + hp busy", false, false,
		  { { BUSY, 1, 0, 0 }, { BUSY, 2, 0, 0 }, { BUSY, 1, 1, 0 } } },
	} },
	{ CGS_FIXED, "fixed: weight/max_inst each, a hard cap", 8, {
		{ "w2, w4 busy", false, false, { { BUSY, 2, 0, 0.25 }, { BUSY, 4, 0, 0.5 } } },
		{ "w2 busy, w4 idle", false, false, { { BUSY, 2, 0, 0.25 }, { IDLE, 4, 0, 0 } } },
		{ "w2, w4 busy + hp requests", false, false,
		  { { BUSY, 2, 0, 0 }, { BUSY, 4, 0, 0 }, { REQUESTS, 1, 1, 0 } } },
		{ "w2, w4 busy + hp busy", false, false,
		  { { BUSY, 2, 0, 0 }, { BUSY, 4, 0, 0 }, { BUSY, 1, 1, 0 } } },
	} },
	{ CGS_SOFT, "soft: weight shares among busy, idle time lent", 16, {
		{ "2 busy 1:2", true, true, { { BUSY, 1, 0, THIRD }, { BUSY, 2, 0, 2 * THIRD } } },
		{ "w1 busy, w2 idle", true, true, { { BUSY, 1, 0, 1 }, { IDLE, 2, 0, 0 } } },
		{ "w1 busy, w2 on/off", false, true, { { BUSY, 1, 0, 0 }, { ONOFF, 2, 0, 0 } } },
		{ "1:2 busy + hp requests", false, false,
		  { { BUSY, 1, 0, 0 }, { BUSY, 2, 0, 0 }, { REQUESTS, 1, 1, 0 } } },
		{ "1:2 busy + hp busy", false, false,
		  { { BUSY, 1, 0, 0 }, { BUSY, 2, 0, 0 }, { BUSY, 1, 1, 0 } } },
	} },
	{ CGS_NATIVE, "native: no slicing, the driver's own time slices", 16, {
		{ "2 busy", true, true, { { BUSY, 1, 0, 0 }, { BUSY, 1, 0, 0 } } },
		{ "2 busy + hp requests", false, false,
		  { { BUSY, 1, 0, 0 }, { BUSY, 1, 0, 0 }, { REQUESTS, 1, 1, 0 } } },
	} },
};

static struct work role_work(enum role role)
{
	struct work w = work_resnet(WORK_BATCHES, 32);

	switch (role) {
	case BUSY:
		break;
	case IDLE:
		w.kind = WORK_NONE;
		break;
	case ONOFF:
		w.kind = WORK_BUSY_IDLE;
		w.busy_ns = 50 * MS;
		w.idle_ns = 50 * MS;
		break;
	case REQUESTS:
		w = work_resnet(WORK_REQUESTS, 1);
		w.period_ns = 10 * MS;
		w.jitter_pct = 50;
		break;
	}
	return w;
}

static const char *role_name(enum role r)
{
	static const char *const names[] = { "busy", "idle", "on/off", "requests" };

	return names[r];
}

static int members(const struct scenario *sc)
{
	int n = 0;

	while (n < 4 && sc->m[n].weight)
		n++;
	return n;
}

/*
 * High priority: a request gets the GPU once the holder's queued work has run
 * (CUDA cannot take queued kernels back, and the hook, like CUDA, queues a
 * whole step of up to 1024 launches): it waits at most one quantum or one
 * step of the busy tenants' work, whichever is longer, and a wakeup (not
 * applicable under policy 5, which never gates). A busy one takes prio_ratio
 * of the time as high priority, within 2%.
 */
static void print_hp(const struct run *r, int i, const struct member *m, uint32_t policy)
{
	struct client *c = (struct client *)&r->w.c[i];
	double prio = (double)(r->b.prio[i] - r->a.prio[i]) / (double)(r->b.at - r->a.at);
	double ratio = r->w.sched.prio_ratio / 100.0;
	struct work busy = role_work(BUSY);
	uint64_t step = work_batch_ns(&busy);
	uint64_t bound = (step > Q_NS ? step : Q_NS) + hook_default.wake_ns;

	if (m->role == REQUESTS) {
		uint64_t p99 = samples_pct(&c->wait, 99), lp99 = samples_pct(&c->latency, 99);

		printf("%30s wait for the GPU mean %.3f p99 %.3f max %.3f ms; request latency "
		       "mean %.3f p99 %.3f ms", "", samples_mean(&c->wait) / 1e6, p99 / 1e6,
		       c->wait.max / 1e6, samples_mean(&c->latency) / 1e6, lp99 / 1e6);
		if (policy == CGS_NATIVE)
			printf(" (not gated)\n");
		else
			printf("; target max <= %.3f ms (a %.0f ms slice or a %.3f ms step) %s\n",
			       bound / 1e6, Q_NS / 1e6, step / 1e6,
			       verdict(c->wait.n && c->wait.max <= bound));
		return;
	}
	printf("%30s held as high priority %.2f%% of the time; target %.0f%% +-2%% %s\n", "",
	       100 * prio, 100 * ratio, verdict(fabs(rel_err(prio, ratio)) <= SHARE_TOL));
}

static void run_scenario(const struct policy_table *t, const struct scenario *sc,
			 double alone)
{
	struct run *r = run_new(true, t->policy, t->max_inst);
	int n = members(sc), i;
	double total = 0;

	for (i = 0; i < n; i++)
		model_add(&r->w, role_work(sc->m[i].role), sc->m[i].weight, sc->m[i].hp);
	run_go(r);
	for (i = 0; i < n; i++)
		total += run_share(r, i);
	for (i = 0; i < n; i++) {
		const struct member *m = &sc->m[i];
		double share = run_share(r, i), got = sc->split ? share / total : share;

		printf("%-26s %c %-8s %2s w%-2u %7.2f%% %7.2f%%", i ? "" : sc->what, 'A' + i,
		       role_name(m->role), m->hp ? "hp" : "", m->weight, 100 * share,
		       100 * share / total);
		if (m->target)
			printf("  target %6.2f%% of %s %+6.2f%% %s", 100 * m->target,
			       sc->split ? "use " : "time", 100 * rel_err(got, m->target),
			       verdict(fabs(rel_err(got, m->target)) <= SHARE_TOL));
		printf("\n");
		if (m->hp)
			print_hp(r, i, m, t->policy);
	}
	printf("%30s all: %.2f%% of the time, %.1f%% of one busy container alone", "",
	       100 * total, 100 * total / alone);
	if (sc->full_use)
		printf("; target >= %.0f%% %s", 100 * USE_MIN, verdict(total / alone >= USE_MIN));
	printf("\n");
	if (t->policy == CGS_NATIVE)
		for (i = 0; i < n; i++)
			if (r->w.c[i].wait.n)
				printf("%30s %c waited at a gate under policy 5 %s\n", "", 'A' + i,
				       verdict(false));
	run_free(r);
}

void bench_policies(void)
{
	double alone = alone_share(role_work(BUSY));
	size_t p;
	int s;

	printf("(b) per policy; batch-32 ResNet50-like work; one busy container alone keeps "
	       "the GPU %.2f%% busy\n", 100 * alone);
	printf("%-26s %-13s %4s %8s %8s\n", "scenario", "container", "", "time", "use");
	for (p = 0; p < sizeof(tables) / sizeof(tables[0]); p++) {
		const struct policy_table *t = &tables[p];

		printf("-- policy %u, %s (max_inst %u, prio_ratio %u)\n", t->policy, t->name,
		       t->max_inst, CGPU_PRIO_RATIO_DEFAULT);
		for (s = 0; s < 6 && t->sc[s].what; s++)
			run_scenario(t, &t->sc[s], alone);
	}
	printf("targets: shares within 2%%; all busy under 1, 2, 4 >= 97%% of alone; "
	       "a high-priority request waits at most one quantum or one queued step\n\n");
}
