// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/cgpu: the ioctl ABI of uapi/cgpu_ioctl.h. Any process may open it; ATTACH binds
 * the file to the caller's own container, found from its cgroup, and every later call
 * acts on that container only. INST_STAT alone needs no attachment: it is the host
 * administrator's view of every instance (docker cgpu stat). Closing the file releases what it charged and its part
 * in the compute scheduler (slices.c), which also serves the status page's mmap.
 * During a hot update (upgrade.c) poll() tells attached processes to hand their
 * charges over (HANDOVER) and close, and no file opens until the update is over.
 */
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include "cgpu.h"
#include "compat.h"
#include "lib/instctl.h"

struct cgpu_file {
	struct mutex attach_lock;		/* serialises ATTACH on this file */
	struct cgpu_attachment *att;		/* NULL until attached; then fixed */
};

static dev_t cgpu_devt;
static struct cdev cgpu_cdev;
static struct class *cgpu_class;

/*
 * Counted before the state is read, so that once a freeze has set it the count of
 * open files only goes down: the update waits for it to reach 0.
 */
static int cgpu_open(struct inode *inode, struct file *file)
{
	struct cgpu_file *f;

	atomic_inc(&cgpu.nfiles);
	if (READ_ONCE(cgpu.state) != CGPU_RUNNING) {
		atomic_dec(&cgpu.nfiles);
		return -EAGAIN;
	}
	f = cgpu_zalloc(sizeof(*f));
	if (!f) {
		atomic_dec(&cgpu.nfiles);
		return -ENOMEM;
	}
	mutex_init(&f->attach_lock);
	file->private_data = f;
	return 0;
}

static int cgpu_release(struct inode *inode, struct file *file)
{
	struct cgpu_file *f = file->private_data;

	if (f->att) {
		unsigned int i;

		for (i = 0; i < f->att->n; i++)
			cgpu_sched_detach(&f->att->slots[i]);
		cgpu_detach(f->att);
		cgpu_free(f->att);
		atomic_dec(&cgpu.nattached);
	}
	mutex_destroy(&f->attach_lock);
	cgpu_free(f);
	atomic_dec(&cgpu.nfiles);
	return 0;
}

static long cgpu_ioc_attach(struct cgpu_file *f, void __user *arg)
{
	struct cgpu_attachment *att;
	struct cgpu_attach a;
	int err;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.abi_version != CGPU_ABI_VERSION || a.flags != 0)
		return -EINVAL;
	att = cgpu_zalloc(sizeof(*att));
	if (!att)
		return -ENOMEM;
	mutex_lock(&f->attach_lock);
	err = f->att ? -EBUSY : cgpu_attach(att);
	if (!err) {
		memset(a.id, 0, sizeof(a.id));
		memcpy(a.id, att->id, CGPU_ID_LEN);
		a.ngpus = att->n;
		a.reserved = 0;
		/* Answer first: a caller that cannot take the answer stays unattached. */
		if (copy_to_user(arg, &a, sizeof(a))) {
			cgpu_detach(att);
			err = -EFAULT;
		}
	}
	if (!err) {
		atomic_inc(&cgpu.nattached);
		smp_store_release(&f->att, att);	/* the slots before the pointer */
	}
	mutex_unlock(&f->attach_lock);
	if (err)
		cgpu_free(att);
	return err;
}

static long cgpu_ioc_query(struct cgpu_attachment *att, void __user *arg)
{
	struct cgpu_query q;
	struct cgpu_inst *inst;

	if (copy_from_user(&q, arg, sizeof(q)))
		return -EFAULT;
	if (q.abi_version != CGPU_ABI_VERSION)
		return -EINVAL;
	if (q.slot >= att->n)
		return -ERANGE;
	inst = att->slots[q.slot].inst;
	q.gpu = inst->gpu->index;
	mutex_lock(&cgpu.reg_lock);
	q.flags = (inst->highprio ? CGPU_QUERY_HIGHPRIO : 0) |
		  (READ_ONCE(cgpu.driver_files) ? CGPU_QUERY_DRIVER_CHARGED : 0);
	q.weight = inst->weight;
	q.sched_id = inst->sched_id;
	mutex_unlock(&cgpu.reg_lock);
	memcpy(q.uuid, inst->uuid, sizeof(q.uuid));
	cgpu_ledger_read(inst, &q.used, &q.memsize);
	return copy_to_user(arg, &q, sizeof(q)) ? -EFAULT : 0;
}

