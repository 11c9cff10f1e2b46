// SPDX-License-Identifier: GPL-2.0
/*
 * Hot update (docs/upgrade.md): the running module hands its state over to the next
 * one through /proc/cgpu_km/upgrade while containers keep running.
 *
 *   old module  `freeze`: nothing changes any more (chardev.c, memledger.c, slices.c and
 *               the tree answer EAGAIN or EBUSY); attached processes are told (the
 *               status page, poll), hand their charges over as reservations
 *               (HANDOVER) and close. `cat upgrade` is then the state, in exactly
 *               the lines the next module reads. rmmod is allowed while frozen;
 *               `thaw` calls the update off instead.
 *   new module  loaded with handover=1 (importing: /dev/cgpu does not open); the old
 *               state is written in, one line per write; `commit`. Processes attach
 *               again and take their reservations back (memledger.c).
 * Reservations nobody takes back within reclaim_s of the commit (or thaw) belonged
 * to processes that died meanwhile, and are released; but under enforce=1 a process
 * that still holds a file of the NVIDIA driver or of nvidia-uvm may hold the driver
 * memory its reservation counts without ever attaching again (a static program that
 * allocates no more), or a driver file it held at the commit or at a later look is still
 * open (in a child that inherited it), so its reservation is kept, and looked at again
 * every reclaim_s until none is.
 */
#include <linux/cgroup.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include "cgpu.h"
#include "lib/rules.h"
#include "lib/upgradecmd.h"

static bool handover;
module_param(handover, bool, 0444);
MODULE_PARM_DESC(handover, "load for a hot update: wait for the old module's state in /proc/cgpu_km/upgrade");

static unsigned int reclaim_s = 30;
module_param(reclaim_s, uint, 0444);
MODULE_PARM_DESC(reclaim_s, "how long a hot update keeps what a process held for it to attach again, 1..3600 s (default 30)");

MODULE_INFO(cgpu_state_format, __stringify(CGPU_STATE_FORMAT));
MODULE_INFO(cgpu_state_reads, __stringify(CGPU_STATE_FORMAT_MIN) "-" __stringify(CGPU_STATE_FORMAT));
MODULE_INFO(cgpu_abi, __stringify(CGPU_ABI_MIN) "-" __stringify(CGPU_ABI_VERSION));

static const char *const cgpu_state_name[] = {
	[CGPU_RUNNING] = "running", [CGPU_FROZEN] = "frozen", [CGPU_IMPORTING] = "importing",
};

/* Releases the reservations left once processes had their time to attach again. */
static void cgpu_reclaim_work(struct work_struct *w)
{
	const struct cgpu_driver_files *df = READ_ONCE(cgpu.driver_files);
	bool (*keep)(pid_t pid, u64 start) = df ? df->holds : NULL;
	bool more = df && df->let_go();
	struct cgpu_inst *inst;
	unsigned int i, n = 0, kept = 0;

	mutex_lock(&cgpu.reg_lock);
	/* Frozen again meanwhile: they are part of that update's state. */
	for (i = 0; i < cgpu.ngpus && cgpu.state == CGPU_RUNNING; i++)
		list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
			n += cgpu_ledger_reclaim(inst, keep, &kept);
	if (kept || more)
		mod_delayed_work(system_wq, &cgpu.reclaim, (unsigned long)reclaim_s * HZ);
	mutex_unlock(&cgpu.reg_lock);
	if (n)
		pr_info("cgpu_km: released %u reservation(s) of processes that did not attach again within %u s\n",
			n, reclaim_s);
}

int cgpu_upgrade_init(void)
{
	if (reclaim_s < 1 || reclaim_s > 3600) {
		pr_err("cgpu_km: reclaim_s=%u is out of range (1..3600)\n", reclaim_s);
		return -EINVAL;
	}
	init_waitqueue_head(&cgpu.upd_wq);
	INIT_DELAYED_WORK(&cgpu.reclaim, cgpu_reclaim_work);
	cgpu.state = handover ? CGPU_IMPORTING : CGPU_RUNNING;
	return 0;
}

