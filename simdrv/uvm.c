// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * /dev/nvidia-uvm and /dev/nvidia-uvm-tools, as NVIDIA's nvidia-uvm module numbers them
 * (kernel-open/nvidia-uvm/uvm.c, uvm_tools.c): a character region named "nvidia-uvm" of
 * a dynamic major, minors 0 and 1. So that containers get the nodes a real node gives
 * them, and a program can open and initialize the device as libcuda does at cuInit. It
 * lives in the stand-in's one module (the real one is a module of its own, nvidia_uvm:
 * docs/sim.md says what that changes). Served: UVM_INITIALIZE and UVM_DEINITIALIZE on
 * /dev/nvidia-uvm; every other command is -EINVAL, nvidia-uvm's answer to a command it
 * does not know (its test commands off); the tools node opens and serves nothing.
 */
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "lib/abi.h"
#include "uvm.h"

static dev_t uvm_base;
static struct cdev uvm_cdev, tools_cdev;
static struct class *uvm_cls;

/* One open /dev/nvidia-uvm: its va_space is made by UVM_INITIALIZE with its flags. */
struct uvm_file {
	struct mutex lock;
	bool initialized;
	u64 flags;
};

static int uvm_open(struct inode *inode, struct file *filp)
{
	struct uvm_file *u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);

	if (!u)
		return -ENOMEM;
	mutex_init(&u->lock);
	filp->private_data = u;
	return 0;
}

static int uvm_release(struct inode *inode, struct file *filp)
{
	struct uvm_file *u = filp->private_data;

	mutex_destroy(&u->lock);
	kfree(u);
	return 0;
}

/* uvm_api_initialize: the first call makes the va_space; a later one must bring the same flags. */
static long uvm_initialize(struct uvm_file *u, void __user *arg)
{
	struct sd_uvm_initialize p;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	mutex_lock(&u->lock);
	if (!u->initialized) {
		u->initialized = true;
		u->flags = p.flags;
		p.rmStatus = SD_NV_OK;
	} else {
		p.rmStatus = p.flags == u->flags ? SD_NV_OK : SD_NV_ERR_INVALID_ARGUMENT;
	}
	mutex_unlock(&u->lock);
	return copy_to_user(arg, &p, sizeof(p)) ? -EFAULT : 0;
}

static long uvm_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case SD_UVM_DEINITIALIZE:
		return 0;
	case SD_UVM_INITIALIZE:
		return uvm_initialize(filp->private_data, (void __user *)arg);
	default:
		return -EINVAL;
	}
}

static const struct file_operations uvm_fops = {
	.owner = THIS_MODULE,
	.open = uvm_open,
	.release = uvm_release,
	.unlocked_ioctl = uvm_ioctl,
	.compat_ioctl = uvm_ioctl,
	.llseek = noop_llseek,
};

static long tools_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	return -EINVAL;
}

static const struct file_operations tools_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = tools_ioctl,
	.compat_ioctl = tools_ioctl,
	.llseek = noop_llseek,
};

static void uvm_nodes_destroy(void)
{
	device_destroy(uvm_cls, MKDEV(MAJOR(uvm_base), SD_UVM_MINOR));
	device_destroy(uvm_cls, MKDEV(MAJOR(uvm_base), SD_UVM_TOOLS_MINOR));
}

int simdrv_uvm_init(struct class *cls)
{
	struct device *d;
	int rc;

	uvm_cls = cls;
	rc = alloc_chrdev_region(&uvm_base, 0, SD_UVM_MINORS, SD_UVM_DEVICE_NAME);
	if (rc)
		return rc;
	cdev_init(&uvm_cdev, &uvm_fops);
	uvm_cdev.owner = THIS_MODULE;
	rc = cdev_add(&uvm_cdev, MKDEV(MAJOR(uvm_base), SD_UVM_MINOR), 1);
	if (rc)
		goto unregister;
	cdev_init(&tools_cdev, &tools_fops);
	tools_cdev.owner = THIS_MODULE;
	rc = cdev_add(&tools_cdev, MKDEV(MAJOR(uvm_base), SD_UVM_TOOLS_MINOR), 1);
	if (rc)
		goto del_uvm;
	d = device_create(cls, NULL, MKDEV(MAJOR(uvm_base), SD_UVM_MINOR), NULL, "nvidia-uvm");
	if (IS_ERR(d)) {
		rc = PTR_ERR(d);
		goto del_tools;
	}
	d = device_create(cls, NULL, MKDEV(MAJOR(uvm_base), SD_UVM_TOOLS_MINOR), NULL, "nvidia-uvm-tools");
	if (IS_ERR(d)) {
		rc = PTR_ERR(d);
		goto nodes;
	}
	return 0;
nodes:
	uvm_nodes_destroy();
del_tools:
	cdev_del(&tools_cdev);
del_uvm:
	cdev_del(&uvm_cdev);
unregister:
	unregister_chrdev_region(uvm_base, SD_UVM_MINORS);
	return rc;
}

void simdrv_uvm_exit(void)
{
	uvm_nodes_destroy();
	cdev_del(&tools_cdev);
	cdev_del(&uvm_cdev);
	unregister_chrdev_region(uvm_base, SD_UVM_MINORS);
}
