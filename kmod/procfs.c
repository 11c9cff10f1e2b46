// SPDX-License-Identifier: GPL-2.0
/*
 * The /proc/cgpu_km tree: one generic file type driven by the descriptors in nodes.c.
 * Reads go through seq_file; a write is one whole value in one write() at offset 0,
 * by a caller with CAP_SYS_ADMIN in the initial user namespace.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/user_namespace.h>
#include "compat.h"
#include "nodes.h"
#include "lib/instctl.h"
#include "lib/num.h"

static struct proc_dir_entry *cgpu_root;
static struct cgpu_node cgpu_top[CGPU_TOP_NODES];

static int cgpu_node_show(struct seq_file *m, void *unused)
{
	struct cgpu_node *n = m->private;
	u64 v;
	int err;

	if (n->desc->show)
		return n->desc->show(m, n->obj);
	err = n->desc->get(n->obj, &v);
	if (!err)
		seq_printf(m, "%llu\n", v);
	return err;
}

/*
 * A process in a container sees its own container's files and no other's; one in no
 * container (the host, or anyone who only named a cgroup like a container) sees them
 * only as the host's administrator. The opener's view is checked once, at open.
 */
static int cgpu_may_read(struct file *file, struct cgpu_inst *inst)
{
	const struct cgpu_inst *me;
	bool ok;

	mutex_lock(&cgpu.reg_lock);
	me = cgpu_caller_inst();
	ok = me ? !strcmp(me->id, inst->id) : cgpu_host_admin(file);
	mutex_unlock(&cgpu.reg_lock);
	return ok ? 0 : -EACCES;
}

static int cgpu_node_open(struct inode *inode, struct file *file)
{
	struct cgpu_node *n = pde_data(inode);

	if (n->desc->inst_scoped) {
		int err = cgpu_may_read(file, n->obj);

		if (err)
			return err;
	}
	/* Every container's ids and charges: the host's administrator's alone. */
	if (n->desc->admin_only && !cgpu_host_admin(file))
		return -EACCES;
	return single_open(file, cgpu_node_show, n);
}

static ssize_t cgpu_node_write(struct file *file, const char __user *ubuf, size_t count,
			       loff_t *ppos)
{
	struct cgpu_node *n = pde_data(file_inode(file));
	char *buf;
	u64 v;
	int err;

	if (!n->desc->set && !n->desc->write)
		return -EACCES;	/* read-only, even for root */
	if (!cgpu_host_admin(file))
		return -EPERM;
	if (*ppos != 0 || count > CGPU_CMD_MAX_LEN)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	if (n->desc->write)
		err = n->desc->write(n->obj, buf, count);
	else if (cgpu_parse_value(buf, count, &v) != CGPU_OK)
		err = -EINVAL;
	else
		err = n->desc->set(n->obj, v);
	kfree(buf);
	if (err)
		return err;
	*ppos += count;	/* so a continuation on this file is refused, not misread */
	return count;
}

static const struct proc_ops cgpu_node_ops = {
	.proc_open = cgpu_node_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = cgpu_node_write,
};

static int cgpu_create_nodes(struct proc_dir_entry *dir, struct cgpu_node *nodes,
			     const struct cgpu_node_desc *descs, unsigned int count, void *obj)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		nodes[i].desc = &descs[i];
		nodes[i].obj = obj;
		if (!proc_create_data(descs[i].name, descs[i].mode, dir, &cgpu_node_ops,
				      &nodes[i]))
			return -ENOMEM;
	}
	return 0;
}

int cgpu_procfs_init(void)
{
	unsigned int i;
	int err;

	cgpu_root = proc_mkdir("cgpu_km", NULL);
	if (!cgpu_root)
		return -ENOMEM;
	err = cgpu_create_nodes(cgpu_root, cgpu_top, cgpu_top_nodes, CGPU_TOP_NODES, NULL);
	for (i = 0; !err && i < cgpu.ngpus; i++) {
		struct cgpu_gpu *g = &cgpu.gpus[i];
		char name[12];

		snprintf(name, sizeof(name), "%u", i);
		g->dir = proc_mkdir(name, cgpu_root);
		err = g->dir ? cgpu_create_nodes(g->dir, g->nodes, cgpu_gpu_nodes,
						 CGPU_GPU_NODES, g) : -ENOMEM;
	}
	if (err)
		cgpu_procfs_exit();
	return err;
}

/* Removes the whole tree; waits for running handlers and revokes open files. */
void cgpu_procfs_exit(void)
{
	unsigned int i;
	struct cgpu_inst *inst;

	proc_remove(cgpu_root);
	cgpu_root = NULL;
	mutex_lock(&cgpu.reg_lock);
	for (i = 0; i < cgpu.ngpus; i++) {
		cgpu.gpus[i].dir = NULL;
		list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
			inst->dir = NULL;	/* gone with the tree */
	}
	mutex_unlock(&cgpu.reg_lock);
}

static int cgpu_procfs_add_inst(struct cgpu_inst *inst)
{
	struct proc_dir_entry *dir;
	int err;

	dir = proc_mkdir(inst->id, inst->gpu->dir);
	if (!dir)
		return -ENOMEM;
	err = cgpu_create_nodes(dir, inst->nodes, cgpu_inst_nodes, CGPU_INST_NODES, inst);
	if (err) {
		proc_remove(dir);
		return err;
	}
	inst->dir = dir;
	return 0;
}

static void cgpu_procfs_del_inst(struct cgpu_inst *inst)
{
	proc_remove(inst->dir);
	inst->dir = NULL;
}

const struct cgpu_inst_dir_ops cgpu_procfs_inst_dir = {
	.add = cgpu_procfs_add_inst,
	.del = cgpu_procfs_del_inst,
};
