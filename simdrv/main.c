// SPDX-License-Identifier: GPL-2.0
/*
 * The stand-in for NVIDIA's kernel driver (docs/sim.md, "The stand-in driver"): a module
 * named nvidia that owns character major 195 as the real one does, /dev/nvidia0..N-1
 * and /dev/nvidiactl, and answers the escapes of lib/rm.c with NVIDIA's layouts. The
 * ioctl entry carries the real driver's name for the version served, so code that finds
 * the real entry by symbol finds this one.
 */
#include <linux/cdev.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/mm.h>
#include "lib/engine.h"
#include "lib/rm.h"
#include "lib/vaspace.h"
#include "uvm.h"

static unsigned int gpus = 4;
module_param(gpus, uint, 0444);
MODULE_PARM_DESC(gpus, "GPUs on the simulated node, 1..16 (/dev/nvidia0..N-1)");
static unsigned long mem_mib = 15109;
module_param(mem_mib, ulong, 0444);
MODULE_PARM_DESC(mem_mib, "memory of each GPU in MiB (default: a Tesla T4's 15109)");
static char *version = "535.261.03";
module_param(version, charp, 0444);
MODULE_PARM_DESC(version, "driver version served; 545.23.06 and later get that release's layouts and entry name");

/*
 * A test instrument, no part of NVIDIA's driver: the next RM_ALLOC of class
 * answer_delay_class that the driver makes returns answer_delay_ms later, once, the
 * object made and the node's lock let go, as a preempted caller's would (suite 57 races
 * cgpu_km's record of an object against a free of it that way). 0: none.
 */
static unsigned int answer_delay_ms;
module_param(answer_delay_ms, uint, 0644);
MODULE_PARM_DESC(answer_delay_ms, "test instrument: the next RM_ALLOC of answer_delay_class made returns this many ms later, once");
static unsigned int answer_delay_class;
module_param(answer_delay_class, uint, 0644);
MODULE_PARM_DESC(answer_delay_class, "test instrument: the class answer_delay_ms delays");

static struct sd_node node;
/* The one lock of the node: every object tree, ledger and file's attachment. */
static DEFINE_MUTEX(node_lock);
static struct cdev cdev;
static struct class *cls;
static struct proc_dir_entry *proc_root;
/* Each GPU's engine page (lib/engine.h), zeroed at load. */
static struct page *engine[SD_MAX_GPUS];

/* lib/'s allocator, exported for nvidia-uvm.ko's lib/vaspace.c too. */
void *sd_zalloc(unsigned long size)
{
	/* Charged to the caller's memory cgroup: user space chooses how many objects. */
	return kzalloc(size, GFP_KERNEL_ACCOUNT);
}
EXPORT_SYMBOL(sd_zalloc);

void sd_free(void *p)
{
	kfree(p);
}
EXPORT_SYMBOL(sd_free);

static int env_copy_in(void *ctx, void *dst, sd_u64 uaddr, sd_u32 len)
{
	return copy_from_user(dst, u64_to_user_ptr(uaddr), len) ? -1 : 0;
}

static int env_copy_out(void *ctx, sd_u64 uaddr, const void *src, sd_u32 len)
{
	return copy_to_user(u64_to_user_ptr(uaddr), src, len) ? -1 : 0;
}

static const struct file_operations fops_535, fops_545;

static int match_gpu_file(const void *gpu, struct file *filp, unsigned int fd)
{
	const struct sd_file *f = filp->private_data;

	return (filp->f_op == &fops_535 || filp->f_op == &fops_545) && f &&
		f->minor == (sd_u32)(unsigned long)gpu;
}

/* nv_is_gpu_accessible: any of the caller's descriptors on /dev/nvidia<gpu>. */
static int env_gpu_open(void *ctx, sd_u32 gpu)
{
	return iterate_fd(current->files, 0, match_gpu_file, (void *)(unsigned long)gpu) != 0;
}

