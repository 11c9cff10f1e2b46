// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * /dev/nvidia-uvm and /dev/nvidia-uvm-tools, as NVIDIA's nvidia-uvm module numbers them
 * (kernel-open/nvidia-uvm/uvm.c, uvm_tools.c): a character region named "nvidia-uvm" of
 * a dynamic major, minors 0 and 1. So that containers get the nodes a real node gives
 * them, a program can open and initialize the device as libcuda does at cuInit, and map
 * RM memory into its va_space as libcuda does with every allocation (lib/vaspace.c,
 * through nvidia.ko's nvUvmInterfaceDupMemory and nvUvmInterfaceFreeDupedHandle, as
 * nvidia-uvm does). A module of its own, nvidia-uvm.ko (nvidia_uvm), as NVIDIA's is:
 * its files are this module's, so code that tells the driver's files by their module
 * meets both names. Served on /dev/nvidia-uvm:
 * UVM_INITIALIZE, UVM_DEINITIALIZE, UVM_REGISTER_GPU, UVM_UNREGISTER_GPU,
 * UVM_CREATE_EXTERNAL_RANGE, UVM_MAP_EXTERNAL_ALLOCATION, UVM_MAP_EXTERNAL_SPARSE, UVM_FREE,
 * UVM_MAP_DYNAMIC_PARALLELISM_REGION, UVM_ALLOC_SEMAPHORE_POOL (no CPU mapping of it),
 * UVM_REGISTER_GPU_VASPACE and UVM_UNREGISTER_GPU_VASPACE (nvUvmInterfaceDupAddressSpace
 * and nvUvmInterfaceAddressSpaceDestroy), UVM_REGISTER_CHANNEL and
 * UVM_UNREGISTER_CHANNEL (nvUvmInterfaceRetainChannel and
 * nvUvmInterfaceReleaseChannel), UVM_PAGEABLE_MEM_ACCESS and UVM_MIGRATE, and its mmap,
 * which makes managed memory (lib/vaspace.c; the CPU's access to it is SIGBUS, and a
 * mapping a fork or mremap copies is left dead, as nvidia-uvm leaves a forked one); every other
 * command is -EINVAL, nvidia-uvm's answer to a command it does not know (its test
 * commands off); the tools node opens and serves nothing.
 */
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include "lib/abi.h"
#include "lib/vaspace.h"
#include "uvm.h"

static dev_t uvm_base;
static struct cdev uvm_cdev, tools_cdev;

/* From nvidia.ko at load (simdrv_uvm_node); nvidia.ko cannot go before this module. */
static struct simdrv_uvm_node uvm_node;

/*
 * One open /dev/nvidia-uvm: its va_space is made by UVM_INITIALIZE with its flags, for
 * the caller's mm (nvidia-uvm's va_space_mm: the only one that may map it).
 */
struct uvm_file {
	struct mutex lock;		/* all below; taken before the node's, after mmap_lock */
	bool initialized;
	struct mm_struct *mm;		/* compared, never followed */
	struct sd_va_space va;
};

static u32 va_dup(void *ctx, u32 gpu, u32 hClient, u32 hMemory, u32 *hdup, struct sd_dup_info *info)
{
	u8 mi[SD_UVM_MEMINFO_SIZE];
	int g;
	u32 st;

	st = nvUvmInterfaceDupMemory(simdrv_uvm_device(gpu), hClient, hMemory, hdup, mi);
	if (st != SD_NV_OK)
		return st;
	info->sysmem = mi[SD_UVM_MEMINFO_SYSMEM_OFF];
	info->device_descendant = mi[uvm_node.devdesc_off];
	memcpy(&info->page_size, mi + SD_UVM_MEMINFO_PAGESIZE_OFF, sizeof(info->page_size));
	memcpy(&info->size, mi + SD_UVM_MEMINFO_SIZE_OFF, sizeof(info->size));
	g = sd_gpu_of_uuid(mi + SD_UVM_MEMINFO_UUID_OFF, uvm_node.ngpus);
	info->gpu = g < 0 ? uvm_node.ngpus : g;
	return SD_NV_OK;
}

