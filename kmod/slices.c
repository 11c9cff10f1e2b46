// SPDX-License-Identifier: GPL-2.0
/*
 * The compute scheduler of each GPU inside cgpu_km. sched/cgs.c decides; this file
 * feeds it the events (instances, settings, processes waiting and ending their part
 * of a slice, time), publishes each decision on the status page every /dev/cgpu file
 * maps, wakes the sleepers and arms the slice timer (docs/scheduler.md).
 *
 * Who takes part in a slice: one open /dev/cgpu file is one process. A file joins the
 * current slice of its container when its SLICE_WAIT returns and leaves it with
 * SLICE_END (its queued work drained), with its next SLICE_WAIT, or when it closes
 * (exit, SIGKILL). The container holds the GPU until the last file that joined has
 * left (inst->nsub counts them), or until the grace period after the deadline runs
 * out, when cgs takes the slice back and the others go on. A container none of whose
 * files waits any more is idle.
 */
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/wait.h>
#include "cgpu.h"
#include "compat.h"

static unsigned int quantum_us = CGS_DEF_QUANTUM_NS / 1000;
module_param(quantum_us, uint, 0444);
MODULE_PARM_DESC(quantum_us, "length of a compute slice in us, 100..1000000 (default 4000)");

static unsigned int grace_ms = CGS_DEF_GRACE_NS / 1000000;
module_param(grace_ms, uint, 0444);
MODULE_PARM_DESC(grace_ms, "how long a slice may drain past its deadline before it is taken back, ms, 1..10000 (default 100)");

/* The hold serial and policy 5's serial fill 31 bits, so a go word is never ~0. */
#define CGPU_SERIAL_MASK 0x7fffffffu

/*
 * Who may submit now, as the status page says it. Policy 5 has one word for every
 * instance with a weight; it changes with every setting, so that an instance whose
 * weight went to 0 (or that was deleted) finds its word stale and asks again.
 */
static u64 cgpu_go(struct cgpu_gpu *g, u64 now)
{
	s32 h = cgs_holder(&g->sched);

	/* A hot update: nobody submits until processes are attached to the next module. */
	if (READ_ONCE(cgpu.state) != CGPU_RUNNING)
		return 0;
	if (g->sched.policy == CGS_NATIVE)
		return (u64)g->open_serial << 32 | CGPU_SCHED_ID_OPEN;
	if (h < 0 || !cgs_may_submit(&g->sched, h, now))
		return 0;
	return (u64)g->hold << 32 | g->slot_inst[h]->sched_id;
}

static void cgpu_publish(struct cgpu_gpu *g, u64 go)
{
	struct cgpu_sched_status *st = g->st;
	s32 h = cgs_holder(&g->sched);

	WRITE_ONCE(st->seq, st->seq + 1);
	smp_wmb();
	WRITE_ONCE(st->go, go);
	WRITE_ONCE(st->deadline, cgs_deadline(&g->sched));
	WRITE_ONCE(st->gen, cgs_gen(&g->sched));
	WRITE_ONCE(st->holder, h >= 0 ? g->slot_inst[h]->sched_id : 0);
	WRITE_ONCE(st->policy, g->sched.policy);
	WRITE_ONCE(st->open, g->sched.policy == CGS_NATIVE);
	smp_wmb();
	WRITE_ONCE(st->seq, st->seq + 1);
}

/*
 * After every call into cgs, sched_lock held: notice a new slice, publish the page
 * and wake the sleepers if anything they watch moved, and arm the timer for the next
 * point where time alone changes the decision (cgs_next_tick).
 */