static long cgpu_ioc_charge(struct cgpu_attachment *att, void __user *arg, bool charge)
{
	struct cgpu_charge c;
	struct cgpu_slot *s;
	int err;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	if (c.abi_version != CGPU_ABI_VERSION)
		return -EINVAL;
	s = cgpu_slot_of(att, c.gpu);
	if (!s)
		return -ERANGE;
	/* Prove the answer can be written before the ledger changes. */
	if (copy_to_user(arg, &c, sizeof(c)))
		return -EFAULT;
	if (charge)
		err = cgpu_ledger_charge(s, c.bytes, &c.used, &c.memsize);
	else
		err = cgpu_ledger_uncharge(s, c.bytes, &c.used, &c.memsize);
	if (err)
		return err;
	if (copy_to_user(arg, &c, sizeof(c))) {
		/*
		 * Unmapped meanwhile by another thread: a charge is undone (even if a
		 * HANDOVER moved it into the reservation since), an uncharge stands.
		 */
		if (charge)
			cgpu_ledger_undo_charge(s, c.bytes);
		return -EFAULT;
	}
	return 0;
}

/*
 * INST_STAT, for the host: the instance is looked up here under reg_lock, and its
 * figures are the scheduler's (cgpu_sched_inst_stat).
 */
static long cgpu_ioc_inst_stat(struct file *file, void __user *arg)
{
	char id[CGPU_ID_LEN + 1];
	struct cgpu_inst_stat a;
	struct cgpu_inst *inst;
	int err;

	if (!cgpu_host_admin(file))
		return -EPERM;
	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.abi_version != CGPU_ABI_VERSION)
		return -EINVAL;
	if (a.gpu >= cgpu.ngpus)
		return -ENODEV;
	if (strnlen(a.id, sizeof(a.id)) != CGPU_ID_LEN ||
	    cgpu_parse_container_id(a.id, CGPU_ID_LEN, id) != CGPU_OK)
		return -EINVAL;
	if (copy_to_user(arg, &a, sizeof(a)))
		return -EFAULT;
	memset(&a.sched, 0, sizeof(a.sched));
	a.sched.abi_version = CGPU_ABI_VERSION;
	mutex_lock(&cgpu.reg_lock);
	inst = cgpu_find(&cgpu.gpus[a.gpu], id);
	err = inst ? cgpu_sched_inst_stat(inst, &a) : -ENOENT;
	mutex_unlock(&cgpu.reg_lock);
	if (err)
		return err;
	return copy_to_user(arg, &a, sizeof(a)) ? -EFAULT : 0;
}

/*
 * Numbers of another type or function are not ours (ENOTTY); one of our functions
 * with another size or direction is a malformed call (EINVAL).
 */
static long cgpu_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	static const unsigned int known[] = {
		CGPU_IOC_NOP, CGPU_IOC_ATTACH, CGPU_IOC_QUERY, CGPU_IOC_CHARGE, CGPU_IOC_UNCHARGE,
		CGPU_IOC_SLICE_WAIT, CGPU_IOC_SLICE_END, CGPU_IOC_SLICE_WATCH, CGPU_IOC_SCHED_STAT,
		CGPU_IOC_HANDOVER, CGPU_IOC_INST_STAT,
	};
	struct cgpu_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct cgpu_attachment *att;

	if (_IOC_TYPE(cmd) != CGPU_IOC_MAGIC || _IOC_NR(cmd) >= ARRAY_SIZE(known))
		return -ENOTTY;
	if (cmd != known[_IOC_NR(cmd)])
		return -EINVAL;
	if (cmd == CGPU_IOC_NOP)
		return 0;
	if (cmd == CGPU_IOC_ATTACH)
		return cgpu_ioc_attach(f, uarg);
	if (cmd == CGPU_IOC_INST_STAT)
		return cgpu_ioc_inst_stat(file, uarg);
	att = smp_load_acquire(&f->att);
	if (!att)
		return -ENOTCONN;
	if (cmd == CGPU_IOC_QUERY)
		return cgpu_ioc_query(att, uarg);
	if (cmd == CGPU_IOC_CHARGE || cmd == CGPU_IOC_UNCHARGE)
		return cgpu_ioc_charge(att, uarg, cmd == CGPU_IOC_CHARGE);
	if (cmd == CGPU_IOC_HANDOVER)
		return cgpu_handover(att);
	return cgpu_sched_ioctl(att, cmd, uarg);
}