static void va_free_dup(void *ctx, u32 gpu, u32 hdup)
{
	nvUvmInterfaceFreeDupedHandle(simdrv_uvm_device(gpu), hdup);
}

static u32 va_retain(void *ctx, u32 gpu, u32 hClient, u32 hChannel, void **token)
{
	/* nvidia-uvm's UvmGpuChannelInstanceInfo: the stand-in's nvidia.ko does not fill it. */
	u64 info = 0;

	return nvUvmInterfaceRetainChannel(simdrv_uvm_device(gpu), hClient, hChannel, token, &info);
}

static void va_release(void *ctx, void *token)
{
	nvUvmInterfaceReleaseChannel(token);
}

static u32 va_dup_vaspace(void *ctx, u32 gpu, u32 hClient, u32 hVaSpace, void **token)
{
	/* nvidia-uvm's UvmGpuAddressSpaceInfo: the stand-in's nvidia.ko does not fill it. */
	u64 info = 0;

	return nvUvmInterfaceDupAddressSpace(simdrv_uvm_device(gpu), hClient, hVaSpace, token, &info);
}

static void va_destroy_vaspace(void *ctx, void *token)
{
	nvUvmInterfaceAddressSpaceDestroy(token);
}

static u32 va_tables(void *ctx, u32 gpu, u64 bytes, int take)
{
	return simdrv_uvm_tables(gpu, bytes, take);
}

static u32 va_pages(void *ctx, u32 gpu, u64 bytes, int take)
{
	return simdrv_uvm_pages(gpu, bytes, take);
}

/* The va_spaces' way to nvidia.ko; ngpus is set once at init, before any node exists. */
static struct sd_va_env va_env = {
	.tables = va_tables,
	.pages = va_pages,
	.dup = va_dup,
	.free_dup = va_free_dup,
	.retain = va_retain,
	.release = va_release,
	.dup_vaspace = va_dup_vaspace,
	.destroy_vaspace = va_destroy_vaspace,
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

/* NVIDIA's name for the file's release (uvm.c's uvm_release_entry), found by it. */
static noinline int uvm_release_entry(struct inode *inode, struct file *filp)
{
	struct uvm_file *u = filp->private_data;

	sd_va_destroy(&u->va, &va_env);
	mutex_destroy(&u->lock);
	kfree(u);
	return 0;
}

/*
 * uvm_va_space_create by NVIDIA's name and flags (uvm_va_space.c; the stand-in's
 * va_space is the file's, so va_space_ptr points at it): flags past the mask are
 * NV_ERR_INVALID_ARGUMENT, else the va_space keeps them.
 */
noinline u32 uvm_va_space_create(struct address_space *mapping, struct sd_va_space **va_space_ptr,
				 u64 flags)
{
	if (flags & ~SD_UVM_INIT_FLAGS_MASK)
		return SD_NV_ERR_INVALID_ARGUMENT;
	(*va_space_ptr)->flags = flags;
	return SD_NV_OK;
}

/* uvm_api_initialize: the first call makes the va_space; a later one must bring the same flags. */
static long uvm_initialize(struct file *filp, void __user *arg)
{
	struct uvm_file *u = filp->private_data;
	struct sd_va_space *va = &u->va;
	struct sd_uvm_initialize p;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	mutex_lock(&u->lock);
	if (!u->initialized) {
		p.rmStatus = uvm_va_space_create(filp->f_mapping, &va, p.flags);
		u->initialized = p.rmStatus == SD_NV_OK;
		u->mm = current->mm;
	} else {
		p.rmStatus = p.flags == u->va.flags ? SD_NV_OK : SD_NV_ERR_INVALID_ARGUMENT;
	}
	mutex_unlock(&u->lock);
	return copy_to_user(arg, &p, sizeof(p)) ? -EFAULT : 0;
}

/* nvidia-uvm's handlers by its names (uvm.h); the file's lock held (the stand-in's). */
noinline u32 uvm_api_map_external_sparse(struct sd_uvm_map_external_sparse *params, struct file *filp)
{
	struct uvm_file *u = filp->private_data;

	return sd_va_map_sparse(&u->va, &va_env, params);
}

noinline u32 uvm_api_free(struct sd_uvm_free *params, struct file *filp)
{
	struct uvm_file *u = filp->private_data;

	return sd_va_free(&u->va, &va_env, params->base, params->length);
}

noinline u32 uvm_api_map_dynamic_parallelism_region(struct sd_uvm_map_dp_region *params,
						    struct file *filp)
{
	struct uvm_file *u = filp->private_data;

