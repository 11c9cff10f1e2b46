// SPDX-License-Identifier: GPL-2.0
/*
 * cgpu_km: per-container GPU memory budgets and the control tree for sharing one
 * NVIDIA GPU between containers (an open reproduction of Alibaba Cloud's cGPU).
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include "cgpu.h"

static unsigned int ngpus = 1;
module_param(ngpus, uint, 0444);
MODULE_PARM_DESC(ngpus, "number of GPUs on the node, 1.." __stringify(CGPU_MAX_GPUS));

static bool selftest;
module_param(selftest, bool, 0444);
MODULE_PARM_DESC(selftest, "run the parser and ledger self-test at load");

static unsigned int major;
module_param(major, uint, 0444);
MODULE_PARM_DESC(major, "/dev/cgpu's major number, 0: any free one (a hot update keeps the old module's)");

static int __init cgpu_init(void)
{
	int err;

	if (ngpus < 1 || ngpus > CGPU_MAX_GPUS) {
		pr_err("cgpu_km: ngpus=%u is outside 1..%d\n", ngpus, CGPU_MAX_GPUS);
		return -EINVAL;
	}
	if (selftest) {
		err = cgpu_selftest();
		if (err)
			return err;
	}
	err = cgpu_upgrade_init();
	if (err)
		return err;
	err = cgpu_sched_init(ngpus);
	if (err)
		return err;
	err = cgpu_registry_init(ngpus, &cgpu_procfs_inst_dir);
	if (err)
		goto sched;
	err = cgpu_chardev_init(major);
	if (err)
		goto registry;
	err = cgpu_procfs_init();
	if (err)
		goto chardev;
	err = cgpu_nvhook_init();
	if (err)
		goto procfs;
#ifdef CGPU_FAULT_INIT
	/* make FAULT=init: a module that fails at the last step, for the update's tests. */
	pr_err("cgpu_km %s: built with FAULT=init: failing the load on purpose\n", CGPU_KM_VERSION);
	err = -EIO;
	goto nvhook;
#endif
	err = cgpu_chardev_publish();
	if (err)
		goto nvhook;
	pr_info("cgpu_km %s: %u GPU(s), /dev/cgpu major %u%s\n", CGPU_KM_VERSION, ngpus,
		cgpu.major, cgpu.state == CGPU_IMPORTING ?
		": loaded for a hot update, waiting for the old module's state" : "");
	return 0;
nvhook:
	cgpu_nvhook_exit();
procfs:
	cgpu_procfs_exit();
chardev:
	cgpu_chardev_exit();
registry:
	cgpu_registry_exit();
sched:
	cgpu_sched_exit();
	return err;
}

static void __exit cgpu_exit(void)
{
	/*
	 * A tree command already running finishes first (ctl_mutex); any after this one
	 * finds exiting set and leaves the tree alone, so nothing adds to it while it goes.
	 */
	mutex_lock(&cgpu.ctl_mutex);
	cgpu.exiting = true;
	mutex_unlock(&cgpu.ctl_mutex);
	/* First: no driver call is charged once the tree and ledgers start going. */
	cgpu_nvhook_exit();
	cgpu_procfs_exit();
	cgpu_chardev_unpublish();
	cgpu_chardev_exit();
	cgpu_upgrade_exit();
	cgpu_registry_exit();
	cgpu_sched_exit();
	/* Open files pin the module, so by now every object must be gone. */
	WARN(atomic_read(&cgpu.live), "cgpu_km: %d object(s) leaked\n",
	     atomic_read(&cgpu.live));
	pr_info("cgpu_km: unloaded\n");
}

module_init(cgpu_init);
module_exit(cgpu_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("cgpu: per-container GPU memory limits and compute shares");
MODULE_VERSION(CGPU_KM_VERSION);
