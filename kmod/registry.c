// SPDX-License-Identifier: GPL-2.0
/*
 * The instance registry: inst_ctl add/del/bind, lookup for attach, lifetime, unload
 * pin, and the GPU settings (shared by the tree and the hot update's import).
 */
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/string.h>
#include "cgpu.h"
#include "lib/instctl.h"
#include "lib/rules.h"

static const struct cgpu_inst_dir_ops *inst_dir;

int cgpu_registry_init(unsigned int ngpus, const struct cgpu_inst_dir_ops *dir_ops)
{
	unsigned int i;

	inst_dir = dir_ops;
	cgpu.gpus = cgpu_zalloc(ngpus * sizeof(*cgpu.gpus));
	if (!cgpu.gpus)
		return -ENOMEM;
	cgpu.ngpus = ngpus;
	for (i = 0; i < ngpus; i++) {
		struct cgpu_gpu *g = &cgpu.gpus[i];

		g->index = i;
		g->max_inst = CGPU_MAX_INST_DEFAULT;
		g->policy = CGPU_POLICY_DEFAULT;
		g->prio_ratio = CGPU_PRIO_RATIO_DEFAULT;
		INIT_LIST_HEAD(&g->insts);
		cgpu_sched_gpu_init(g);
	}
	return 0;
}

/* Every file has let go of it; reservations no process took back go with it. */
static void cgpu_inst_free(struct kref *ref)
{
	struct cgpu_inst *inst = container_of(ref, struct cgpu_inst, ref);

	cgpu_ledger_reclaim(inst, NULL, NULL);
	cgpu_bind_release(&inst->bind);
	mutex_destroy(&inst->lock);
	cgpu_free(inst);
}

static void cgpu_inst_put(struct cgpu_inst *inst)
{
	kref_put(&inst->ref, cgpu_inst_free);
}

/*
 * The driver has freed handle of client (nvhook.c): the objects of hot update
 * reservations it took with it give their bytes back, on whichever instance they are.
 */
void cgpu_give_back(u32 client, u32 handle)
{
	struct cgpu_inst *inst;
	unsigned int i;

	mutex_lock(&cgpu.reg_lock);
	for (i = 0; i < cgpu.ngpus; i++)
		list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
			cgpu_ledger_give_back(inst, client, handle);
	mutex_unlock(&cgpu.reg_lock);
}

struct cgpu_inst *cgpu_find(struct cgpu_gpu *g, const char *id)
{
	struct cgpu_inst *inst;

	lockdep_assert_held(&cgpu.reg_lock);
	list_for_each_entry(inst, &g->insts, link)
		if (!strcmp(inst->id, id))
			return inst;
	return NULL;
}

int cgpu_gpu_setting(struct cgpu_gpu *g, enum cgpu_gpu_key key, u64 v)
{
	int err;

	lockdep_assert_held(&cgpu.reg_lock);
	switch (key) {
	case CGPU_KEY_MAX_INST:
		err = cgpu_errno(cgpu_check_max_inst(v, g->ninst, g->weight_used));
		if (!err)
			err = cgpu_sched_set_max_inst(g, (u32)v);
		if (!err)
			g->max_inst = (u32)v;
		return err;
	case CGPU_KEY_POLICY:
		err = cgpu_errno(cgpu_check_policy(v));
		if (!err)
			err = cgpu_sched_set_policy(g, (u32)v);
		if (!err)
			g->policy = (u32)v;
		return err;
	default:
		err = cgpu_errno(cgpu_check_prio_ratio(v));
		if (!err)
			err = cgpu_sched_set_prio_ratio(g, (u32)v);
		if (!err)
			g->prio_ratio = (u32)v;
		return err;
	}
}

/*
 * Instances hold one module reference between them, so rmmod says "in use" instead
 * of dropping every container's limits; `echo 1 > upgrade` lifts it for an unload
 * that deletes them, and so does a hot update (frozen, or importing), whose state
 * lives on in the other module.
 */
int cgpu_update_pin(void)
{
	bool want = cgpu.ninst > 0 && !cgpu.unpin && cgpu.state == CGPU_RUNNING;

	lockdep_assert_held(&cgpu.ctl_mutex);
	if (want == cgpu.pinned)
		return 0;
	if (want) {
		if (!try_module_get(THIS_MODULE))
			return -EBUSY;	/* already unloading */
		pr_info("cgpu_km: instances registered: unload refused until they are deleted (or /proc/cgpu_km/upgrade is 1)\n");
	} else {
		module_put(THIS_MODULE);
	}
	cgpu.pinned = want;
	return 0;
}