static void cgpu_sched_update(struct cgpu_gpu *g, u64 now)
{
	s32 h = cgs_holder(&g->sched);
	u64 go, next;

	lockdep_assert_held(&g->sched_lock);
	if (h >= 0 && (h != g->hold_slot || g->slots[h].grants != g->hold_grants)) {
		struct cgpu_inst *inst = g->slot_inst[h];

		g->hold = g->hold % CGPU_SERIAL_MASK + 1;
		g->hold_slot = h;
		g->hold_grants = g->slots[h].grants;
		inst->nsub = 0;
		inst->hold_used = 0;
		inst->hold_more = false;
	} else if (h < 0) {
		g->hold_slot = CGS_NONE;
	}
	go = cgpu_go(g, now);
	if (go != g->st->go || cgs_gen(&g->sched) != g->st->gen ||
	    g->sched.policy != g->st->policy) {
		cgpu_publish(g, go);
		wake_up_all(&g->wq);
	}
	next = cgs_next_tick(&g->sched);
	if (next == g->armed)
		return;
	g->armed = next;
	if (next == CGS_NEVER) {
		/* -1 (running) is fine: the callback decides again under the lock. */
		hrtimer_try_to_cancel(&g->timer);
		return;
	}
	/* Never in the past: an expired timer re-armed from its own callback would spin. */
	hrtimer_start(&g->timer, ns_to_ktime(max(next, now + NSEC_PER_USEC * 10)),
		      HRTIMER_MODE_ABS);
}

int cgpu_sched_init(unsigned int ngpus)
{
	u64 q = (u64)quantum_us * NSEC_PER_USEC, gr = (u64)grace_ms * NSEC_PER_MSEC;

	if (q < CGS_MIN_QUANTUM_NS || q > CGS_MAX_QUANTUM_NS || gr < CGS_MIN_GRACE_NS ||
	    gr > CGS_MAX_GRACE_NS) {
		pr_err("cgpu_km: quantum_us=%u or grace_ms=%u is out of range (100..1000000, 1..10000)\n",
		       quantum_us, grace_ms);
		return -EINVAL;
	}
	cgpu.status = (struct cgpu_status_page *)get_zeroed_page(GFP_KERNEL);
	if (!cgpu.status)
		return -ENOMEM;
	atomic_inc(&cgpu.live);
	cgpu.status->abi_version = CGPU_ABI_VERSION;
	cgpu.status->ngpus = ngpus;
	cgpu.status->flags = CGPU_STATUS_HANDOVER;
	return 0;
}

/*
 * cgpu.state changed: every GPU's go word follows (0 unless running), and every
 * sleeper wakes to see it, whether or not the word moved.
 */
void cgpu_sched_republish(void)
{
	unsigned long flags;
	unsigned int i;

	for (i = 0; i < cgpu.ngpus; i++) {
		struct cgpu_gpu *g = &cgpu.gpus[i];

		spin_lock_irqsave(&g->sched_lock, flags);
		cgpu_sched_update(g, ktime_get_ns());
		wake_up_all(&g->wq);
		spin_unlock_irqrestore(&g->sched_lock, flags);
	}
}

void cgpu_sched_exit(void)
{
	/* Mappings hold their own page reference (vm_insert_page). */
	free_page((unsigned long)cgpu.status);
	atomic_dec(&cgpu.live);
	cgpu.status = NULL;
}

static enum hrtimer_restart cgpu_sched_timer(struct hrtimer *t);