/* NV_ESC_REGISTER_FD's target: one of our control files, held by a reference. */
static struct sd_file *env_ctl_get(void *ctx, int fd, void **ref)
{
	struct file *filp = fget(fd);
	struct sd_file *f;

	if (!filp)
		return NULL;
	f = filp->private_data;
	if ((filp->f_op != &fops_535 && filp->f_op != &fops_545) || !f || f->minor != SD_CTL_MINOR) {
		fput(filp);
		return NULL;
	}
	*ref = filp;
	return f;
}

static void env_ctl_put(void *ctx, void *ref)
{
	fput(ref);
}

/* The thread group in the initial pid namespace: the node's procfs is the host's. */
static sd_u32 env_caller(void *ctx)
{
	return task_tgid_nr(current);
}

static void env_lock(void *ctx)
{
	mutex_lock(&node_lock);
}

static void env_unlock(void *ctx)
{
	mutex_unlock(&node_lock);
}

/* What rm_ioctl's nv points to: the control device's state, or a GPU's (nv.h's head). */
static struct sd_nv_state_head nv_ctl_state = { .flags = SD_NV_FLAG_CONTROL };
static struct sd_nv_state_head nv_gpu_state[SD_MAX_GPUS];

static enum sd_rc env_rm_ioctl(void *ctx, struct sd_file *f, sd_u32 nr, void *arg, sd_u32 size);
static sd_u32 env_dmabuf_export(void *ctx, struct sd_file *f, struct sd_export_dmabuf *p);

static const struct sd_env env = {
	.copy_in = env_copy_in,
	.copy_out = env_copy_out,
	.gpu_open = env_gpu_open,
	.ctl_get = env_ctl_get,
	.ctl_put = env_ctl_put,
	.caller = env_caller,
	.lock = env_lock,
	.unlock = env_unlock,
	.rm_ioctl = env_rm_ioctl,
	.dmabuf_export = env_dmabuf_export,
};

/*
 * RM's entry as nvidia_ioctl calls it (osapi.c), same name and arguments in 535 and
 * 550: the escape's block is the driver's kernel copy (XFER already unwrapped), nvfp
 * the file's private data. NV_OK, or an error nvidia_ioctl turns into -EINVAL.
 */
u32 rm_ioctl(void *sp, void *nv, void *nvfp, u32 cmd, void *data, u32 size);
noinline u32 rm_ioctl(void *sp, void *nv, void *nvfp, u32 cmd, void *data, u32 size)
{
	enum sd_rc rc = sd_rm_ioctl(nvfp, &env, cmd, data, size);
	const struct sd_nvos21 *p = data;
	unsigned int ms;

	if (rc == SD_OK && cmd == SD_ESC_RM_ALLOC && size >= sizeof(*p) &&
	    p->status == SD_NV_OK && READ_ONCE(answer_delay_ms) &&
	    p->hClass == READ_ONCE(answer_delay_class) && (ms = xchg(&answer_delay_ms, 0)))
		msleep(ms);
	return rc == SD_OK ? SD_NV_OK : SD_NV_ERR_INVALID_ARGUMENT;
}

static enum sd_rc env_rm_ioctl(void *ctx, struct sd_file *f, sd_u32 nr, void *arg, sd_u32 size)
{
	void *nv = f->minor == SD_CTL_MINOR ? &nv_ctl_state : &nv_gpu_state[f->minor];

	return rm_ioctl(NULL, nv, f, nr, arg, size) == SD_NV_OK ? SD_OK : SD_RC_INVAL;
}

/*
 * A dma-buf of the stand-in holds the memory (its driver client, lib/rm.c) and nothing
 * a peer could map: the stand-in has no pages behind its video memory, so an importer's
 * attach gets -EOPNOTSUPP. Its release gives the memory back.
 */
static struct sg_table *simdrv_dmabuf_map(struct dma_buf_attachment *a, enum dma_data_direction dir)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static void simdrv_dmabuf_unmap(struct dma_buf_attachment *a, struct sg_table *sgt,
				enum dma_data_direction dir)
{
}