/* Takes inst off its GPU and out of procfs and drops the registry's reference. */
static void cgpu_unregister(struct cgpu_inst *inst)
{
	struct cgpu_gpu *g = inst->gpu;
	struct cgpu_bound_set *spare = cgpu_bound_alloc();

	lockdep_assert_held(&cgpu.ctl_mutex);
	mutex_lock(&cgpu.reg_lock);
	cgpu_sched_leave(inst);
	list_del(&inst->link);
	inst->listed = false;
	cgpu_bound_publish(spare);
	g->ninst--;
	g->weight_used -= inst->weight;
	cgpu.ninst--;
	mutex_unlock(&cgpu.reg_lock);
	/* Outside reg_lock: removal waits for node handlers, which take it. */
	inst_dir->del(inst);
	cgpu_inst_put(inst);
}

/* Lists inst on its GPU if the registry allows it; reg_lock held. */
static int cgpu_register(struct cgpu_inst *inst, const struct cgpu_cmd *cmd)
{
	struct cgpu_gpu *g = inst->gpu;
	u64 weight = cmd->has & CGPU_HAS_WEIGHT ? cmd->weight :
		     cgpu_default_weight(g->weight_used, g->max_inst);
	enum cgpu_rc rc;
	int err;

	lockdep_assert_held(&cgpu.reg_lock);
	if (cgpu_find(g, inst->id))
		return -EEXIST;
	inst->memsize = cmd->has & CGPU_HAS_MEMSIZE ? cmd->memsize : cgpu.default_memsize;
	if (inst->memsize == 0)
		return -EINVAL;	/* no memsize given and no default_memsize set */
	rc = cgpu_check_add(weight, g->ninst, g->weight_used, g->max_inst);
	if (rc)
		return cgpu_errno(rc);
	inst->weight = (u32)weight;	/* at most max_inst now */
	err = cgpu_sched_join(inst);
	if (err)
		return err;
	list_add_tail(&inst->link, &g->insts);
	inst->listed = true;
	g->ninst++;
	g->weight_used += inst->weight;
	cgpu.ninst++;
	return 0;
}

int cgpu_inst_add(const struct cgpu_cmd *cmd)
{
	struct cgpu_inst *inst;
	int err;

	inst = cgpu_zalloc(sizeof(*inst));
	if (!inst)
		return -ENOMEM;
	kref_init(&inst->ref);
	inst->gpu = &cgpu.gpus[cmd->gpu];
	strscpy(inst->id, cmd->id, sizeof(inst->id));
	if (cmd->has & CGPU_HAS_UUID)
		memcpy(inst->uuid, cmd->uuid, sizeof(inst->uuid));
	inst->highprio = cmd->highprio;
	inst->sched_slot = CGS_NONE;
	cgpu_ledger_init(inst);

	mutex_lock(&cgpu.reg_lock);
	err = cgpu_register(inst, cmd);
	mutex_unlock(&cgpu.reg_lock);
	if (err) {
		mutex_destroy(&inst->lock);
		cgpu_free(inst);
		return err;
	}
	err = cgpu_update_pin();
	if (!err)
		err = inst_dir->add(inst);
	if (err) {
		cgpu_unregister(inst);
		cgpu_update_pin();
	}
	return err;
}

static int cgpu_inst_del(const struct cgpu_cmd *cmd)
{
	struct cgpu_inst *inst;

	mutex_lock(&cgpu.reg_lock);
	inst = cgpu_find(&cgpu.gpus[cmd->gpu], cmd->id);
	mutex_unlock(&cgpu.reg_lock);
	if (!inst)
		return -ENOENT;
	cgpu_unregister(inst);
	return cgpu_update_pin();
}

/*
 * bind: the instance's container is the cgroup that task pid (in the writer's pid
 * namespace) is in now, as the kernel finds it. Binding again moves it. ENOENT: no such
 * instance; ESRCH: no such task; EINVAL: the task is in no container; EEXIST: another
 * container is bound to that cgroup (two could not tell their processes apart).
 */
int cgpu_inst_bind(const struct cgpu_cmd *cmd)
{
	struct cgpu_bind b = { 0 }, old;
	struct cgpu_bound_set *spare;
	struct cgpu_inst *inst, *o;
	struct pid *pid;
	unsigned int i;
	int err;

	pid = find_get_pid((pid_t)cmd->pid);
	if (!pid)
		return -ESRCH;
	err = cgpu_bind_task(pid, &b);
	put_pid(pid);
	if (err)
		return err;
	spare = cgpu_bound_alloc();
	mutex_lock(&cgpu.reg_lock);
	inst = cgpu_find(&cgpu.gpus[cmd->gpu], cmd->id);
	if (!inst)
		err = -ENOENT;
	for (i = 0; !err && i < cgpu.ngpus; i++)
		list_for_each_entry(o, &cgpu.gpus[i].insts, link)
			if (o->bind.cgrp == b.cgrp && strcmp(o->id, inst->id))
				err = -EEXIST;
	if (!err) {
		old = inst->bind;
		inst->bind = b;
		b = old;
		cgpu_bound_publish(spare);
	} else {
		cgpu_free(spare);
	}
	mutex_unlock(&cgpu.reg_lock);
	/* A reader of the set published before may still look at the old cgroup: cgroups
	 * are freed an RCU grace period after their last reference goes. */
	cgpu_bind_release(&b);
	return err;
}