void cgpu_upgrade_exit(void)
{
	cancel_delayed_work_sync(&cgpu.reclaim);
}

/*
 * ctl_mutex held. The go words, the status page and the pin follow the new state; a
 * failed re-pin means the module is being unloaded already.
 */
static int cgpu_set_state(enum cgpu_state st)
{
	lockdep_assert_held(&cgpu.ctl_mutex);
	mutex_lock(&cgpu.reg_lock);
	cgpu.state = st;
	mutex_unlock(&cgpu.reg_lock);
	WRITE_ONCE(cgpu.status->upgrade, st == CGPU_FROZEN);
	cgpu_sched_republish();
	wake_up_all(&cgpu.upd_wq);
	return cgpu_update_pin();
}

static void cgpu_count_reserved(struct cgpu_reserved *r)
{
	struct cgpu_inst *inst;
	unsigned int i;

	lockdep_assert_held(&cgpu.reg_lock);
	for (i = 0; i < cgpu.ngpus; i++)
		list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
			cgpu_ledger_reserved(inst, r);
}

static int cgpu_freeze(const char *to)
{
	int err;

	if (cgpu.state != CGPU_RUNNING)
		return -EBUSY;
	strscpy(cgpu.upd_peer, to, sizeof(cgpu.upd_peer));
	/* Reservations left from an earlier update are part of this one's state. */
	cancel_delayed_work_sync(&cgpu.reclaim);
	err = cgpu_set_state(CGPU_FROZEN);
	pr_info("cgpu_km %s: frozen for a hot update to %s: %d file(s) of /dev/cgpu open\n",
		CGPU_KM_VERSION, to[0] ? to : "another version", atomic_read(&cgpu.nfiles));
	return err;
}

/* Running again, on the old module or the new one: processes come back. */
static int cgpu_resume(const char *what)
{
	const struct cgpu_driver_files *df = READ_ONCE(cgpu.driver_files);
	struct cgpu_reserved r = {};
	struct cgpu_inst *inst;
	unsigned int i;
	int err;

	if (cgpu.state == CGPU_FROZEN)
		snprintf(cgpu.last_update, sizeof(cgpu.last_update), "to %s called off",
			 cgpu.upd_peer[0] ? cgpu.upd_peer : "?");
	else
		snprintf(cgpu.last_update, sizeof(cgpu.last_update), "from %s committed",
			 cgpu.upd_peer[0] ? cgpu.upd_peer : "?");
	cgpu.upd_peer[0] = '\0';
	cgpu.import_format = 0;
	err = cgpu_set_state(CGPU_RUNNING);
	mutex_lock(&cgpu.reg_lock);
	for (i = 0; i < cgpu.ngpus; i++)
		list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
			cgpu_ledger_seal(inst);
	cgpu_count_reserved(&r);
	/*
	 * Under enforce=1, the driver files each reservation's process holds now are
	 * remembered at once: one that a child inherited keeps the reservation after the
	 * process exits, until it is released (cgpu.driver_files->holds).
	 */
	if (df)
		for (i = 0; i < cgpu.ngpus; i++)
			list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
				cgpu_ledger_look(inst, df->holds);
	mutex_unlock(&cgpu.reg_lock);
	mod_delayed_work(system_wq, &cgpu.reclaim, (unsigned long)reclaim_s * HZ);
	pr_info("cgpu_km %s: %s: %u instance(s); %u reservation(s) of %llu bytes and %u channels wait up to %u s for their processes\n",
		CGPU_KM_VERSION, what, cgpu.ninst, r.n, r.bytes, r.channels, reclaim_s);
	return err;
}

static int cgpu_import_gpu(const struct cgpu_upd *u)
{
	struct cgpu_gpu *g = &cgpu.gpus[u->gpu];
	int err;

	mutex_lock(&cgpu.reg_lock);
	/* The one setting that depends on the GPU's instances: checked before any changes. */
	err = cgpu_errno(cgpu_check_max_inst(u->max_inst, g->ninst, g->weight_used));
	if (!err)
		err = cgpu_gpu_setting(g, CGPU_KEY_MAX_INST, u->max_inst);
	if (!err)
		err = cgpu_gpu_setting(g, CGPU_KEY_POLICY, u->policy);
	if (!err)
		err = cgpu_gpu_setting(g, CGPU_KEY_PRIO_RATIO, u->prio_ratio);
	mutex_unlock(&cgpu.reg_lock);
	return err;
}

