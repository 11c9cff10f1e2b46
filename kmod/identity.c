// SPDX-License-Identifier: GPL-2.0
/*
 * Who the caller is: the container id in the path of its cgroup, read from the
 * kernel's own cgroup tree (never from anything the caller says). The path is taken
 * from the hierarchy's root, not the caller's cgroup namespace, so a container in a
 * private namespace (Docker's default on cgroup v2) is still found.
 */
#include <linux/cgroup.h>
#include <linux/limits.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "cgpu.h"
#include "lib/cgroup_id.h"

static int cgpu_cgroup_id(struct cgroup *cgrp, char *buf, char *id)
{
	int n = cgroup_path(cgrp, buf, PATH_MAX);

	if (n < 0 || n >= PATH_MAX)
		return 0;
	return cgpu_cgroup_container_id(buf, n, id);
}

int cgpu_caller_container_id(char id[CGPU_FULL_ID_LEN + 1])
{
	struct cgroup *dfl;
	char *buf;
	int i, found;

	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	/* RCU keeps the cgroups and their kernfs nodes alive; the path needs no sleep. */
	rcu_read_lock();
	dfl = task_dfl_cgroup(current);
	found = cgpu_cgroup_id(dfl, buf, id);
	/* cgroup v1: each controller mounted apart has the task at its own path. */
	for (i = 0; !found && i < CGROUP_SUBSYS_COUNT; i++) {
		struct cgroup *cgrp = task_css(current, i)->cgroup;

		if (cgrp != dfl)
			found = cgpu_cgroup_id(cgrp, buf, id);
	}
	rcu_read_unlock();
	kfree(buf);
	return found;
}