/* EPOLLPRI while frozen: an attached process hands its charges over and closes. */
static __poll_t cgpu_poll(struct file *file, poll_table *wait)
{
	poll_wait(file, &cgpu.upd_wq, wait);
	return READ_ONCE(cgpu.state) == CGPU_FROZEN ? EPOLLPRI : 0;
}

/* The status page, for attached files only: it is of no use to anyone else. */
static int cgpu_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct cgpu_file *f = file->private_data;

	return smp_load_acquire(&f->att) ? cgpu_sched_mmap(vma) : -ENOTCONN;
}

static const struct file_operations cgpu_fops = {
	.owner = THIS_MODULE,
	.open = cgpu_open,
	.release = cgpu_release,
	.unlocked_ioctl = cgpu_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = cgpu_mmap,
	.poll = cgpu_poll,
	.llseek = noop_llseek,
};

/*
 * Any process may open /dev/cgpu: it only ever acts on the caller's own container, or,
 * for the host's administrator alone, reads the scheduler's figures (INST_STAT).
 */
static char *cgpu_devnode(cgpu_devnode_dev *dev, umode_t *mode)
{
	if (mode)
		*mode = 0666;
	return NULL;
}

/*
 * The number first, so procfs can show it: major 0 is any free number. A hot update asks
 * for the old module's, because running containers reach /dev/cgpu through a device
 * node and a cgroup rule of that number. Nothing can open the device yet.
 */
int cgpu_chardev_init(unsigned int major)
{
	int err;

	if (major) {
		cgpu_devt = MKDEV(major, 0);
		err = register_chrdev_region(cgpu_devt, 1, "cgpu");
		if (err)
			pr_err("cgpu_km: /dev/cgpu major %u is taken: %d\n", major, err);
	} else {
		err = alloc_chrdev_region(&cgpu_devt, 0, 1, "cgpu");
	}
	if (!err)
		cgpu.major = MAJOR(cgpu_devt);
	return err;
}

/*
 * The device goes live: the last step of init, since a file opened once it can be
 * opened must find everything in place, and nothing after this may fail the load.
 */
int cgpu_chardev_publish(void)
{
	struct device *dev;
	int err;

	cgpu_class = cgpu_class_create("cgpu");
	if (IS_ERR(cgpu_class)) {
		err = PTR_ERR(cgpu_class);
		cgpu_class = NULL;
		return err;
	}
	cgpu_class->devnode = cgpu_devnode;
	cdev_init(&cgpu_cdev, &cgpu_fops);
	cgpu_cdev.owner = THIS_MODULE;
	err = cdev_add(&cgpu_cdev, cgpu_devt, 1);
	if (err)
		goto destroy_class;
	dev = device_create(cgpu_class, NULL, cgpu_devt, NULL, "cgpu");
	if (IS_ERR(dev)) {
		err = PTR_ERR(dev);
		goto del_cdev;
	}
	return 0;
del_cdev:
	cdev_del(&cgpu_cdev);
destroy_class:
	class_destroy(cgpu_class);
	cgpu_class = NULL;
	return err;
}

/* Open files pin the module, so none is open by the time this runs at unload. */
void cgpu_chardev_unpublish(void)
{
	device_destroy(cgpu_class, cgpu_devt);
	cdev_del(&cgpu_cdev);
	class_destroy(cgpu_class);
	cgpu_class = NULL;
}

void cgpu_chardev_exit(void)
{
	unregister_chrdev_region(cgpu_devt, 1);
}
