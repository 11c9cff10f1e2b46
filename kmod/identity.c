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
static struct cgroup *cgpu_task_cgroup(struct task_struct *t, int ssid)
{
	return ssid < 0 ? task_dfl_cgroup(t) : task_css(t, ssid)->cgroup;
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
	in = cgroup_is_descendant(cgpu_task_cgroup(t, b->ssid), b->cgrp);
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