	return sd_va_map_dp_region(&u->va, &va_env, params);
}

/* Its block: the head, perGpuAttributes[the release's UVM_MAX_GPUS], the tail. */
noinline u32 uvm_api_alloc_semaphore_pool(struct sd_uvm_pool_head *params, struct file *filp)
{
	struct uvm_file *u = filp->private_data;

	return sd_va_alloc_pool(&u->va, &va_env, params, (void *)(params + 1), uvm_node.max_gpus,
				(void *)params + SD_UVM_POOL_SIZE(uvm_node.max_gpus) -
				sizeof(struct sd_uvm_pool_tail));
}

/*
 * uvm_va_range_create_mmap by NVIDIA's name (uvm_va_range.c), called by the mmap alone:
 * the managed range of the mapping (the stand-in passes the vma where nvidia-uvm passes
 * its wrapper of it).
 */
noinline u32 uvm_va_range_create_mmap(struct sd_va_space *va_space, struct mm_struct *mm,
				      struct vm_area_struct *vma, void **out)
{
	return sd_va_create_managed(va_space, &va_env, vma->vm_start, vma->vm_end - vma->vm_start);
}

static vm_fault_t uvm_vm_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct uvm_vm_ops_disabled = {
	.fault = uvm_vm_fault,
};

/* A copy of the mapping: a split's stays, a fork's (another mm) is left dead. */
static void uvm_vm_open(struct vm_area_struct *vma)
{
	struct uvm_file *u = vma->vm_file->private_data;

	if (vma->vm_mm != u->mm)
		vma->vm_ops = &uvm_vm_ops_disabled;
}

/* The mapping, or a part of it, goes: its managed memory with it. */
static void uvm_vm_close(struct vm_area_struct *vma)
{
	struct uvm_file *u = vma->vm_file->private_data;

	mutex_lock(&u->lock);
	sd_va_unmap_managed(&u->va, &va_env, vma->vm_start, vma->vm_end - vma->vm_start);
	mutex_unlock(&u->lock);
}

static const struct vm_operations_struct uvm_vm_ops_managed = {
	.open = uvm_vm_open,
	.close = uvm_vm_close,
	.fault = uvm_vm_fault,
};

/*
 * uvm_mmap's checks in its order: an initialized file (else -EBADFD), its va_space's mm
 * (-EOPNOTSUPP), the offset equal to the address and a shared read-write mapping
 * (-EINVAL); then the managed range, its status as an errno (nv_status_to_errno:
 * NV_ERR_UVM_ADDRESS_IN_USE is -EADDRINUSE). No semaphore pool is modelled.
 */
static int uvm_mmap(struct file *filp, struct vm_area_struct *vma)
{
	const unsigned long rw = VM_SHARED | VM_READ | VM_WRITE;
	struct uvm_file *u = filp->private_data;
	int ret = 0;
	u32 st;

	mutex_lock(&u->lock);
	if (!u->initialized)
		ret = -EBADFD;
	else if (u->mm != current->mm)
		ret = -EOPNOTSUPP;
	else if (vma->vm_start != vma->vm_pgoff << PAGE_SHIFT || (vma->vm_flags & rw) != rw)
		ret = -EINVAL;
	if (!ret) {
		st = uvm_va_range_create_mmap(&u->va, current->mm, vma, NULL);
		ret = st == SD_NV_OK ? 0 : st == SD_NV_ERR_UVM_ADDRESS_IN_USE ? -EADDRINUSE :
		      st == SD_NV_ERR_NO_MEMORY ? -ENOMEM : -EINVAL;
	}
	mutex_unlock(&u->lock);
	if (ret)
		return ret;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTCOPY);
#else
	vma->vm_flags |= VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTCOPY;
#endif
	vma->vm_ops = &uvm_vm_ops_managed;
	return 0;
}