void cgpu_sched_gpu_init(struct cgpu_gpu *g)
{
	u64 now = ktime_get_ns();

	spin_lock_init(&g->sched_lock);
	init_waitqueue_head(&g->wq);
	hrtimer_init(&g->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	g->timer.function = cgpu_sched_timer;
	g->st = &cgpu.status->gpu[g->index];
	g->next_id = 1;
	g->hold_slot = CGS_NONE;
	g->armed = CGS_NEVER;
	cgs_init(&g->sched, g->slots, CGPU_MAX_INST_MAX, now);
	/* Values checked at load; every setting has its procfs default. */
	cgs_set_timing(&g->sched, (u64)quantum_us * NSEC_PER_USEC,
		       (u64)grace_ms * NSEC_PER_MSEC, now);
	cgs_set_policy(&g->sched, g->policy, now);
	cgs_set_max_inst(&g->sched, g->max_inst, now);
	cgs_set_prio_ratio(&g->sched, g->prio_ratio, now);
	cgpu_publish(g, cgpu_go(g, now));
}

/* Every instance has left (cgpu_registry_exit), so nothing re-arms the timer. */
void cgpu_sched_gpu_exit(struct cgpu_gpu *g)
{
	hrtimer_cancel(&g->timer);
}

int cgpu_sched_join(struct cgpu_inst *inst)
{
	struct cgpu_gpu *g = inst->gpu;
	unsigned long flags;
	int i, err = -ENOSPC;
	u64 now;

	lockdep_assert_held(&cgpu.reg_lock);
	spin_lock_irqsave(&g->sched_lock, flags);
	now = ktime_get_ns();
	/* At most max_inst <= CGPU_MAX_INST_MAX instances are listed: a slot is free. */
	for (i = 0; i < CGPU_MAX_INST_MAX; i++) {
		if (g->slot_inst[i])
			continue;
		err = cgs_join(&g->sched, i, inst->weight, inst->highprio, now);
		if (err)
			break;
		g->slot_inst[i] = inst;
		inst->sched_slot = i;
		inst->sched_id = g->next_id;
		g->next_id = g->next_id + 1 >= CGPU_SCHED_ID_OPEN ? 1 : g->next_id + 1;
		inst->nwait = inst->nsub = 0;
		g->open_serial = (g->open_serial + 1) & CGPU_SERIAL_MASK;
		cgpu_sched_update(g, now);
		break;
	}
	spin_unlock_irqrestore(&g->sched_lock, flags);
	return err;
}

/*
 * The files still attached keep their state; with sched_slot gone their calls answer
 * ENOENT and their close does nothing here.
 */
void cgpu_sched_leave(struct cgpu_inst *inst)
{
	struct cgpu_gpu *g = inst->gpu;
	unsigned long flags;
	u64 now;

	lockdep_assert_held(&cgpu.reg_lock);
	spin_lock_irqsave(&g->sched_lock, flags);
	if (inst->sched_slot >= 0) {
		now = ktime_get_ns();
		cgs_leave(&g->sched, inst->sched_slot, now);
		g->slot_inst[inst->sched_slot] = NULL;
		inst->sched_slot = CGS_NONE;
		g->open_serial = (g->open_serial + 1) & CGPU_SERIAL_MASK;
		cgpu_sched_update(g, now);
		/* Its sleepers must see it gone even if no decision moved. */
		wake_up_all(&g->wq);
	}
	spin_unlock_irqrestore(&g->sched_lock, flags);
}

/*
 * A setting: procfs has validated it under reg_lock; cgs checks the same range, so
 * an error here leaves both unchanged and the caller stores nothing.
 */
enum cgpu_setting { SET_POLICY, SET_MAX_INST, SET_PRIO_RATIO, SET_WEIGHT, SET_HIGHPRIO };

static int cgpu_sched_set(struct cgpu_gpu *g, struct cgpu_inst *inst, enum cgpu_setting what,
			  u32 v)
{
	unsigned long flags;
	int err;
	u64 now;

	lockdep_assert_held(&cgpu.reg_lock);
	spin_lock_irqsave(&g->sched_lock, flags);
	now = ktime_get_ns();
	if (inst && inst->sched_slot < 0) {
		err = -ENOENT;
		goto out;
	}
	switch (what) {
	case SET_POLICY:
		err = cgs_set_policy(&g->sched, v, now);
		break;
	case SET_MAX_INST:
		err = cgs_set_max_inst(&g->sched, v, now);
		break;
	case SET_PRIO_RATIO:
		err = cgs_set_prio_ratio(&g->sched, v, now);
		break;
	case SET_WEIGHT:
		err = cgs_set_weight(&g->sched, inst->sched_slot, v, now);
		break;
	default:
		err = cgs_set_highprio(&g->sched, inst->sched_slot, v, now);
		break;
	}
	if (!err) {
		g->open_serial = (g->open_serial + 1) & CGPU_SERIAL_MASK;
		cgpu_sched_update(g, now);
	}
out:
	spin_unlock_irqrestore(&g->sched_lock, flags);
	return err;
}

int cgpu_sched_set_policy(struct cgpu_gpu *g, u32 v)
{
	return cgpu_sched_set(g, NULL, SET_POLICY, v);
}

int cgpu_sched_set_max_inst(struct cgpu_gpu *g, u32 v)
{
	return cgpu_sched_set(g, NULL, SET_MAX_INST, v);
}

int cgpu_sched_set_prio_ratio(struct cgpu_gpu *g, u32 v)
{
	return cgpu_sched_set(g, NULL, SET_PRIO_RATIO, v);
}

int cgpu_sched_set_weight(struct cgpu_inst *inst, u32 v)
{
	return cgpu_sched_set(inst->gpu, inst, SET_WEIGHT, v);
}

int cgpu_sched_set_highprio(struct cgpu_inst *inst, u32 v)
{
	return cgpu_sched_set(inst->gpu, inst, SET_HIGHPRIO, v);
}

/*
 * A file stopped waiting or left the slice: pass the slice on when nobody of the
 * container takes part any more (or only waiters who cannot join it, its deadline
 * being past), or mark the container idle when nobody of it waits.
 */
static void cgpu_settle(struct cgpu_gpu *g, struct cgpu_inst *inst, u64 now)
{
	s32 slot = inst->sched_slot;

	if (cgs_holder(&g->sched) == slot) {
		if (inst->nsub || (inst->nwait && cgs_may_submit(&g->sched, slot, now)))
			return;
		cgs_release(&g->sched, slot, inst->hold_used, inst->hold_more || inst->nwait,
			    now);
	} else if (!inst->nwait && g->slots[slot].busy) {
		cgs_idle(&g->sched, slot, now);
	} else {
		return;
	}
	cgpu_sched_update(g, now);
}

/*
 * At a deadline, or when time otherwise changes the decision. A slice that nobody of
 * its container joined before its deadline (the waiter woke too late: a loaded host)
 * is passed on at once rather than after the grace period.
 */
static enum hrtimer_restart cgpu_sched_timer(struct hrtimer *t)
{
	struct cgpu_gpu *g = container_of(t, struct cgpu_gpu, timer);
	unsigned long flags;
	s32 h;
	u64 now;

	spin_lock_irqsave(&g->sched_lock, flags);
	g->armed = CGS_NEVER;	/* fired: the next update arms it again */
	now = ktime_get_ns();
	cgs_tick(&g->sched, now);
	cgpu_sched_update(g, now);
	h = cgs_holder(&g->sched);
	if (h >= 0 && !cgs_may_submit(&g->sched, h, now))
		cgpu_settle(g, g->slot_inst[h], now);
	spin_unlock_irqrestore(&g->sched_lock, flags);
	return HRTIMER_NORESTART;
}

/* The file leaves the slice it took part in, if that is still the current one. */
static bool cgpu_leave_part(struct cgpu_gpu *g, struct cgpu_slot *s)
{
	bool current_part = s->hold && s->hold == g->hold && g->hold_slot == s->inst->sched_slot;

	if (current_part)
		s->inst->nsub--;
	s->hold = 0;
	return current_part;
}

void cgpu_sched_detach(struct cgpu_slot *s)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_gpu *g = inst->gpu;
	unsigned long flags;
	bool changed = false;

	spin_lock_irqsave(&g->sched_lock, flags);
	if (inst->sched_slot >= 0) {
		if (s->waiting) {
			s->waiting = false;
			inst->nwait--;
			changed = true;
		}
		changed |= cgpu_leave_part(g, s);
		if (changed)
			cgpu_settle(g, inst, ktime_get_ns());
	}
	spin_unlock_irqrestore(&g->sched_lock, flags);
}

