// SPDX-License-Identifier: GPL-2.0
/*
 * The /proc/cgpu_km files (SPEC.md, docs/contracts.md): each one's reader and writer.
 * Values are checked by lib/rules.c under the lock that makes them current. A
 * scheduling setting is applied to the GPU's scheduler (slices.c) under the same
 * reg_lock before it is stored (registry.c, cgpu_gpu_setting), so what procfs shows
 * is what the scheduler uses.
 */
#include <linux/seq_file.h>
#include <linux/stat.h>
#include "nodes.h"
#include "lib/rules.h"

#define RO 0444
#define RW 0644
#define ADMIN 0600

static const char cgpu_usage[] =
	"usage: one command per write:\n"
	"  add <gpu> <id> [memsize=<bytes>] [weight=<n>] [highprio=0|1] [uuid=GPU-<uuid>]\n"
	"  del <gpu> <id>\n"
	"  bind <gpu> <id> <pid>   the container is the cgroup task <pid> is in\n"
	"<id>: a container id, 12 to 64 lowercase hex digits (named by its first 12)\n"
	"memsize defaults to default_memsize (refused if 0), weight to 1 (0 when no weight\n"
	"is free), highprio to 0\n"
	"errors: EINVAL malformed, ENODEV no such GPU, EEXIST duplicate, ENOENT unknown id,\n"
	"ENOSPC weight past max_inst or max_inst instances reached; bind: ESRCH no such\n"
	"task, EINVAL task in the root cgroup, EEXIST cgroup bound to another container\n";

static int cgpu_read_u32(const u32 *field, u64 *v)
{
	mutex_lock(&cgpu.reg_lock);
	*v = *field;
	mutex_unlock(&cgpu.reg_lock);
	return 0;
}


/* Top level */

static int default_memsize_get(void *obj, u64 *v)
{
	mutex_lock(&cgpu.reg_lock);
	*v = cgpu.default_memsize;
	mutex_unlock(&cgpu.reg_lock);
	return 0;
}

static int default_memsize_set(void *obj, u64 v)
{
	int err = cgpu_errno(cgpu_check_default_memsize(v));

	if (err)
		return err;
	mutex_lock(&cgpu.reg_lock);
	err = cgpu_tree_writable();
	if (!err)
		cgpu.default_memsize = v;
	mutex_unlock(&cgpu.reg_lock);
	return err;
}

static int inst_ctl_show(struct seq_file *m, void *obj)
{
	seq_puts(m, cgpu_usage);
	return 0;
}

static int inst_ctl_write(void *obj, const char *buf, size_t len)
{
	return cgpu_inst_ctl(buf, len);
}

static int upgrade_show(struct seq_file *m, void *obj)
{
	cgpu_upgrade_show(m);
	return 0;
}

static int upgrade_write(void *obj, const char *buf, size_t len)
{
	return cgpu_upgrade_write(buf, len);
}

static int version_show(struct seq_file *m, void *obj)
{
	seq_puts(m, CGPU_KM_VERSION "\n");
	return 0;
}

const struct cgpu_node_desc cgpu_top_nodes[CGPU_TOP_NODES] = {
	{ .name = "default_memsize", .mode = RW,
	  .get = default_memsize_get, .set = default_memsize_set },
	{ .name = "inst_ctl", .mode = RW, .show = inst_ctl_show, .write = inst_ctl_write },
	{ .name = "upgrade", .mode = ADMIN, .admin_only = true, .show = upgrade_show,
	  .write = upgrade_write },
	{ .name = "version", .mode = RO, .show = version_show },
};

/* Per GPU */

static int free_weight_get(void *obj, u64 *v)
{
	struct cgpu_gpu *g = obj;

	mutex_lock(&cgpu.reg_lock);
	*v = g->max_inst - g->weight_used;
	mutex_unlock(&cgpu.reg_lock);
	return 0;
}

static int major_get(void *obj, u64 *v)
{
	*v = cgpu.major;
	return 0;
}

static int gpu_set(struct cgpu_gpu *g, enum cgpu_gpu_key key, u64 v)
{
	int err;

	mutex_lock(&cgpu.reg_lock);
	err = cgpu_tree_writable();
	if (!err)
		err = cgpu_gpu_setting(g, key, v);
	mutex_unlock(&cgpu.reg_lock);
	return err;
}

static int max_inst_get(void *obj, u64 *v)
{
	return cgpu_read_u32(&((struct cgpu_gpu *)obj)->max_inst, v);
}