int cgpu_inst_ctl(const char *buf, size_t len)
{
	struct cgpu_cmd cmd;
	int err;

	if (cgpu_parse_cmd(buf, len, &cmd) != CGPU_OK)
		return -EINVAL;
	if (cmd.gpu >= cgpu.ngpus)
		return -ENODEV;
	mutex_lock(&cgpu.ctl_mutex);
	/* An instance added or deleted now would be missing from the handed-over state. */
	if (cgpu.exiting)
		err = -ENODEV;
	else if (cgpu.state != CGPU_RUNNING)
		err = -EBUSY;
	else if (cmd.op == CGPU_CMD_ADD)
		err = cgpu_inst_add(&cmd);
	else if (cmd.op == CGPU_CMD_DEL)
		err = cgpu_inst_del(&cmd);
	else
		err = cgpu_inst_bind(&cmd);
	mutex_unlock(&cgpu.ctl_mutex);
	return err;
}

/*
 * Binds att to the caller's container: every instance of it whose cgroup holds the
 * caller, in GPU order. ENOENT: the caller is in no container; EMFILE: one of them has
 * CGPU_INST_FILES_MAX files attached already.
 *
 * The file takes back the process's reservation of a hot update unless it leaves it
 * (nvhook.c's holders), or cgpu_km charges at the NVIDIA driver: then the reservation
 * is driver memory that the process's driver files hold, which this file's release
 * does not free, so it stays the process's until the process holds no driver file
 * (upgrade.c's reclaim). Taken by a file the tenant opens and closes at will, it went
 * with that file while the driver still held the memory.
 */
int cgpu_attach(struct cgpu_attachment *att)
{
	struct cgpu_proc *spare[CGPU_MAX_GPUS] = { NULL };
	const struct cgpu_inst *me;
	pid_t pid = task_tgid_nr(current);
	u64 start = current->group_leader->start_time;
	bool take = !att->leaves_reservation && !READ_ONCE(cgpu.driver_files);
	unsigned int i;
	int err = 0;

	/* One process entry per GPU the container could be on, allocated before any lock. */
	for (i = 0; i < cgpu.ngpus && !err; i++) {
		spare[i] = cgpu_zalloc(sizeof(*spare[i]));
		if (!spare[i])
			err = -ENOMEM;
	}
	att->n = 0;
	mutex_lock(&cgpu.reg_lock);
	me = err ? NULL : cgpu_caller_inst();
	/* Frozen or importing: the caller attaches once the update is over. */
	if (!err && cgpu.state != CGPU_RUNNING)
		err = -EAGAIN;
	else if (!err && !me)
		err = -ENOENT;
	else if (!err)
		strscpy(att->id, me->id, sizeof(att->id));
	for (i = 0; i < cgpu.ngpus && !err; i++) {
		struct cgpu_inst *inst = cgpu_find(&cgpu.gpus[i], att->id);
		struct cgpu_slot *s = &att->slots[att->n];

		if (!inst || !cgpu_bind_contains(&inst->bind, current))
			continue;
		s->inst = inst;
		err = cgpu_ledger_link(s, pid, start, &spare[i], take);
		if (!err) {
			kref_get(&inst->ref);
			att->n++;
		}
	}
	mutex_unlock(&cgpu.reg_lock);
	if (err)
		cgpu_detach(att);
	for (i = 0; i < cgpu.ngpus; i++)
		cgpu_free(spare[i]);
	return err;
}

void cgpu_detach(struct cgpu_attachment *att)
{
	unsigned int i;

	for (i = 0; i < att->n; i++) {
		cgpu_ledger_unlink(&att->slots[i]);
		cgpu_inst_put(att->slots[i].inst);
	}
	att->n = 0;
}

void cgpu_registry_exit(void)
{
	unsigned int i, n = cgpu.ninst;

	mutex_lock(&cgpu.ctl_mutex);
	for (i = 0; i < cgpu.ngpus; i++)
		while (!list_empty(&cgpu.gpus[i].insts))
			cgpu_unregister(list_first_entry(&cgpu.gpus[i].insts,
							 struct cgpu_inst, link));
	mutex_unlock(&cgpu.ctl_mutex);
	if (n)
		pr_info("cgpu_km: unloading: deleted %u instance(s) (%s)\n", n,
			cgpu.state == CGPU_RUNNING ? "upgrade was 1" : "a hot update was under way");
	for (i = 0; i < cgpu.ngpus; i++)
		cgpu_sched_gpu_exit(&cgpu.gpus[i]);
	cgpu_free(cgpu.gpus);
	cgpu.gpus = NULL;
}