static void simdrv_dmabuf_release(struct dma_buf *buf)
{
	sd_dmabuf_release(&node, &env, (sd_u32)(unsigned long)buf->priv);
}

static const struct dma_buf_ops simdrv_dmabuf_ops = {
	.map_dma_buf = simdrv_dmabuf_map,
	.unmap_dma_buf = simdrv_dmabuf_unmap,
	.release = simdrv_dmabuf_release,
};

/*
 * NV_ESC_EXPORT_TO_DMABUF_FD's work by NVIDIA's name and arguments (nv-dmabuf.h, the
 * same in 535 and 550; nvidia_ioctl sets the status it returns), so code that follows
 * exports by symbol (cgpu_km enforce=1) finds the one that runs. params is the driver's
 * kernel copy of the block.
 */
u32 nv_dma_buf_export(void *nv, struct sd_export_dmabuf *params);
noinline u32 nv_dma_buf_export(void *nv, struct sd_export_dmabuf *params)
{
	sd_u32 gpu = (struct sd_nv_state_head *)nv - nv_gpu_state, hold, st;
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);
	struct dma_buf *buf;
	int fd;

	st = sd_dmabuf_dup(&node, gpu, &env, params, &hold);
	if (st != SD_NV_OK)
		return st;
	exp_info.ops = &simdrv_dmabuf_ops;
	exp_info.size = params->totalSize;
	exp_info.flags = O_RDWR | O_CLOEXEC;
	exp_info.priv = (void *)(unsigned long)hold;
	buf = dma_buf_export(&exp_info);
	if (IS_ERR(buf)) {
		sd_dmabuf_release(&node, &env, hold);
		return SD_NV_ERR_OPERATING_SYSTEM;
	}
	fd = dma_buf_fd(buf, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		/* The release gives the memory back. */
		dma_buf_put(buf);
		return SD_NV_ERR_OPERATING_SYSTEM;
	}
	params->fd = fd;
	return SD_NV_OK;
}

static sd_u32 env_dmabuf_export(void *ctx, struct sd_file *f, struct sd_export_dmabuf *p)
{
	return nv_dma_buf_export(&nv_gpu_state[f->minor], p);
}

/*
 * nvidia.ko's interface to nvidia-uvm, by NVIDIA's names and arguments
 * (nv_uvm_interface.h, the same in 535 and 550): device is nvidia-uvm's device of a
 * GPU (simdrv_uvm_device), pGpuMemoryInfo a UvmGpuMemoryInfo of the release's layout.
 * uvm.c calls them as nvidia-uvm calls NVIDIA's, so code that follows nvidia-uvm's
 * duplicates by symbol finds the ones that run.
 */
static struct simdrv_uvm_device {
	u32 gpu;
} uvm_devices[SD_MAX_GPUS];

void *simdrv_uvm_device(u32 gpu)
{
	return gpu < node.ngpus ? &uvm_devices[gpu] : NULL;
}
EXPORT_SYMBOL(simdrv_uvm_device);

/* 550.163.01's UvmGpuMemoryInfo has egm after sysmem (lib/abi.h). */
static bool meminfo_has_egm(void)
{
	return sd_version_at_least(node.version, 545, 0, 0);
}

void simdrv_uvm_node(struct simdrv_uvm_node *n)
{
	n->cls = cls;
	n->ngpus = node.ngpus;
	n->max_gpus = meminfo_has_egm() ? SD_UVM_MAX_GPUS_550 : SD_UVM_MAX_GPUS_535;
	n->devdesc_off = meminfo_has_egm() ? SD_UVM_MEMINFO_DEVDESC_OFF_550 : SD_UVM_MEMINFO_DEVDESC_OFF_535;
}
EXPORT_SYMBOL(simdrv_uvm_node);