static int cgpu_slice_wait(struct cgpu_slot *s, struct cgpu_slice *a)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_gpu *g = inst->gpu;
	long left = msecs_to_jiffies(a->timeout_ms);
	unsigned long flags;
	u64 gen, go, now;
	int err = 0;

	spin_lock_irqsave(&g->sched_lock, flags);
	if (s->in_wait)
		err = -EBUSY;
	else
		s->in_wait = true;
	spin_unlock_irqrestore(&g->sched_lock, flags);
	if (err)
		return err;
	for (;;) {
		spin_lock_irqsave(&g->sched_lock, flags);
		now = ktime_get_ns();
		if (inst->sched_slot < 0) {
			err = -ENOENT;
			break;
		}
		if (READ_ONCE(cgpu.state) != CGPU_RUNNING) {
			err = -EAGAIN;	/* a hot update: ask the next module */
			break;
		}
		if (!cgs_may_submit(&g->sched, inst->sched_slot, now)) {
			/*
			 * Waiting again after its deadline ends the file's part (used 0); a
			 * slice granted while it slept and already past its deadline passes on.
			 */
			cgpu_leave_part(g, s);
			if (!s->waiting) {
				s->waiting = true;
				inst->nwait++;
			}
			cgpu_settle(g, inst, now);
			cgs_pending(&g->sched, inst->sched_slot, now);
			cgpu_sched_update(g, now);
		}
		if (cgs_may_submit(&g->sched, inst->sched_slot, now)) {
			if (s->waiting) {
				s->waiting = false;
				inst->nwait--;
			}
			if (g->sched.policy != CGS_NATIVE && s->hold != g->hold) {
				s->hold = g->hold;
				inst->nsub++;
			}
			a->go = g->st->go;
			a->deadline = cgs_deadline(&g->sched);
			break;
		}
		gen = cgs_gen(&g->sched);
		go = g->st->go;
		if (!left) {
			err = -ETIMEDOUT;	/* still waiting: the caller asks again */
			break;
		}
		spin_unlock_irqrestore(&g->sched_lock, flags);
		left = wait_event_interruptible_timeout(g->wq,
				READ_ONCE(g->sched.gen) != gen || READ_ONCE(g->st->go) != go ||
				READ_ONCE(inst->sched_slot) < 0 ||
				READ_ONCE(cgpu.state) != CGPU_RUNNING, left);
		if (left < 0) {
			spin_lock_irqsave(&g->sched_lock, flags);
			err = -ERESTARTSYS;
			break;
		}
	}
	/* Not granted: the file stops waiting (a signal, a hot update). */
	if (err && err != -ETIMEDOUT && s->waiting && inst->sched_slot >= 0) {
		s->waiting = false;
		inst->nwait--;
		cgpu_settle(g, inst, ktime_get_ns());
	}
	s->in_wait = false;
	spin_unlock_irqrestore(&g->sched_lock, flags);
	return err;
}

