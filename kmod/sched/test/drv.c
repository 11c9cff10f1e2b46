#include "drv.h"

void drv_init(struct drv *d, u32 policy)
{
	*d = (struct drv){ .cur = CGS_NONE };
	cgs_init(&d->s, d->slot, DRV_N, 0);
	cgs_set_policy(&d->s, policy, 0);
}

void drv_observe(struct drv *d)
{
	s32 h = cgs_holder(&d->s);

	if (h == d->cur)
		return;
	if (d->cur >= 0)
		d->held[d->cur] += d->now - d->since;
	d->cur = h;
	d->since = d->now;
	if (h >= 0 && d->nseq < DRV_SEQ)
		d->seq[d->nseq++] = h;
}

void drv_join(struct drv *d, u32 i, u32 weight, bool highprio)
{
	cgs_join(&d->s, i, weight, highprio, d->now);
	drv_observe(d);
}

void drv_pair(struct drv *d, u32 policy, u64 overrun, u32 w0, u32 w1)
{
	drv_init(d, policy);
	d->overrun = overrun;
	drv_join(d, 0, w0, false);
	drv_join(d, 1, w1, false);
	drv_busy(d, 0, true);
	drv_busy(d, 1, true);
}

void drv_busy(struct drv *d, u32 i, bool busy)
{
	d->busy[i] = busy;
	if (busy)
		cgs_pending(&d->s, i, d->now);
	else
		cgs_idle(&d->s, i, d->now);
	drv_observe(d);
}

/* The holder at its deadline: renewed, or drains and gives the GPU back. */
static void slice_end(struct drv *d, s32 h)
{
	cgs_tick(&d->s, d->now);
	drv_observe(d);
	if (cgs_holder(&d->s) == h && cgs_deadline(&d->s) > d->now)
		return;
	d->now += d->overrun;
	cgs_release(&d->s, h, d->overrun, d->busy[h], d->now);
	drv_observe(d);
}

void drv_run(struct drv *d, u64 ns)
{
	u64 end = d->now + ns;

	while (d->now < end) {
		s32 h = cgs_holder(&d->s);
		u64 t = h >= 0 && !d->hung[h] ? cgs_deadline(&d->s) : cgs_next_tick(&d->s);

		if (t > end) {
			d->now = end;
			break;
		}
		if (t > d->now)
			d->now = t;
		if (h >= 0 && !d->hung[h])
			slice_end(d, h);
		else
			cgs_tick(&d->s, d->now);
		drv_observe(d);
	}
	if (d->cur >= 0)
		d->held[d->cur] += d->now - d->since;
	d->since = d->now;
}

void drv_measure(struct drv *d)
{
	u32 i;

	for (i = 0; i < DRV_N; i++)
		d->held[i] = 0;
	d->since = d->now;
	d->from = d->now;
	d->nseq = 0;
}

void drv_window(struct drv *d, u64 ns)
{
	drv_measure(d);
	drv_run(d, ns);
}

double drv_share(const struct drv *d, u32 i)
{
	return d->now > d->from ? (double)d->held[i] / (double)(d->now - d->from) : 0;
}
