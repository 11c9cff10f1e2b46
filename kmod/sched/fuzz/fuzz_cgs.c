/*
 * libFuzzer target: random event sequences on one GPU's scheduler, with the
 * invariants checked after every event: never two instances that may
 * submit, the holder and idle slot consistent, nobody charged more time
 * than has passed since it joined, every lag and credit in its bounds.
 * Overflow is caught by the sanitizers (integer included).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../cgs.h"

#define N	6
/* cgpu_km passes ktime_get_ns(): nanoseconds since boot, far below 2^62. */
#define T_MAX	(1ULL << 62)

struct input {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct input *in, unsigned bytes)
{
	uint64_t v = 0;

	for (; bytes && in->n; bytes--, in->n--)
		v = v << 8 | *in->p++;
	return v;
}

#define REQUIRE(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "invariant failed: %s\n", #cond);      \
			abort();                                               \
		}                                                              \
	} while (0)

static void check(const struct cgs *s, const u64 *joined_at)
{
	u64 total = 0, first = s->now;
	u32 i, may = 0;

	REQUIRE(s->holder == CGS_NONE ||
		(s->holder >= 0 && s->holder < N && s->inst[s->holder].joined));
	REQUIRE(s->holder == CGS_NONE || s->policy != CGS_NATIVE);
	REQUIRE(s->idle_owner == CGS_NONE || s->holder == CGS_NONE);
	REQUIRE(s->idle_owner == CGS_NONE || s->idle_owner == CGS_GHOST ||
		(s->idle_owner >= 0 && s->idle_owner < N && s->inst[s->idle_owner].joined));
	REQUIRE(s->holder == CGS_NONE || s->deadline <= s->now + CGS_MAX_QUANTUM_NS);
	REQUIRE(s->holder == CGS_NONE || s->now < s->deadline + s->grace_ns);
	REQUIRE(s->next_tick == CGS_NEVER || s->next_tick > s->now);
	REQUIRE(s->policy == CGS_NATIVE || s->holder != CGS_NONE ||
		s->idle_owner != CGS_NONE || s->next_tick == CGS_NEVER);
	REQUIRE(s->prio_credit >= -(s64)CGS_MAX_CHARGE_NS &&
		s->prio_credit <= (s64)(CGS_PRIO_WINDOW_NS / 100 * s->prio_ratio));
	for (i = 0; i < N; i++) {
		const struct cgs_inst *in = &s->inst[i];

		if (cgs_may_submit(s, i, s->now)) {
			may++;
			REQUIRE(in->joined && in->weight);
			REQUIRE(s->policy == CGS_NATIVE || s->holder == (s32)i);
		}
		if (!in->joined)
			continue;
		REQUIRE(in->charged_ns <= s->now - joined_at[i]);
		REQUIRE(in->prio_ns <= in->charged_ns);
		REQUIRE(in->used_ns <= in->charged_ns);
		REQUIRE(in->lag > -(s64)CGS_MAX_CHARGE_NS * 720720 * 4 &&
			in->lag < (s64)CGS_MAX_CHARGE_NS * 720720 * 4);
		total += in->charged_ns;
		if (joined_at[i] < first)
			first = joined_at[i];
	}
	REQUIRE(s->policy == CGS_NATIVE || may <= 1);
	/* one holder at a time: the charges never overlap */
	REQUIRE(total <= s->now - first);
}

/* A step forward of ns to hours, rarely backwards (callers race for the lock). */
static uint64_t next_time(struct input *in, uint64_t now)
{
	uint64_t v = take(in, 2);
	uint64_t step;

	switch (v >> 13) {
	case 0:
		return now > (v & 0xfff) ? now - (v & 0xfff) : 0;
	case 1:
	case 2:
		step = v & 0x1fff;
		break;
	case 3:
	case 4:
		step = (v & 0x1fff) * 1000;
		break;
	case 5:
		step = (v & 0x1fff) * 1000000;
		break;
	default:
		step = (v & 0x1fff) * 1000000000ULL;
		break;
	}
	return now + step < T_MAX ? now + step : now;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct cgs s;
	struct cgs_inst slot[N];
	u64 joined_at[N] = { 0 };
	uint64_t now = take(&in, 4);

	cgs_init(&s, slot, N, now);
	while (in.n) {
		unsigned op = (unsigned)take(&in, 1);
		u32 i = (u32)(take(&in, 1) % (N + 1));
		u32 arg = (u32)take(&in, 1);

		now = next_time(&in, now);
		switch (op % 11) {
		case 0:
			if (cgs_join(&s, i, arg % 27, arg & 0x80, now) == 0)
				joined_at[i] = s.now;
			break;
		case 1:
			cgs_leave(&s, i, now);
			break;
		case 2:
			cgs_set_policy(&s, arg % 7, now);
			break;
		case 3:
			cgs_set_weight(&s, i, arg % 27, now);
			break;
		case 4:
			cgs_set_max_inst(&s, arg % 27, now);
			break;
		case 5:
			cgs_set_prio_ratio(&s, arg % 101, now);
			break;
		case 6:
			cgs_set_highprio(&s, i, arg & 1, now);
			break;
		case 7:
			cgs_pending(&s, i, now);
			break;
		case 8:
			if (arg & 1)
				cgs_pending(&s, i, now);
			else
				cgs_idle(&s, i, now);
			break;
		case 9:
			if (s.holder >= 0 && (arg & 1))
				i = (u32)s.holder;
			cgs_release(&s, i, take(&in, 4) * 1000, arg & 2, now);
			break;
		case 10:
			if (arg & 1)
				cgs_set_timing(&s, (take(&in, 2) + 1) * 20000, take(&in, 2) * 200000, now);
			else
				cgs_tick(&s, now);
			break;
		}
		check(&s, joined_at);
	}
	return 0;
}