/*
 * A command of the va_space: its block (size bytes, rmStatus at status_off) copied in,
 * NV_ERR_ILLEGAL_ACTION before UVM_INITIALIZE (uvm_api.h's INIT_CHECK routes), the
 * answer copied back.
 */
static long uvm_va_cmd(struct file *filp, unsigned int cmd, void __user *arg, size_t size,
		       size_t status_off)
{
	struct uvm_file *u = filp->private_data;
	u32 st = SD_NV_ERR_ILLEGAL_ACTION;
	void *p = kmalloc(size, GFP_KERNEL_ACCOUNT);
	long rc = 0;

	if (!p)
		return -ENOMEM;
	if (copy_from_user(p, arg, size)) {
		kfree(p);
		return -EFAULT;
	}
	mutex_lock(&u->lock);
	if (u->initialized) {
		switch (cmd) {
		case SD_UVM_REGISTER_GPU: {
			struct sd_uvm_register_gpu *r = p;

			st = sd_va_register_gpu(&u->va, &va_env, r->gpu_uuid);
			if (st == SD_NV_OK) {
				r->numaEnabled = 0;
				r->numaNodeId = -1;
			}
			break;
		}
		case SD_UVM_UNREGISTER_GPU:
			st = sd_va_unregister_gpu(&u->va, &va_env, ((struct sd_uvm_unregister_gpu *)p)->gpu_uuid);
			break;
		case SD_UVM_CREATE_EXTERNAL_RANGE: {
			struct sd_uvm_create_external_range *r = p;

			st = sd_va_create_range(&u->va, r->base, r->length);
			break;
		}
		case SD_UVM_FREE:
			st = uvm_api_free(p, filp);
			break;
		case SD_UVM_REGISTER_GPU_VASPACE:
			st = sd_va_register_gpu_vaspace(&u->va, &va_env, p);
			break;
		case SD_UVM_UNREGISTER_GPU_VASPACE:
			st = sd_va_unregister_gpu_vaspace(&u->va, &va_env, p);
			break;
		case SD_UVM_REGISTER_CHANNEL:
			st = sd_va_register_channel(&u->va, &va_env, p);
			break;
		case SD_UVM_UNREGISTER_CHANNEL:
			st = sd_va_unregister_channel(&u->va, &va_env, p);
			break;
		case SD_UVM_MAP_EXTERNAL_SPARSE:
			st = uvm_api_map_external_sparse(p, filp);
			break;
		case SD_UVM_MAP_DYNAMIC_PARALLELISM_REGION:
			st = uvm_api_map_dynamic_parallelism_region(p, filp);
			break;
		case SD_UVM_ALLOC_SEMAPHORE_POOL:
			st = uvm_api_alloc_semaphore_pool(p, filp);
			break;
		case SD_UVM_PAGEABLE_MEM_ACCESS:
			((struct sd_uvm_pageable_mem_access *)p)->pageableMemAccess = sd_va_pageable(&u->va);
			st = SD_NV_OK;
			break;
		case SD_UVM_MIGRATE:
			st = sd_va_migrate(&u->va, &va_env, p);
			break;
		case SD_UVM_MAP_EXTERNAL_ALLOCATION:
			st = sd_va_map(&u->va, &va_env, p, p + sizeof(struct sd_uvm_map_head), uvm_node.max_gpus,
				       p + size - sizeof(struct sd_uvm_map_tail));
			break;
		}
	}
	mutex_unlock(&u->lock);
	memcpy(p + status_off, &st, sizeof(st));
	if (copy_to_user(arg, p, size))
		rc = -EFAULT;
	kfree(p);
	return rc;
}