static int cgpu_import_charge(const struct cgpu_upd *u)
{
	struct cgpu_proc *spare;
	struct cgpu_inst *inst;
	int err;

	/* No module wrote keep=1 before format 4. */
	if (u->keep && cgpu.import_format < 4)
		return -EINVAL;
	spare = cgpu_zalloc(sizeof(*spare));
	if (!spare)
		return -ENOMEM;
	mutex_lock(&cgpu.reg_lock);
	inst = cgpu_find(&cgpu.gpus[u->gpu], u->id);
	err = inst ? cgpu_ledger_import(inst, (pid_t)u->pid, u->start, u->bytes,
					 (unsigned int)u->channels, u->keep, &spare) :
		     -ENOENT;
	mutex_unlock(&cgpu.reg_lock);
	cgpu_free(spare);
	return err;
}

static int cgpu_import_obj(const struct cgpu_upd *u)
{
	struct cgpu_inst *inst;
	int err;

	/* No module wrote objects before format 4, nor mappings and shared memory before 5. */
	if (cgpu.import_format < 4 || (cgpu.import_format < 5 && (u->map || u->same)))
		return -EINVAL;
	mutex_lock(&cgpu.reg_lock);
	inst = cgpu_find(&cgpu.gpus[u->gpu], u->id);
	/* A mapping this module cannot follow is not kept: its memory gives nothing back. */
	err = inst ? cgpu_ledger_import_obj(inst, u, !u->map || READ_ONCE(cgpu.maps_named)) :
		     -ENOENT;
	mutex_unlock(&cgpu.reg_lock);
	return err;
}

/* One line of the old module's state; importing, `format` first. ctl_mutex held. */
static int cgpu_import(const struct cgpu_upd *u)
{
	if (cgpu.state != CGPU_IMPORTING)
		return -EBUSY;
	if (u->op == CGPU_UPD_FORMAT) {
		if (u->value < CGPU_STATE_FORMAT_MIN || u->value > CGPU_STATE_FORMAT) {
			pr_notice("cgpu_km %s: cannot import state format %llu (reads %d-%d)\n",
				  CGPU_KM_VERSION, u->value, CGPU_STATE_FORMAT_MIN,
				  CGPU_STATE_FORMAT);
			return -EPROTO;
		}
		cgpu.import_format = (u32)u->value;
		return 0;
	}
	if (!cgpu.import_format)
		return -EPROTO;
	switch (u->op) {
	case CGPU_UPD_FROM:
		strscpy(cgpu.upd_peer, u->version, sizeof(cgpu.upd_peer));
		return 0;
	case CGPU_UPD_DEFAULT_MEMSIZE:
		mutex_lock(&cgpu.reg_lock);
		cgpu.default_memsize = u->value;
		mutex_unlock(&cgpu.reg_lock);
		return 0;
	case CGPU_UPD_GPU:
		return u->gpu < cgpu.ngpus ? cgpu_import_gpu(u) : -ENODEV;
	case CGPU_UPD_ADD:
		return u->add.gpu < cgpu.ngpus ? cgpu_inst_add(&u->add) : -ENODEV;
	case CGPU_UPD_BIND:
		return u->add.gpu < cgpu.ngpus ? cgpu_inst_bind(&u->add) : -ENODEV;
	case CGPU_UPD_OBJ:
		return u->gpu < cgpu.ngpus ? cgpu_import_obj(u) : -ENODEV;
	default:
		return u->gpu < cgpu.ngpus ? cgpu_import_charge(u) : -ENODEV;
	}
}

static int cgpu_set_unpin(bool on)
{
	bool old = cgpu.unpin;
	int err;

	cgpu.unpin = on;
	err = cgpu_update_pin();
	if (err)
		cgpu.unpin = old;
	return err;
}