static int cgpu_slice_end(struct cgpu_slot *s, struct cgpu_slice *a)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_gpu *g = inst->gpu;
	unsigned long flags;
	int err = 0;

	a->flags &= CGPU_SLICE_MORE;
	spin_lock_irqsave(&g->sched_lock, flags);
	if (inst->sched_slot < 0) {
		err = -ENOENT;
	} else if (!s->hold || (u32)(a->go >> 32) != s->hold) {
		a->flags |= CGPU_SLICE_STALE;	/* not the slice this file takes part in */
	} else if (!cgpu_leave_part(g, s)) {
		a->flags |= CGPU_SLICE_STALE;	/* taken back meanwhile */
	} else {
		inst->hold_used += min_t(u64, a->used_ns, CGS_MAX_CHARGE_NS);
		inst->hold_more |= a->flags & CGPU_SLICE_MORE;
		cgpu_settle(g, inst, ktime_get_ns());
	}
	spin_unlock_irqrestore(&g->sched_lock, flags);
	return err;
}

static int cgpu_slice_watch(struct cgpu_slot *s, struct cgpu_slice *a)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_gpu *g = inst->gpu;
	unsigned long flags;
	long left;

	left = wait_event_interruptible_timeout(g->wq,
			READ_ONCE(g->st->go) != a->go || READ_ONCE(inst->sched_slot) < 0 ||
			READ_ONCE(cgpu.state) != CGPU_RUNNING,
			msecs_to_jiffies(a->timeout_ms));
	if (left < 0)
		return -ERESTARTSYS;
	spin_lock_irqsave(&g->sched_lock, flags);
	a->deadline = cgs_deadline(&g->sched);
	a->go = g->st->go;
	left = inst->sched_slot < 0 ? -ENOENT : READ_ONCE(cgpu.state) != CGPU_RUNNING ? -EAGAIN :
	       left ? 0 : -ETIMEDOUT;
	spin_unlock_irqrestore(&g->sched_lock, flags);
	return left;
}

/* What SCHED_STAT and INST_STAT say of inst, which sits in a slot of g. */
static void cgpu_sched_fill(struct cgpu_gpu *g, struct cgpu_inst *inst,
			    struct cgpu_sched_stat *a)
{
	const struct cgs_inst *c = &g->slots[inst->sched_slot];