u32 simdrv_uvm_tables(u32 gpu, u64 bytes, bool take)
{
	return sd_uvm_tables(&node, &env, gpu, bytes, take);
}
EXPORT_SYMBOL(simdrv_uvm_tables);

u32 simdrv_uvm_pages(u32 gpu, u64 bytes, bool take)
{
	return sd_uvm_pages(&node, &env, gpu, bytes, take);
}
EXPORT_SYMBOL(simdrv_uvm_pages);

noinline u32 nvUvmInterfaceDupMemory(void *device, u32 hClient, u32 hPhysMemory, u32 *hDupMemory, void *pGpuMemoryInfo)
{
	struct simdrv_uvm_device *dev = device;
	struct sd_dup_info info;
	u8 *out = pGpuMemoryInfo;
	u32 st;

	if (!dev || !hDupMemory)
		return SD_NV_ERR_INVALID_ARGUMENT;
	st = sd_uvm_dup(&node, &env, dev->gpu, hClient, hPhysMemory, hDupMemory, &info);
	if (st != SD_NV_OK || !out)
		return st;
	memset(out, 0, SD_UVM_MEMINFO_SIZE);
	out[SD_UVM_MEMINFO_SYSMEM_OFF] = info.sysmem;
	out[meminfo_has_egm() ? SD_UVM_MEMINFO_DEVDESC_OFF_550 : SD_UVM_MEMINFO_DEVDESC_OFF_535] =
		info.device_descendant;
	memcpy(out + SD_UVM_MEMINFO_PAGESIZE_OFF, &info.page_size, sizeof(info.page_size));
	memcpy(out + SD_UVM_MEMINFO_SIZE_OFF, &info.size, sizeof(info.size));
	sd_gpu_uuid(info.gpu, out + SD_UVM_MEMINFO_UUID_OFF);
	return SD_NV_OK;
}
EXPORT_SYMBOL(nvUvmInterfaceDupMemory);

noinline u32 nvUvmInterfaceFreeDupedHandle(void *device, u32 hPhysHandle)
{
	struct simdrv_uvm_device *dev = device;

	if (!dev)
		return SD_NV_ERR_INVALID_ARGUMENT;
	return sd_uvm_free_dup(&node, &env, dev->gpu, hPhysHandle);
}
EXPORT_SYMBOL(nvUvmInterfaceFreeDupedHandle);

/*
 * What nvidia-uvm has the driver keep, until it lets go: a retained channel
 * (nvUvmInterfaceRetainChannel, nvUvmInterfaceReleaseChannel) and a duplicated VA space
 * (nvUvmInterfaceDupAddressSpace, nvUvmInterfaceAddressSpaceDestroy), each an
 * allocation of the driver's, as RM's gpuRetainedChannel and gpuAddressSpace are. The
 * first argument is nvidia-uvm's GPU VA space or device of a GPU, here that GPU's
 * device (the stand-in keeps no VA space state); the info block
 * (UvmGpuChannelInstanceInfo, UvmGpuAddressSpaceInfo) is not filled, as nothing of the
 * stand-in's nvidia-uvm reads it.
 */
struct simdrv_kept {
	u32 hold;
};

static u32 simdrv_keep(u32 (*keep)(struct sd_node *n, const struct sd_env *env, u32 gpu, u32 hClient,
				   u32 h, u32 *hold),
		       void *device, u32 hClient, u32 h, void **out, void *info)
{
	struct simdrv_uvm_device *dev = device;
	struct simdrv_kept *k;
	u32 st;

	if (!dev || !out || !info)
		return SD_NV_ERR_INVALID_ARGUMENT;
	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return SD_NV_ERR_NO_MEMORY;
	st = keep(&node, &env, dev->gpu, hClient, h, &k->hold);
	if (st != SD_NV_OK) {
		kfree(k);
		return st;
	}
	*out = k;
	return SD_NV_OK;
}

/* Not through the other exported function: each is hooked on its own (cgpu_km). */
static void simdrv_let_go(struct simdrv_kept *k)
{
	if (!k)
		return;
	sd_uvm_release(&node, &env, k->hold);
	kfree(k);
}