int cgpu_upgrade_write(const char *buf, size_t len)
{
	struct cgpu_upd *u = kzalloc(sizeof(*u), GFP_KERNEL);
	int err;

	if (!u)
		return -ENOMEM;
	if (cgpu_parse_upgrade(buf, len, u) != CGPU_OK) {
		kfree(u);
		return -EINVAL;
	}
	mutex_lock(&cgpu.ctl_mutex);
	if (cgpu.exiting) {	/* unload has begun: the tree is going */
		err = -ENODEV;
		goto out;
	}
	switch (u->op) {
	case CGPU_UPD_UNPIN:
		err = cgpu_set_unpin(u->value);
		break;
	case CGPU_UPD_FREEZE:
		err = cgpu_freeze(u->version);
		break;
	case CGPU_UPD_THAW:
		err = cgpu.state == CGPU_FROZEN ? cgpu_resume("hot update called off, running again") :
						  -EBUSY;
		break;
	case CGPU_UPD_COMMIT:
		err = cgpu.state == CGPU_IMPORTING ? cgpu_resume("hot update committed") : -EBUSY;
		break;
	default:
		err = cgpu_import(u);
		break;
	}
out:
	mutex_unlock(&cgpu.ctl_mutex);
	kfree(u);
	return err;
}

/*
 * The container as the next module finds it again: by the task it was bound by, while
 * that task lives (its pid cannot have been given to another then). Its pid as the
 * host sees it, which is where the update's tool writes the state from.
 */
static void cgpu_dump_bind(struct seq_file *m, struct cgpu_inst *inst)
{
	pid_t nr = 0;

	if (!inst->bind.pid)
		return;
	rcu_read_lock();
	if (pid_task(inst->bind.pid, PIDTYPE_PID))
		nr = pid_nr(inst->bind.pid);
	rcu_read_unlock();
	if (nr)
		seq_printf(m, "bind %u %s %d\n", inst->gpu->index, inst->id, nr);
}

/* Whether an instance listed before inst (GPU by GPU) is bound to the same cgroup. */
static bool cgpu_cgroup_shown(const struct cgpu_inst *inst)
{
	const struct cgpu_inst *prev;
	unsigned int i;

	for (i = 0; i <= inst->gpu->index; i++)
		list_for_each_entry(prev, &cgpu.gpus[i].insts, link) {
			if (prev == inst)
				return false;
			if (prev->bind.cgrp == inst->bind.cgrp)
				return true;
		}
	return false;
}

/*
 * The cgroups the instances are bound to, once each (a container has one for all its
 * GPUs; a nested one lies inside another's), as the host's tree names them, escaped so
 * that no name can make a line: the update's tool freezes them while no module charges
 * the driver's allocations (docs/upgrade.md). Status lines, not state: the next module
 * takes the cgroups again from the bind lines.
 */
static void cgpu_show_cgroups(struct seq_file *m)
{
	struct cgpu_inst *inst;
	unsigned int i;
	char *buf = kmalloc(PATH_MAX, GFP_KERNEL);

	for (i = 0; i < cgpu.ngpus; i++)
		list_for_each_entry(inst, &cgpu.gpus[i].insts, link) {
			if (!inst->bind.cgrp || cgpu_cgroup_shown(inst))
				continue;
			seq_printf(m, "container_cgroup: %s ", inst->bind.ssid < 0 ? "v2" : "v1");
			if (buf && cgroup_path(inst->bind.cgrp, buf, PATH_MAX) >= 0)
				seq_escape(m, buf, " \t\n\\");
			else
				seq_putc(m, '?');
			seq_putc(m, '\n');
		}
	kfree(buf);
}

