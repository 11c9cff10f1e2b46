#include "client.h"

const struct hook_cfg hook_default = {
#ifdef CGS_MODEL_ORIGINAL
	/*
	 * The model of the original (bench-original) assumes its interception
	 * keeps a short queue in flight: with CUDA's whole queue, its free drains
	 * would be whole steps and no drift like SPEC's would show.
	 */
	.depth = 16,
#else
	.depth = 1024,
#endif
	.yield_ns = 100000,
	.wake_ns = 10000,
	.launch_ns = 2000,
};

void client_init(struct client *c, int id, struct work w, bool gated)
{
	*c = (struct client){ .id = id, .w = w, .cfg = hook_default, .gated = gated };
}

static bool at_launch(const struct client *c)
{
	return c->have_op && c->op.kind == OP_LAUNCH;
}

static void hold(struct client *c, const struct gpu *g)
{
	c->holding = true;
	c->used_from = g->busy_ns[c->id];
	c->idle_since = 0;
}

static void release(struct client *c, struct cgs *s, const struct gpu *g,
		    bool more, uint64_t now)
{
	cgs_release(s, c->id, g->busy_ns[c->id] - c->used_from, more, now);
	c->holding = false;
	c->idle_since = 0;
	c->waking = false;
	if (more && !c->waiting) {
		c->waiting = true;
		c->wait_from = now;
	}
	c->pend_gen = cgs_gen(s);
}

/* The slow path at the end of a slice: once per deadline, ask for renewal. */
static bool renewed(struct client *c, struct cgs *s, uint64_t now)
{
	if (c->ticked == cgs_deadline(s))
		return false;
	c->ticked = cgs_deadline(s);
	cgs_tick(s, now);
	return cgs_may_submit(s, c->id, now);
}

/*
 * The hook's helper thread: gives the slice back when it is over and the
 * work drained (also a grant cut short before the waiter even woke up), or
 * when the holder has had nothing to do for yield_ns.
 */
static void housekeep(struct client *c, struct cgs *s, const struct gpu *g, uint64_t now)
{
	bool drained;

	if (cgs_holder(s) != c->id) {
		c->holding = false;
		return;
	}
	drained = gpu_inflight(g, c->id) == 0;
	if (now >= cgs_deadline(s) && !renewed(c, s, now)) {
		if (drained)
			release(c, s, g, c->waiting || at_launch(c), now);
		return;
	}
	if (!c->holding || !drained || at_launch(c)) {
		c->idle_since = 0;
		return;
	}
	if (!c->idle_since)
		c->idle_since = now;
	else if (now - c->idle_since >= c->cfg.yield_ns)
		release(c, s, g, false, now);
}

static void pend(struct client *c, struct cgs *s, uint64_t now)
{
	cgs_pending(s, c->id, now);
	c->pend_gen = cgs_gen(s);
}

static bool gate(struct client *c, struct cgs *s, const struct gpu *g, uint64_t now)
{
	if (!c->gated || (s->policy == CGS_NATIVE && cgs_may_submit(s, c->id, now)))
		return true;
	if (c->holding)
		return (cgs_may_submit(s, c->id, now) || renewed(c, s, now)) &&
		       gpu_inflight(g, c->id) < c->cfg.depth;
	if (!c->waiting) {
		c->waiting = true;
		c->wait_from = now;
		pend(c, s, now);
		if (!cgs_may_submit(s, c->id, now))
			return false;
	} else if (!cgs_may_submit(s, c->id, now)) {
		c->waking = false;
		if (cgs_gen(s) != c->pend_gen && cgs_holder(s) != c->id)
			pend(c, s, now);
		return false;
	} else if (!c->waking) {
		c->waking = true;
		c->wake_at = now + c->cfg.wake_ns;
		return false;
	} else if (now < c->wake_at) {
		return false;
	}
	samples_add(&c->wait, now - c->wait_from);
	c->waiting = false;
	c->waking = false;
	hold(c, g);
	c->frozen = c->hangs;
	return true;
}

bool client_step(struct client *c, struct cgs *s, struct gpu *g, uint64_t now)
{
	bool moved = false;
	uint64_t started = 0;

	while (!c->frozen) {
		housekeep(c, s, g, now);
		if (now < c->cpu_until)
			break;
		if (!c->have_op) {
			c->op = work_next(&c->w, now, &started);
			c->have_op = true;
			if (started) {
				c->req_start = started;
				c->in_req = true;
				started = 0;
			}
		}
		switch (c->op.kind) {
		case OP_CPU:
			c->cpu_until = now + c->op.arg;
			break;
		case OP_UNTIL:
			if (now < c->op.arg)
				return moved;
			break;
		case OP_SYNC:
			if (gpu_inflight(g, c->id))
				return moved;
			break;
		case OP_DONE:
			c->images += c->op.arg;
			if (c->in_req)
				samples_add(&c->latency, now - c->req_start);
			c->in_req = false;
			break;
		case OP_LAUNCH:
			if (!gate(c, s, g, now))
				return moved;
			if (!gpu_submit(g, c->id, c->op.arg, now))
				return moved;
			c->cpu_until = now + c->cfg.launch_ns;
			break;
		}
		c->have_op = false;
		moved = true;
	}
	return moved;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t client_next(const struct client *c, const struct cgs *s, uint64_t now)
{
	uint64_t t = UINT64_MAX;

	if (c->cpu_until > now)
		t = c->cpu_until;
	if (c->waking && c->wake_at > now)
		t = min64(t, c->wake_at);
	if (c->have_op && c->op.kind == OP_UNTIL && c->op.arg > now)
		t = min64(t, c->op.arg);
	if (c->frozen)
		return UINT64_MAX;
	if (c->holding) {
		if (cgs_deadline(s) > now)
			t = min64(t, cgs_deadline(s));
		if (c->idle_since)
			t = min64(t, c->idle_since + c->cfg.yield_ns);
	}
	return t;
}