	lockdep_assert_held(&g->sched_lock);
	a->gpu = g->index;
	a->sched_id = inst->sched_id;
	a->policy = g->sched.policy;
	a->weight = c->weight;
	a->waiting = inst->nwait;
	a->holding = g->hold_slot == inst->sched_slot ? inst->nsub : 0;
	a->quantum_ns = g->sched.quantum_ns;
	a->grace_ns = g->sched.grace_ns;
	a->charged_ns = c->charged_ns;
	a->used_ns = c->used_ns;
	a->prio_ns = c->prio_ns;
	a->grants = c->grants;
	a->takebacks = c->takebacks;
}

static int cgpu_sched_stat(struct cgpu_slot *s, struct cgpu_sched_stat *a)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_gpu *g = inst->gpu;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&g->sched_lock, flags);
	if (inst->sched_slot < 0)
		err = -ENOENT;
	else
		cgpu_sched_fill(g, inst, a);
	spin_unlock_irqrestore(&g->sched_lock, flags);
	return err;
}

/*
 * INST_STAT's figures of inst; reg_lock held: a listed instance keeps its slot (it
 * leaves the scheduler and the list together), and reg_lock comes before sched_lock.
 */
int cgpu_sched_inst_stat(struct cgpu_inst *inst, struct cgpu_inst_stat *a)
{
	struct cgpu_gpu *g = inst->gpu;
	unsigned long flags;
	int err = -ENOENT;
	u64 now;

	lockdep_assert_held(&cgpu.reg_lock);
	spin_lock_irqsave(&g->sched_lock, flags);
	if (inst->sched_slot >= 0) {
		now = ktime_get_ns();
		cgpu_sched_fill(g, inst, &a->sched);
		a->last_second_used_ns = cgs_last_second_used(&g->sched, inst->sched_slot, now);
		a->age_ns = now - g->slots[inst->sched_slot].joined_at;
		err = 0;
	}
	spin_unlock_irqrestore(&g->sched_lock, flags);
	return err;
}

/* The answer is proven writable before anything changes, as for CHARGE. */
long cgpu_sched_ioctl(struct cgpu_attachment *att, unsigned int cmd, void __user *arg)
{
	struct cgpu_sched_stat st;
	struct cgpu_slice a;
	struct cgpu_slot *s;
	int err;

	if (cmd == CGPU_IOC_SCHED_STAT) {
		if (copy_from_user(&st, arg, sizeof(st)))
			return -EFAULT;
		if (st.abi_version != CGPU_ABI_VERSION)
			return -EINVAL;
		if (st.slot >= att->n)
			return -ERANGE;
		err = cgpu_sched_stat(&att->slots[st.slot], &st);
		if (err)
			return err;
		return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
	}
	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.abi_version != CGPU_ABI_VERSION)
		return -EINVAL;
	if (cmd == CGPU_IOC_SLICE_END ? a.flags & ~CGPU_SLICE_MORE :
	    a.flags || !a.timeout_ms || a.timeout_ms > CGPU_SLICE_TIMEOUT_MAX_MS)
		return -EINVAL;
	s = cgpu_slot_of(att, a.gpu);
	if (!s)
		return -ERANGE;
	if (copy_to_user(arg, &a, sizeof(a)))
		return -EFAULT;
	if (cmd == CGPU_IOC_SLICE_WAIT)
		err = cgpu_slice_wait(s, &a);
	else if (cmd == CGPU_IOC_SLICE_END)
		err = cgpu_slice_end(s, &a);
	else
		err = cgpu_slice_watch(s, &a);
	if (err)
		return err;
	return copy_to_user(arg, &a, sizeof(a)) ? -EFAULT : 0;
}

/*
 * The status page, read-only. Not inherited across fork (VM_DONTCOPY): a mapping
 * holds its file open, and a child must not keep its parent's charges and slice
 * alive after the parent is gone.
 */
int cgpu_sched_mmap(struct vm_area_struct *vma)
{
	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
	cgpu_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	cgpu_vm_flags_clear(vma, VM_MAYWRITE);
	return vm_insert_page(vma, vma->vm_start, virt_to_page(cgpu.status));
}