noinline u32 nvUvmInterfaceRetainChannel(void *vaSpace, u32 hClient, u32 hChannel, void **retainedChannel, void *channelInstanceInfo)
{
	return simdrv_keep(sd_uvm_retain, vaSpace, hClient, hChannel, retainedChannel, channelInstanceInfo);
}
EXPORT_SYMBOL(nvUvmInterfaceRetainChannel);

noinline void nvUvmInterfaceReleaseChannel(void *retainedChannel)
{
	simdrv_let_go(retainedChannel);
}
EXPORT_SYMBOL(nvUvmInterfaceReleaseChannel);

noinline u32 nvUvmInterfaceDupAddressSpace(void *device, u32 hUserClient, u32 hUserVASpace, void **vaSpace, void *vaSpaceInfo)
{
	return simdrv_keep(sd_uvm_dup_vaspace, device, hUserClient, hUserVASpace, vaSpace, vaSpaceInfo);
}
EXPORT_SYMBOL(nvUvmInterfaceDupAddressSpace);

noinline void nvUvmInterfaceAddressSpaceDestroy(void *vaSpace)
{
	simdrv_let_go(vaSpace);
}
EXPORT_SYMBOL(nvUvmInterfaceAddressSpaceDestroy);

/*
 * The RM API for kernel clients (nvidia-modeset's), by NVIDIA's names: nvidia_get_rm_ops
 * is exported; its op is rm_kernel_rmapi_op (nv-kernel.o in the real driver).
 */
void rm_kernel_rmapi_op(void *sp, void *ops_cmd);
noinline void rm_kernel_rmapi_op(void *sp, void *ops_cmd)
{
	sd_kernel_op(&node, &env, ops_cmd);
}

/* A kernel client's stack: the real driver's is a separate stack; a token is enough here. */
static int simdrv_alloc_stack(void **sp)
{
	*sp = kzalloc(sizeof(long), GFP_KERNEL);
	return *sp ? 0 : -ENOMEM;
}

static void simdrv_free_stack(void *sp)
{
	kfree(sp);
}

u32 nvidia_get_rm_ops(struct sd_rm_ops *rm_ops);
u32 nvidia_get_rm_ops(struct sd_rm_ops *rm_ops)
{
	const struct sd_rm_ops ours = {
		.version_string = node.version,
		.alloc_stack = simdrv_alloc_stack,
		.free_stack = simdrv_free_stack,
		.op = rm_kernel_rmapi_op,
	};

	if (!rm_ops->version_string || strcmp(rm_ops->version_string, node.version)) {
		rm_ops->version_string = node.version;
		return SD_NV_ERR_GENERIC;
	}
	*rm_ops = ours;
	return SD_NV_OK;
}
EXPORT_SYMBOL(nvidia_get_rm_ops);

static long simdrv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	switch (sd_entry(filp->private_data, &env, _IOC_NR(cmd), _IOC_SIZE(cmd), arg)) {
	case SD_OK:
		return 0;
	case SD_RC_NOMEM:
		return -ENOMEM;
	case SD_RC_FAULT:
		return -EFAULT;
	default:
		return -EINVAL;
	}
}

/* The entry of /dev/nvidia* in 535 (kernel-open/nvidia/nv-frontend.c). */
long nvidia_frontend_unlocked_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);
noinline long nvidia_frontend_unlocked_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	return simdrv_ioctl(filp, cmd, arg);
}

/* The entry from 545 on, where nv-frontend is gone (kernel-open/nvidia/nv.c). */
long nvidia_unlocked_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);
noinline long nvidia_unlocked_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	return simdrv_ioctl(filp, cmd, arg);
}

static int simdrv_open(struct inode *inode, struct file *filp)
{
	unsigned int minor = iminor(inode);
	struct sd_file *f;

	if (minor != SD_CTL_MINOR && minor >= node.ngpus)
		return -ENODEV;
	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;
	sd_file_init(f, &node, minor);
	filp->private_data = f;
	return 0;
}

