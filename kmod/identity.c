// SPDX-License-Identifier: GPL-2.0
/*
 * Who the caller is: the container whose cgroup holds the caller's, in the kernel's own
 * cgroup tree. The runtime names a task of each container (inst_ctl bind: the
 * container's init, once runc has made its cgroup) and the kernel takes that task's
 * cgroup itself, so all it trusts is a pid written by the host's administrator. Names
 * play no part: a cgroup called docker-<id>.scope anywhere else is not that container,
 * and a process outside every bound cgroup is in no container.
 */
#include <linux/cgroup.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include "cgpu.h"

/* t's cgroup in the hierarchy of ssid (-1: v2). RCU held. */
static __always_inline struct cgroup *cgpu_task_cgroup(struct task_struct *t, int ssid)
{
	return ssid < 0 ? task_dfl_cgroup(t) : task_css(t, ssid)->cgroup;
}

/* Whether t is in cgrp or below it, in the hierarchy of ssid. RCU held; inline for the
 * ftrace callback (cgpu_maybe_contained), which may call nothing traced. */
static __always_inline bool cgpu_task_in(struct task_struct *t, struct cgroup *cgrp, int ssid)
{
	return cgroup_is_descendant(cgpu_task_cgroup(t, ssid), cgrp);
}

/*
 * The cgroup that is t's container: in the hierarchy of the memory controller, where
 * every container runtime puts each container (v2; on a v1 or hybrid host the memory
 * controller's v1 hierarchy, the unified one of a hybrid host being systemd's alone).
 * A task at the root there (a v1 hierarchy mounted by hand) is taken in the first
 * hierarchy where it is not at the root. NULL: at the root of every one, which is the
 * host itself. RCU held.
 */
static struct cgroup *cgpu_container_cgroup(struct task_struct *t, int *ssid)
{
	struct cgroup *c = task_dfl_cgroup(t);
	int i;

	*ssid = -1;
#ifdef CONFIG_MEMCG
	{
		struct cgroup *mem = task_css(t, memory_cgrp_id)->cgroup;

		if (mem->root != &cgrp_dfl_root && cgroup_parent(mem)) {
			*ssid = memory_cgrp_id;
			return mem;
		}
	}
#endif
	if (cgroup_parent(c))
		return c;
	for (i = 0; i < CGROUP_SUBSYS_COUNT; i++) {
		c = task_css(t, i)->cgroup;
		if (cgroup_parent(c)) {
			*ssid = i;
			return c;
		}
	}
	return NULL;
}

/*
 * b := the container of the task pid names, with a reference on its cgroup and on pid.
 * ESRCH: no such task (or exiting); EINVAL: it is in no container (the root cgroup).
 */
int cgpu_bind_task(struct pid *pid, struct cgpu_bind *b)
{
	struct task_struct *t;
	struct cgroup *c;
	int err = -ESRCH;

	rcu_read_lock();
	t = pid_task(pid, PIDTYPE_PID);
	if (t && !(t->flags & PF_EXITING)) {
		c = cgpu_container_cgroup(t, &b->ssid);
		if (!c)
			err = -EINVAL;
		else if (cgroup_tryget(c))
			err = 0;
		b->cgrp = err ? NULL : c;
	}
	rcu_read_unlock();
	if (!err)
		b->pid = get_pid(pid);
	return err;
}

void cgpu_bind_release(struct cgpu_bind *b)
{
	if (b->cgrp)
		cgroup_put(b->cgrp);
	put_pid(b->pid);
	b->cgrp = NULL;
	b->pid = NULL;
}

bool cgpu_bind_contains(const struct cgpu_bind *b, struct task_struct *t)
{
	bool in;

	if (!b->cgrp)
		return false;
	rcu_read_lock();
	in = cgpu_task_in(t, b->cgrp, b->ssid);
	rcu_read_unlock();
	return in;
}

/*
 * The instance whose container the caller is in, NULL if none. Containers nest
 * (Docker in Docker): the innermost one, the deepest bound cgroup, is the caller's. At
 * most ngpus * max_inst instances to look at.
 */
const struct cgpu_inst *cgpu_caller_inst(void)
{
	const struct cgpu_inst *inst, *best = NULL;
	unsigned int i;

	lockdep_assert_held(&cgpu.reg_lock);
	for (i = 0; i < cgpu.ngpus; i++)
		list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
			if (cgpu_bind_contains(&inst->bind, current) &&
			    (!best || inst->bind.cgrp->level > best->bind.cgrp->level))
				best = inst;
	return best;
}

struct cgpu_bound_set cgpu_bound_unknown;

/* Taken before reg_lock: room for every instance the registry can list. NULL: none. */
struct cgpu_bound_set *cgpu_bound_alloc(void)
{
	struct cgpu_bound_set *set;

	return cgpu_zalloc(struct_size(set, b, cgpu.ngpus * CGPU_MAX_INST_MAX));
}

/*
 * After any change to the listed instances' bindings. spare (cgpu_bound_alloc) is
 * published or freed; without it, and with anything bound, the set is unknown.
 */
void cgpu_bound_publish(struct cgpu_bound_set *spare)
{
	struct cgpu_bound_set *set = spare, *old;
	const struct cgpu_inst *inst;
	unsigned int i, n = 0;

	lockdep_assert_held(&cgpu.reg_lock);
	for (i = 0; i < cgpu.ngpus; i++)
		list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
			n += inst->bind.cgrp != NULL;
	/* The registry lists at most max_inst (<= CGPU_MAX_INST_MAX) instances a GPU. */
	if (!n)
		set = NULL;
	else if (!spare || WARN_ON_ONCE(n > cgpu.ngpus * CGPU_MAX_INST_MAX))
		set = &cgpu_bound_unknown;
	else
		for (i = 0; i < cgpu.ngpus; i++)
			list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
				if (inst->bind.cgrp) {
					set->b[set->n].cgrp = inst->bind.cgrp;
					set->b[set->n++].ssid = inst->bind.ssid;
				}
	if (spare && set != spare)
		cgpu_free(spare);
	old = rcu_replace_pointer(cgpu.bound, set, lockdep_is_held(&cgpu.reg_lock));
	if (old && old != &cgpu_bound_unknown)
		cgpu_free_rcu(old, rcu);
}

/*
 * Whether the caller may be in a container: false only when it is in no cgroup of a
 * listed instance. For the ftrace callback: no lock, no sleep, nothing traced. A
 * container is bound before anything of it runs (the runtime binds at create), so a
 * set published a moment late never lets a container's call pass as the host's.
 */
bool notrace cgpu_maybe_contained(void)
{
	const struct cgpu_bound_set *set;
	bool in = false;
	unsigned int i;

	rcu_read_lock_sched_notrace();
	set = rcu_dereference_sched(cgpu.bound);
	if (set == &cgpu_bound_unknown)
		in = true;
	for (i = 0; set && !in && i < set->n; i++)
		in = cgpu_task_in(current, set->b[i].cgrp, set->b[i].ssid);
	rcu_read_unlock_sched_notrace();
	return in;
}