/* The state to hand over, as the lines cgpu_import reads. ctl_mutex and reg_lock held. */
static void cgpu_dump(struct seq_file *m)
{
	struct cgpu_inst *inst;
	unsigned int i;
	u64 used, memsize;

	seq_printf(m, "format %d\nfrom %s\ndefault_memsize %llu\n", CGPU_STATE_FORMAT,
		   CGPU_KM_VERSION, cgpu.default_memsize);
	for (i = 0; i < cgpu.ngpus; i++) {
		struct cgpu_gpu *g = &cgpu.gpus[i];

		seq_printf(m, "gpu %u max_inst=%u policy=%u prio_ratio=%u\n", i, g->max_inst,
			   g->policy, g->prio_ratio);
		list_for_each_entry(inst, &g->insts, link) {
			cgpu_ledger_read(inst, &used, &memsize);
			seq_printf(m, "add %u %s memsize=%llu weight=%u highprio=%u", i, inst->id,
				   memsize, inst->weight, inst->highprio);
			if (memchr_inv(inst->uuid, 0, sizeof(inst->uuid)))
				seq_printf(m, " uuid=GPU-%pUb", inst->uuid);
			seq_putc(m, '\n');
			cgpu_dump_bind(m, inst);
		}
	}
	for (i = 0; i < cgpu.ngpus; i++)
		list_for_each_entry(inst, &cgpu.gpus[i].insts, link)
			cgpu_ledger_dump(m, inst);
	/* After every charge line: an object's process is in the state before it. */
	if (cgpu.driver_objs_dump)
		cgpu.driver_objs_dump(m);
}

void cgpu_upgrade_show(struct seq_file *m)
{
	struct cgpu_reserved r = {};

	mutex_lock(&cgpu.ctl_mutex);
	mutex_lock(&cgpu.reg_lock);
	cgpu_count_reserved(&r);
	seq_printf(m, "state: %s\nversion: %s\n", cgpu_state_name[cgpu.state], CGPU_KM_VERSION);
	/* The versions involved, old -> new, "?" for one not (yet) named. */
	if (cgpu.state == CGPU_FROZEN)
		seq_printf(m, "update: %s -> %s\n", CGPU_KM_VERSION,
			   cgpu.upd_peer[0] ? cgpu.upd_peer : "?");
	else if (cgpu.state == CGPU_IMPORTING)
		seq_printf(m, "update: %s -> %s\n", cgpu.upd_peer[0] ? cgpu.upd_peer : "?",
			   CGPU_KM_VERSION);
	else
		seq_puts(m, "update: none\n");
	seq_printf(m, "last_update: %s\nstate_format: %d\nreads_formats: %d-%d\n",
		   cgpu.last_update[0] ? cgpu.last_update : "none", CGPU_STATE_FORMAT,
		   CGPU_STATE_FORMAT_MIN, CGPU_STATE_FORMAT);
	/* Every attached file speaks the one version ATTACH accepts. */
	seq_printf(m, "abi: %d-%d\nabi_in_use: %s\n", CGPU_ABI_MIN, CGPU_ABI_VERSION,
		   atomic_read(&cgpu.nattached) ? __stringify(CGPU_ABI_VERSION) : "none");
	seq_printf(m, "files_open: %d\nfiles_attached: %d\nreservations: %u\nreserved_bytes: %llu\nreserved_channels: %u\n",
		   atomic_read(&cgpu.nfiles), atomic_read(&cgpu.nattached), r.n, r.bytes,
		   r.channels);
	seq_printf(m, "reclaim_s: %u\nmajor: %u\nunload_deletes: %d\n", reclaim_s, cgpu.major,
		   cgpu.unpin);
	if (cgpu.state == CGPU_FROZEN) {
		cgpu_show_cgroups(m);
		cgpu_dump(m);
	}
	mutex_unlock(&cgpu.reg_lock);
	mutex_unlock(&cgpu.ctl_mutex);
}

int cgpu_handover(struct cgpu_attachment *att)
{
	unsigned int i;
	int err = 0;

	mutex_lock(&cgpu.reg_lock);
	if (cgpu.state != CGPU_FROZEN)
		err = -EALREADY;
	for (i = 0; i < att->n && !err; i++)
		cgpu_ledger_reserve(&att->slots[i]);
	mutex_unlock(&cgpu.reg_lock);
	return err;
}