/*
 * A GPU node maps its engine page, and nothing else: one page at offset 0, shared (a
 * private copy would be a timeline of its own). The control node maps nothing. The
 * real driver maps only what an NV_ESC_RM_MAP_MEMORY prepared; no real libcuda asks
 * for offset 0 of a GPU node without one, so the two never meet.
 */
static int simdrv_mmap(struct file *filp, struct vm_area_struct *vma)
{
	const struct sd_file *f = filp->private_data;

	BUILD_BUG_ON(sizeof(struct sd_engine) > PAGE_SIZE);
	if (f->minor == SD_CTL_MINOR || vma->vm_pgoff != 0 ||
	    vma->vm_end - vma->vm_start != PAGE_SIZE || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	return remap_pfn_range(vma, vma->vm_start, page_to_pfn(engine[f->minor]), PAGE_SIZE,
			       vma->vm_page_prot);
}

static int simdrv_release(struct inode *inode, struct file *filp)
{
	struct sd_file *f = filp->private_data;

	mutex_lock(&node_lock);
	sd_file_release(f);
	mutex_unlock(&node_lock);
	/* Outside the lock: the control file may be released with it. */
	if (f->ctl_ref)
		fput(f->ctl_ref);
	kfree(f);
	return 0;
}

/*
 * The open and release entries by the real names too (535: nv-frontend.c; 545 on: nv.c),
 * so code that follows a file's life by symbol (cgpu_km enforce=1) finds the ones that run.
 */
int nvidia_frontend_open(struct inode *inode, struct file *filp);
noinline int nvidia_frontend_open(struct inode *inode, struct file *filp)
{
	return simdrv_open(inode, filp);
}

int nvidia_open(struct inode *inode, struct file *filp);
noinline int nvidia_open(struct inode *inode, struct file *filp)
{
	return simdrv_open(inode, filp);
}

int nvidia_frontend_close(struct inode *inode, struct file *filp);
noinline int nvidia_frontend_close(struct inode *inode, struct file *filp)
{
	return simdrv_release(inode, filp);
}

int nvidia_close(struct inode *inode, struct file *filp);
noinline int nvidia_close(struct inode *inode, struct file *filp)
{
	return simdrv_release(inode, filp);
}

static const struct file_operations fops_535 = {
	.owner = THIS_MODULE,
	.open = nvidia_frontend_open,
	.release = nvidia_frontend_close,
	.mmap = simdrv_mmap,
	.unlocked_ioctl = nvidia_frontend_unlocked_ioctl,
	.compat_ioctl = nvidia_frontend_unlocked_ioctl,
	.llseek = noop_llseek,
};

static const struct file_operations fops_545 = {
	.owner = THIS_MODULE,
	.open = nvidia_open,
	.release = nvidia_close,
	.mmap = simdrv_mmap,
	.unlocked_ioctl = nvidia_unlocked_ioctl,
	.compat_ioctl = nvidia_unlocked_ioctl,
	.llseek = noop_llseek,
};

/*
 * A GPU's used bytes, or of those what nvidia-uvm's page tables hold (no process's, no
 * allocation's): private is the GPU's index times 2, plus 1 for the tables.
 */
static int show_used(struct seq_file *m, void *v)
{
	unsigned long key = (unsigned long)m->private, gpu = key / 2;
	sd_u64 bytes;

	mutex_lock(&node_lock);
	bytes = key % 2 ? node.uvm_tables[gpu] : node.used[gpu];
	mutex_unlock(&node_lock);
	seq_printf(m, "%llu\n", bytes);
	return 0;
}

/* As the reader's pid namespace numbers the creator, as NVML does: a container sees
 * its own processes only. */
static void emit_client(void *m, sd_u32 pid, sd_u64 bytes)
{
	struct pid *p;
	pid_t nr;

	if (!pid)	/* a client of the driver's own (a dma-buf's): no process's */
		return;
	rcu_read_lock();
	p = find_pid_ns(pid, &init_pid_ns);
	nr = p ? pid_nr_ns(p, task_active_pid_ns(current)) : 0;
	rcu_read_unlock();
	if (nr)
		seq_printf(m, "%d %llu\n", nr, bytes);
}

/* Into seq_file's kernel buffer: no user copy under the lock. */
static int show_processes(struct seq_file *m, void *v)
{
	mutex_lock(&node_lock);
	sd_gpu_clients(&node, (unsigned long)m->private, emit_client, m);
	mutex_unlock(&node_lock);
	return 0;
}

static int show_total(struct seq_file *m, void *v)
{
	seq_printf(m, "%llu\n", node.total[(unsigned long)m->private]);
	return 0;
}

static int show_version(struct seq_file *m, void *v)
{
	seq_printf(m, "%s\n", node.version);
	return 0;
}

/* /proc/driver/nvidia-sim/{version,gpus/N/used,gpus/N/total,gpus/N/processes} */
static int make_proc(void)
{
	struct proc_dir_entry *gdir, *d;
	unsigned long i;
	char name[8];

	proc_root = proc_mkdir("driver/nvidia-sim", NULL);
	if (!proc_root || !proc_create_single("version", 0444, proc_root, show_version))
		return -ENOMEM;
	gdir = proc_mkdir("gpus", proc_root);
	if (!gdir)
		return -ENOMEM;
	for (i = 0; i < node.ngpus; i++) {
		snprintf(name, sizeof(name), "%lu", i);
		d = proc_mkdir(name, gdir);
		if (!d || !proc_create_single_data("used", 0444, d, show_used, (void *)(2 * i)) ||
		    !proc_create_single_data("uvm_tables", 0444, d, show_used, (void *)(2 * i + 1)) ||
		    !proc_create_single_data("total", 0444, d, show_total, (void *)i) ||
		    !proc_create_single_data("processes", 0444, d, show_processes, (void *)i))
			return -ENOMEM;
	}
	return 0;
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static char *simdrv_devnode(const struct device *dev, umode_t *mode)
#else
static char *simdrv_devnode(struct device *dev, umode_t *mode)
#endif
{
	/* World read-write, as nvidia-modprobe makes the real nodes. */
	if (mode)
		*mode = 0666;
	return NULL;
}

static int real_gpu_present(void)
{
	struct pci_dev *pdev = NULL;

	for_each_pci_dev(pdev) {
		if (pdev->vendor == PCI_VENDOR_ID_NVIDIA && (pdev->class >> 16) == PCI_BASE_CLASS_DISPLAY) {
			pci_dev_put(pdev);
			return 1;
		}
	}
	return 0;
}

static void destroy_nodes(void)
{
	unsigned int i;

	device_destroy(cls, MKDEV(SD_MAJOR, SD_CTL_MINOR));
	for (i = 0; i < node.ngpus; i++)
		device_destroy(cls, MKDEV(SD_MAJOR, i));
}

/*
 * /sys/module/nvidia/version, as NVIDIA's module has it (its MODULE_VERSION): the release
 * served, which is a parameter here, so the attribute is made at load rather than
 * stamped at build. cgpu_km's enforce=1 reads its layouts' version there.
 */
static ssize_t version_show(struct module_attribute *attr, struct module_kobject *mk, char *buf)
{
	return sysfs_emit(buf, "%s\n", node.version);
}

static struct module_attribute version_attr = __ATTR(version, 0444, version_show, NULL);

static void free_engines(void)
{
	unsigned int i;

	for (i = 0; i < SD_MAX_GPUS; i++)
		if (engine[i])
			__free_page(engine[i]);
}

static int __init simdrv_init(void)
{
	const struct file_operations *fops;
	unsigned int i;
	int rc;

	/* The stand-in must never shadow real hardware (and a loaded nvidia.ko already
	 * holds this module's name, so the kernel refuses the second one itself). */
	if (real_gpu_present()) {
		pr_err("nvidia (cgpu stand-in): an NVIDIA GPU is present; load NVIDIA's driver instead\n");
		return -EEXIST;
	}
	if (mem_mib == 0 || mem_mib > (~0ULL >> 20) ||
	    sd_node_init(&node, gpus, (sd_u64)mem_mib << 20, version) != SD_OK) {
		pr_err("nvidia (cgpu stand-in): bad parameters gpus=%u mem_mib=%lu version=%s\n",
		       gpus, mem_mib, version);
		return -EINVAL;
	}
	fops = sd_version_at_least(node.version, 545, 0, 0) ? &fops_545 : &fops_535;
	for (i = 0; i < node.ngpus; i++) {
		engine[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!engine[i]) {
			free_engines();
			return -ENOMEM;
		}
	}
	rc = register_chrdev_region(MKDEV(SD_MAJOR, 0), SD_CTL_MINOR + 1, "nvidia-frontend");
	if (rc) {
		pr_err("nvidia (cgpu stand-in): major %d is taken (%d)\n", SD_MAJOR, rc);
		free_engines();
		return rc;
	}
	cdev_init(&cdev, fops);
	cdev.owner = THIS_MODULE;
	rc = cdev_add(&cdev, MKDEV(SD_MAJOR, 0), SD_CTL_MINOR + 1);
	if (rc)
		goto unregister;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	cls = class_create("nvidia-sim");
#else
	cls = class_create(THIS_MODULE, "nvidia-sim");
#endif
	if (IS_ERR(cls)) {
		rc = PTR_ERR(cls);
		goto del_cdev;
	}
	cls->devnode = simdrv_devnode;
	for (i = 0; i < node.ngpus; i++) {
		struct device *d = device_create(cls, NULL, MKDEV(SD_MAJOR, i), NULL, "nvidia%u", i);

		if (IS_ERR(d)) {
			rc = PTR_ERR(d);
			goto nodes;
		}
	}
	{
		struct device *d = device_create(cls, NULL, MKDEV(SD_MAJOR, SD_CTL_MINOR), NULL, "nvidiactl");

		if (IS_ERR(d)) {
			rc = PTR_ERR(d);
			goto nodes;
		}
	}
	for (i = 0; i < node.ngpus; i++)
		uvm_devices[i].gpu = i;
	rc = make_proc();
	if (rc)
		goto proc;
	rc = sysfs_create_file(&THIS_MODULE->mkobj.kobj, &version_attr.attr);
	if (rc)
		goto proc;
	pr_info("nvidia (cgpu stand-in): %u GPUs of %lu MiB, version %s\n", node.ngpus, mem_mib, node.version);
	return 0;
proc:
	proc_remove(proc_root);
nodes:
	/* device_destroy of a node never made finds nothing and does nothing. */
	destroy_nodes();
	class_destroy(cls);
del_cdev:
	cdev_del(&cdev);
unregister:
	unregister_chrdev_region(MKDEV(SD_MAJOR, 0), SD_CTL_MINOR + 1);
	free_engines();
	return rc;
}

static void __exit simdrv_exit(void)
{
	sysfs_remove_file(&THIS_MODULE->mkobj.kobj, &version_attr.attr);
	proc_remove(proc_root);
	/* nvidia-uvm.ko is gone (it uses this module's exports): its sessions go. */
	sd_uvm_sessions_free(&node);
	destroy_nodes();
	class_destroy(cls);
	cdev_del(&cdev);
	unregister_chrdev_region(MKDEV(SD_MAJOR, 0), SD_CTL_MINOR + 1);
	free_engines();
}

module_init(simdrv_init);
module_exit(simdrv_exit);
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
MODULE_DESCRIPTION("cgpu: a stand-in for NVIDIA's kernel driver on nodes without a GPU");