static long uvm_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	void __user *p = (void __user *)arg;

	switch (cmd) {
	case SD_UVM_DEINITIALIZE:
		return 0;
	case SD_UVM_INITIALIZE:
		return uvm_initialize(filp, p);
	case SD_UVM_REGISTER_GPU:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_register_gpu),
				  offsetof(struct sd_uvm_register_gpu, rmStatus));
	case SD_UVM_UNREGISTER_GPU:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_unregister_gpu),
				  offsetof(struct sd_uvm_unregister_gpu, rmStatus));
	case SD_UVM_CREATE_EXTERNAL_RANGE:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_create_external_range),
				  offsetof(struct sd_uvm_create_external_range, rmStatus));
	case SD_UVM_FREE:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_free),
				  offsetof(struct sd_uvm_free, rmStatus));
	case SD_UVM_REGISTER_GPU_VASPACE:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_register_gpu_vaspace),
				  offsetof(struct sd_uvm_register_gpu_vaspace, rmStatus));
	case SD_UVM_UNREGISTER_GPU_VASPACE:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_unregister_gpu_vaspace),
				  offsetof(struct sd_uvm_unregister_gpu_vaspace, rmStatus));
	case SD_UVM_REGISTER_CHANNEL:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_register_channel),
				  offsetof(struct sd_uvm_register_channel, rmStatus));
	case SD_UVM_UNREGISTER_CHANNEL:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_unregister_channel),
				  offsetof(struct sd_uvm_unregister_channel, rmStatus));
	case SD_UVM_MAP_EXTERNAL_SPARSE:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_map_external_sparse),
				  offsetof(struct sd_uvm_map_external_sparse, rmStatus));
	case SD_UVM_MAP_DYNAMIC_PARALLELISM_REGION:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_map_dp_region),
				  offsetof(struct sd_uvm_map_dp_region, rmStatus));
	case SD_UVM_ALLOC_SEMAPHORE_POOL:
		return uvm_va_cmd(filp, cmd, p, SD_UVM_POOL_SIZE(uvm_node.max_gpus),
				  SD_UVM_POOL_SIZE(uvm_node.max_gpus) - sizeof(struct sd_uvm_pool_tail) +
				  offsetof(struct sd_uvm_pool_tail, rmStatus));
	case SD_UVM_PAGEABLE_MEM_ACCESS:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_pageable_mem_access),
				  offsetof(struct sd_uvm_pageable_mem_access, rmStatus));
	case SD_UVM_MIGRATE:
		return uvm_va_cmd(filp, cmd, p, sizeof(struct sd_uvm_migrate),
				  offsetof(struct sd_uvm_migrate, rmStatus));
	case SD_UVM_MAP_EXTERNAL_ALLOCATION:
		return uvm_va_cmd(filp, cmd, p, SD_UVM_MAP_SIZE(uvm_node.max_gpus),
				  SD_UVM_MAP_SIZE(uvm_node.max_gpus) - sizeof(struct sd_uvm_map_tail) +
				  offsetof(struct sd_uvm_map_tail, rmStatus));
	default:
		return -EINVAL;
	}
}

static const struct file_operations uvm_fops = {
	.owner = THIS_MODULE,
	.open = uvm_open,
	.release = uvm_release_entry,
	.unlocked_ioctl = uvm_ioctl,
	.compat_ioctl = uvm_ioctl,
	.mmap = uvm_mmap,
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
	device_destroy(uvm_node.cls, MKDEV(MAJOR(uvm_base), SD_UVM_MINOR));
	device_destroy(uvm_node.cls, MKDEV(MAJOR(uvm_base), SD_UVM_TOOLS_MINOR));
}

static int __init uvm_init(void)
{
	struct device *d;
	int rc;

	simdrv_uvm_node(&uvm_node);
	va_env.ngpus = uvm_node.ngpus;
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
	d = device_create(uvm_node.cls, NULL, MKDEV(MAJOR(uvm_base), SD_UVM_MINOR), NULL, "nvidia-uvm");
	if (IS_ERR(d)) {
		rc = PTR_ERR(d);
		goto del_tools;
	}
	d = device_create(uvm_node.cls, NULL, MKDEV(MAJOR(uvm_base), SD_UVM_TOOLS_MINOR), NULL, "nvidia-uvm-tools");
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

static void __exit uvm_exit(void)
{
	uvm_nodes_destroy();
	cdev_del(&tools_cdev);
	cdev_del(&uvm_cdev);
	unregister_chrdev_region(uvm_base, SD_UVM_MINORS);
}

module_init(uvm_init);
module_exit(uvm_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("cgpu: a stand-in for NVIDIA's nvidia-uvm on nodes without a GPU");