static int max_inst_set(void *obj, u64 v)
{
	return gpu_set(obj, CGPU_KEY_MAX_INST, v);
}

static int policy_get(void *obj, u64 *v)
{
	return cgpu_read_u32(&((struct cgpu_gpu *)obj)->policy, v);
}

static int policy_set(void *obj, u64 v)
{
	return gpu_set(obj, CGPU_KEY_POLICY, v);
}

static int prio_ratio_get(void *obj, u64 *v)
{
	return cgpu_read_u32(&((struct cgpu_gpu *)obj)->prio_ratio, v);
}

static int prio_ratio_set(void *obj, u64 v)
{
	return gpu_set(obj, CGPU_KEY_PRIO_RATIO, v);
}

const struct cgpu_node_desc cgpu_gpu_nodes[CGPU_GPU_NODES] = {
	{ .name = "free_weight", .mode = RO, .get = free_weight_get },
	{ .name = "major", .mode = RO, .get = major_get },
	{ .name = "max_inst", .mode = RW, .get = max_inst_get, .set = max_inst_set },
	{ .name = "policy", .mode = RW, .get = policy_get, .set = policy_set },
	{ .name = "prio_ratio", .mode = RW, .get = prio_ratio_get, .set = prio_ratio_set },
};

/* Per instance */

static int highprio_get(void *obj, u64 *v)
{
	return cgpu_read_u32(&((struct cgpu_inst *)obj)->highprio, v);
}

/* A deleted instance (on its way out of procfs) has left the scheduler: ENOENT. */
static int highprio_set(void *obj, u64 v)
{
	struct cgpu_inst *inst = obj;
	int err = cgpu_errno(cgpu_check_flag(v));

	if (err)
		return err;
	mutex_lock(&cgpu.reg_lock);
	err = cgpu_tree_writable();
	if (!err)
		err = cgpu_sched_set_highprio(inst, (u32)v);
	if (!err)
		inst->highprio = (u32)v;
	mutex_unlock(&cgpu.reg_lock);
	return err;
}

static int id_show(struct seq_file *m, void *obj)
{
	seq_printf(m, "%s\n", ((struct cgpu_inst *)obj)->id);
	return 0;
}

static int memsize_get(void *obj, u64 *v)
{
	u64 used;

	cgpu_ledger_read(obj, &used, v);
	return 0;
}

/* Under reg_lock only for the state: the ledger has its own lock. */
static int memsize_set(void *obj, u64 v)
{
	int err;

	mutex_lock(&cgpu.reg_lock);
	err = cgpu_tree_writable();
	if (!err)
		err = cgpu_ledger_set_memsize(obj, v);
	mutex_unlock(&cgpu.reg_lock);
	return err;
}

static int meminfo_show(struct seq_file *m, void *obj)
{
	cgpu_ledger_show(m, obj);
	return 0;
}

static int weight_get(void *obj, u64 *v)
{
	return cgpu_read_u32(&((struct cgpu_inst *)obj)->weight, v);
}

static int weight_set(void *obj, u64 v)
{
	struct cgpu_inst *inst = obj;
	struct cgpu_gpu *g = inst->gpu;
	enum cgpu_rc rc;
	int err;

	mutex_lock(&cgpu.reg_lock);
	rc = cgpu_check_weight(v, inst->weight, g->weight_used, g->max_inst);
	err = cgpu_errno(rc);
	/* Deleted and on its way out of procfs: its weight left the GPU's sum already. */
	if (!inst->listed)
		err = -ENOENT;
	if (!err)
		err = cgpu_tree_writable();
	if (!err)
		err = cgpu_sched_set_weight(inst, (u32)v);
	if (!err) {
		g->weight_used = g->weight_used - inst->weight + (u32)v;
		inst->weight = (u32)v;
	}
	mutex_unlock(&cgpu.reg_lock);
	return err;
}

const struct cgpu_node_desc cgpu_inst_nodes[CGPU_INST_NODES] = {
	{ .name = "highprio", .mode = RW, .inst_scoped = true,
	  .get = highprio_get, .set = highprio_set },
	{ .name = "id", .mode = RO, .inst_scoped = true, .show = id_show },
	{ .name = "memsize", .mode = RW, .inst_scoped = true, .get = memsize_get, .set = memsize_set },
	{ .name = "meminfo", .mode = RO, .inst_scoped = true, .show = meminfo_show },
	{ .name = "weight", .mode = RW, .inst_scoped = true, .get = weight_get, .set = weight_set },
};
