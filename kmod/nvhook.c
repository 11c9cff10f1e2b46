// SPDX-License-Identifier: GPL-2.0
/*
 * enforce=1: the budget at the NVIDIA driver's own boundary (docs/kmod.md, "Enforcement
 * at the driver's boundary"). cgpu_km interposes on the driver's ioctl entry and on its
 * release entry, both found by name, so that a limited container's video-memory
 * allocations are charged to its ledger before the driver runs, whether or not the
 * process cooperates (libcgpu, static binaries, raw ioctls alike).
 *
 * How: the entry's address comes from kallsyms_lookup_name("nvidia:<name>"), itself
 * found once at load by a kprobe registered on it and removed at once (it is not
 * exported; the kprobe lookup is the standard way to resolve a non-exported symbol). The call is redirected with an
 * ftrace_ops on that one address, FTRACE_OPS_FL_IPMODIFY | SAVE_REGS, as livepatch
 * does: the callback sets regs->ip to our wrapper, which calls the original function
 * by its start address. That second call passes the same ftrace site again; the
 * callback lets it through because its caller (parent_ip) lies in this module. Nothing
 * else in cgpu_km calls the driver, so "called from cgpu_km" means "the wrapper's own
 * call". (Jumping past the fentry call instead would break on kernels with IBT, where
 * the function starts with ENDBR64.) The kernel's own x86_64 ftrace code of 6.1 does
 * the rest: FTRACE_OPS_FL_RECURSION, trampolines, text patching.
 *
 * Lifetime: the hooks are registered when both cgpu_km and a driver of a version in
 * the table are there: at cgpu_km's load if `nvidia` is loaded, else when it goes live
 * (module notifier); they go at the driver's MODULE_STATE_GOING (its files are all
 * closed by then: each pins it) and at cgpu_km's unload. Every wrapper runs inside an
 * SRCU read section; unload unregisters the ftrace_ops (no new redirection), then
 * waits for the SRCU readers (calls inside the driver) and for an RCU-tasks grace
 * period (a task redirected but not yet inside the read section, or just past its
 * end, is still on our text), before any of the module's memory goes.
 *
 * Locks, outermost first: nvh.lock (attach/detach) is never held by a wrapper;
 * nvh.files_lock (the table of tracked files) -> rec->lock (one file's objects) ->
 * inst->lock (the ledger). cgpu.reg_lock (attach to a container) is taken with none of
 * them held. No lock is held across a call into the driver.
 */
#include <linux/fs.h>
#include <linux/ftrace.h>
#include <linux/hashtable.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/srcu.h>
#include <linux/uaccess.h>
#include "cgpu.h"
#include "nvabi.h"

static int enforce;
module_param(enforce, int, 0444);
MODULE_PARM_DESC(enforce, "1: charge video-memory allocations at the NVIDIA driver's ioctl entry (docs/kmod.md); 0 (default): do not attach");

static char *nv_version = "";
module_param(nv_version, charp, 0444);
MODULE_PARM_DESC(nv_version, "the NVIDIA driver's version, for its layouts; empty: the driver module's own (/sys/module/nvidia/version)");

/*
 * The releases whose layouts are known, each checked against NVIDIA's headers by
 * simdrv/conformance. Any other: enforcement stays off, and says so.
 */
static const struct nvh_layout {
	const char *version;
	const char *ioctl_sym;
	const char *close_sym;
	u32 memparams_size;
} nvh_layouts[] = {
	{ "535.261.03", "nvidia_frontend_unlocked_ioctl", "nvidia_frontend_close",
	  NVA_MEMPARAMS_SIZE_OLD },
	{ "550.163.01", "nvidia_unlocked_ioctl", "nvidia_close", NVA_MEMPARAMS_SIZE_NEW },
};

#define NVH_PAGE	(2ULL << 20)	/* the charge is checked in 2 MiB pages */
#define NVH_OBJS_MAX	16384		/* tracked objects per driver file */
#define NVH_FILE_BITS	8

typedef long (*nvh_ioctl_fn)(struct file *, unsigned int, unsigned long);
typedef int (*nvh_close_fn)(struct inode *, struct file *);

struct nvh_hook {
	unsigned long addr;		/* the driver's function, its start: callable */
	void *wrapper;
	struct ftrace_ops ops;
	bool on;
};

/* One driver file that a limited container allocated through. */
struct nvh_file {
	struct hlist_node node;		/* nvh.files, by file */
	const struct file *file;	/* identity only: no reference */
	struct cgpu_attachment *att;	/* the container's ledgers, one per GPU (its files count) */
	struct mutex lock;		/* objs, nobjs */
	DECLARE_HASHTABLE(objs, 6);
	unsigned int nobjs;
};

/*
 * One object the driver made for the file: a device or subdevice (which GPU the objects
 * under it are on) or a video-memory object (its bytes, charged to that GPU's ledger).
 */
enum nvh_kind { NVH_DEVICE, NVH_SUBDEVICE, NVH_MEMORY };

struct nvh_obj {
	struct hlist_node node;
	struct list_head doom;		/* a tree being dropped (nvh_drop_tree) */
	u32 client, handle, parent;
	u32 gpu;
	enum nvh_kind kind;
	struct cgpu_slot *slot;		/* memory: the ledger charged */
	u64 bytes;
};

static struct {
	struct mutex lock;		/* attach, detach, state */
	bool attached;
	bool notifier;
	const struct nvh_layout *layout;	/* fixed while attached */
	char state[128];		/* /proc/cgpu_km/enforcement */
	struct nvh_hook ioctl, close;
	struct notifier_block nb;
	struct mutex files_lock;
	DECLARE_HASHTABLE(files, NVH_FILE_BITS);
	struct proc_dir_entry *proc;
} nvh = {
	.lock = __MUTEX_INITIALIZER(nvh.lock),
	.files_lock = __MUTEX_INITIALIZER(nvh.files_lock),
};

static struct srcu_struct nvh_srcu;

/* ---- tracked files and objects ---- */

static u32 nvh_key(u32 client, u32 handle)
{
	return client * 31 + handle;
}

static struct nvh_obj *nvh_obj_find(struct nvh_file *rec, u32 client, u32 handle)
{
	struct nvh_obj *o;

	hash_for_each_possible(rec->objs, o, node, nvh_key(client, handle))
		if (o->client == client && o->handle == handle)
			return o;
	return NULL;
}

/* The object is gone from the driver: its bytes back to the ledger. rec->lock held. */
static void nvh_obj_drop(struct nvh_file *rec, struct nvh_obj *o)
{
	u64 used, memsize;

	hash_del(&o->node);
	rec->nobjs--;
	/*
	 * EAGAIN while a hot update is frozen: the bytes stay charged to the file until it
	 * closes (too much, never too little).
	 */
	if (o->bytes)
		cgpu_ledger_uncharge(o->slot, o->bytes, &used, &memsize);
	cgpu_free(o);
}

/*
 * The driver freed top and everything under it: a device takes its subdevices and the
 * memory under both with it. Only devices and subdevices have children here, and few of
 * them, so one pass over the table per parent. rec->lock held.
 */
static void nvh_drop_tree(struct nvh_file *rec, struct nvh_obj *top)
{
	struct nvh_obj *q, *o, *n;
	LIST_HEAD(doom);
	int bkt;

	list_add_tail(&top->doom, &doom);
	list_for_each_entry(q, &doom, doom) {
		if (q->kind == NVH_MEMORY)
			continue;
		hash_for_each(rec->objs, bkt, o, node)
			if (o->client == q->client && o->parent == q->handle && o != q)
				list_add_tail(&o->doom, &doom);
	}
	list_for_each_entry_safe(q, n, &doom, doom)
		nvh_obj_drop(rec, q);
}

/* Frees rec: its objects, then its ledger link (which releases all it still holds). */
static void nvh_file_free(struct nvh_file *rec)
{
	struct hlist_node *tmp;
	struct nvh_obj *o;
	int bkt;

	hash_for_each_safe(rec->objs, bkt, tmp, o, node) {
		hash_del(&o->node);
		cgpu_free(o);
	}
	cgpu_detach(rec->att);
	cgpu_free(rec->att);
	mutex_destroy(&rec->lock);
	cgpu_free(rec);
}

static struct nvh_file *nvh_file_find(const struct file *f)
{
	struct nvh_file *rec;

	lockdep_assert_held(&nvh.files_lock);
	hash_for_each_possible(nvh.files, rec, node, (unsigned long)f)
		if (rec->file == f)
			return rec;
	return NULL;
}

/* Whether the caller is in some container (reg_lock taken here). */
static bool nvh_caller_contained(void)
{
	bool in;

	mutex_lock(&cgpu.reg_lock);
	in = cgpu_caller_inst() != NULL;
	mutex_unlock(&cgpu.reg_lock);
	return in;
}

/* Whether the caller is in the container whose record rec is (one cgroup for all its GPUs). */
static bool nvh_owns(const struct nvh_file *rec)
{
	return cgpu_bind_contains(&rec->att->slots[0].inst->bind, current);
}

/*
 * The record to charge an allocation of the caller's on f to. NULL with *refuse false:
 * the caller is in no container: it passes untouched. NULL with *refuse true: the caller is limited but cannot be charged now
 * (out of memory, too many files, a hot update frozen, or f is another container's).
 * The record lives until f is released or cgpu_km detaches, neither of which can
 * happen while an ioctl on f is running.
 */
static struct nvh_file *nvh_file_for_caller(struct file *f, bool *refuse)
{
	struct nvh_file *rec, *other;
	int err;

	*refuse = false;
	mutex_lock(&nvh.files_lock);
	rec = nvh_file_find(f);
	mutex_unlock(&nvh.files_lock);
	if (rec) {
		if (nvh_owns(rec))
			return rec;
		/* A descriptor passed on: another container may not allocate through it. */
		*refuse = nvh_caller_contained();
		return NULL;
	}
	/* The host and unlimited containers pass with nothing allocated for them. */
	if (!nvh_caller_contained())
		return NULL;
	rec = cgpu_zalloc(sizeof(*rec));
	if (rec)
		rec->att = cgpu_zalloc(sizeof(*rec->att));
	if (!rec || !rec->att) {
		if (rec)
			cgpu_free(rec);
		*refuse = nvh_caller_contained();
		return NULL;
	}
	err = cgpu_attach(rec->att);
	if (err) {
		cgpu_free(rec->att);
		cgpu_free(rec);
		/* EAGAIN (a hot update frozen) comes for everyone: the host passes. */
		*refuse = err != -ENOENT && nvh_caller_contained();
		return NULL;
	}
	rec->file = f;
	mutex_init(&rec->lock);
	hash_init(rec->objs);
	mutex_lock(&nvh.files_lock);
	other = nvh_file_find(f);	/* another thread of the caller was quicker */
	if (!other)
		hash_add(nvh.files, &rec->node, (unsigned long)f);
	mutex_unlock(&nvh.files_lock);
	if (other) {
		nvh_file_free(rec);
		rec = other;
		if (!nvh_owns(rec)) {
			*refuse = true;
			return NULL;
		}
	}
	return rec;
}

/* ---- the wrapped calls ---- */

#define NVH_GPU_NONE	U32_MAX

/* The driver's answer to a limited caller, without calling it: status set, return 0. */
static long nvh_answer(void __user *status, u32 code)
{
	return put_user(code, (u32 __user *)status) ? -EFAULT : 0;
}

/* A parameter block of RM_ALLOC as the caller passed it (direct, or inside XFER). */
struct nvh_blk {
	void __user *u;
	unsigned int size;		/* 32: NVOS21, 48: NVOS64 */
	union { struct nva_nvos21 p21; struct nva_nvos64 p64; } v;	/* copied once */
};

static void __user *nvh_status(const struct nvh_blk *b)
{
	return b->u + (b->size == sizeof(struct nva_nvos21) ?
		       offsetof(struct nva_nvos21, status) : offsetof(struct nva_nvos64, status));
}

/*
 * The driver's answer, read back once: NV_OK and the new handle, or false. The two fields
 * alone, not the block: each copy is paid on every charged allocation (docs/kmod.md,
 * "Cost"). Time of check to time of use: another thread of the caller may rewrite the
 * block between the driver's write and this read (docs/kmod.md: what is left).
 */
static bool nvh_answered_ok(const struct nvh_blk *b, long ret, u32 *handle)
{
	u32 st;

	return !ret && !get_user(st, (u32 __user *)nvh_status(b)) && st == NVA_NV_OK &&
	       !get_user(*handle, (u32 __user *)(b->u + offsetof(struct nva_nvos21, hObjectNew)));
}

/* A tracked device or subdevice of rec, or NULL. rec->lock held. */
static struct nvh_obj *nvh_parent(struct nvh_file *rec, u32 client, u32 handle)
{
	struct nvh_obj *p = nvh_obj_find(rec, client, handle);

	return p && p->kind != NVH_MEMORY ? p : NULL;
}

/* Takes a place in rec's table for one more object; false when it is full. */
static bool nvh_take_place(struct nvh_file *rec)
{
	bool ok;

	mutex_lock(&rec->lock);
	ok = rec->nobjs < NVH_OBJS_MAX;
	if (ok)
		rec->nobjs++;
	mutex_unlock(&rec->lock);
	return ok;
}

/* Records o (its place taken) under its handle. rec->lock held. */
static void nvh_record(struct nvh_file *rec, struct nvh_obj *o)
{
	/*
	 * A line left by an object the driver freed behind our back (the free's block
	 * rewritten meanwhile): the handle is reused, and what was under it went too.
	 */
	struct nvh_obj *stale = nvh_obj_find(rec, o->client, o->handle);

	if (stale)
		nvh_drop_tree(rec, stale);
	hash_add(rec->objs, &o->node, nvh_key(o->client, o->handle));
}

/*
 * NV01_DEVICE_0 and NV20_SUBDEVICE_0: which GPU the objects under them are on. A device
 * is made for NV0080_ALLOC_PARAMETERS.deviceId (its first field), read once before the
 * call; a subdevice is on its parent device's GPU. One not tracked (made before cgpu_km
 * attached, or its parameters unreadable) is not recorded, and memory under it is
 * refused below: never charged to a guessed GPU.
 */
static long nvh_alloc_parent(struct file *f, unsigned int cmd, unsigned long arg,
			     nvh_ioctl_fn orig, struct nvh_blk *b, struct nvh_file *rec)
{
	struct nvh_obj *o, *p;
	u32 gpu = NVH_GPU_NONE, handle;
	long ret;

	if (b->v.p21.hClass == NVA_NV01_DEVICE_0) {
		if (b->v.p21.pAllocParms &&
		    get_user(gpu, (u32 __user *)u64_to_user_ptr(b->v.p21.pAllocParms)))
			gpu = NVH_GPU_NONE;
	} else {
		mutex_lock(&rec->lock);
		p = nvh_parent(rec, b->v.p21.hRoot, b->v.p21.hObjectParent);
		if (p && p->kind == NVH_DEVICE)
			gpu = p->gpu;
		mutex_unlock(&rec->lock);
	}
	if (gpu == NVH_GPU_NONE)
		return orig(f, cmd, arg);
	o = cgpu_zalloc(sizeof(*o));
	if (!o || !nvh_take_place(rec)) {
		if (o)
			cgpu_free(o);
		return nvh_answer(nvh_status(b), NVA_ERR_NO_MEMORY);
	}
	ret = orig(f, cmd, arg);
	mutex_lock(&rec->lock);
	if (!nvh_answered_ok(b, ret, &handle)) {
		rec->nobjs--;
		mutex_unlock(&rec->lock);
		cgpu_free(o);
		return ret;
	}
	o->client = b->v.p21.hRoot;
	o->handle = handle;
	o->parent = b->v.p21.hObjectParent;
	o->gpu = gpu;
	o->kind = b->v.p21.hClass == NVA_NV01_DEVICE_0 ? NVH_DEVICE : NVH_SUBDEVICE;
	nvh_record(rec, o);
	mutex_unlock(&rec->lock);
	return ret;
}

/*
 * NV01_MEMORY_LOCAL_USER, under a tracked device or subdevice: charged to the container's
 * ledger on that GPU before the driver runs, then set to what the driver took.
 */
static long nvh_alloc_memory(struct file *f, unsigned int cmd, unsigned long arg,
			     nvh_ioctl_fn orig, struct nvh_blk *b, struct nvh_file *rec)
{
	u32 msize = nvh.layout->memparams_size, handle;
	u8 mp[NVA_MEMPARAMS_SIZE_NEW];
	u64 want, est, got, used, memsize;
	struct cgpu_slot *slot = NULL;
	u32 gpu = NVH_GPU_NONE;
	struct nvh_obj *o, *p;
	long ret;

	/* The class's parameters, once; answered as the driver answers them. */
	if (!b->v.p21.pAllocParms)
		return nvh_answer(nvh_status(b), NVA_ERR_INVALID_ARGUMENT);
	if (copy_from_user(mp, u64_to_user_ptr(b->v.p21.pAllocParms), msize))
		return nvh_answer(nvh_status(b), NVA_ERR_INVALID_ADDRESS);
	memcpy(&want, mp + NVA_MEMPARAMS_SIZE_OFF, sizeof(want));
	if (want > U64_MAX - (NVH_PAGE - 1))
		return nvh_answer(nvh_status(b), NVA_ERR_NO_MEMORY);
	est = round_up(want, NVH_PAGE);

	/* The GPU it goes on; none known, or no budget there for this container: refused. */
	mutex_lock(&rec->lock);
	/* The parent may go once unlocked (a free on another thread): its GPU is kept. */
	p = nvh_parent(rec, b->v.p21.hRoot, b->v.p21.hObjectParent);
	if (p) {
		gpu = p->gpu;
		slot = cgpu_slot_of(rec->att, gpu);
	}
	mutex_unlock(&rec->lock);
	if (!slot) {
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: video memory under %s (parent 0x%x) refused\n",
				    task_tgid_nr(current),
				    gpu != NVH_GPU_NONE ? "a GPU the container has no budget on" :
				    "a device cgpu_km did not see made",
				    b->v.p21.hObjectParent);
		return nvh_answer(nvh_status(b), NVA_ERR_NO_MEMORY);
	}

	/* Room for the object's line first, then the charge: nothing to undo after. */
	o = cgpu_zalloc(sizeof(*o));
	if (!o || !nvh_take_place(rec)) {
		if (o)
			cgpu_free(o);
		return nvh_answer(nvh_status(b), NVA_ERR_NO_MEMORY);
	}
	if (est && cgpu_ledger_charge(slot, est, &used, &memsize)) {
		mutex_lock(&rec->lock);
		rec->nobjs--;
		mutex_unlock(&rec->lock);
		cgpu_free(o);
		return nvh_answer(nvh_status(b), NVA_ERR_NO_MEMORY);
	}

	ret = orig(f, cmd, arg);

	/* The size the driver took, written back into the class parameters; read once. */
	got = 0;
	if (!nvh_answered_ok(b, ret, &handle) ||
	    get_user(got, (u64 __user *)(u64_to_user_ptr(b->v.p21.pAllocParms) +
					 NVA_MEMPARAMS_SIZE_OFF))) {
		mutex_lock(&rec->lock);
		rec->nobjs--;
		if (est)
			cgpu_ledger_uncharge(slot, est, &used, &memsize);
		mutex_unlock(&rec->lock);
		cgpu_free(o);
		return ret;
	}
	mutex_lock(&rec->lock);
	/* What the driver took: less than the 2 MiB estimate is given back. */
	if (got < est) {
		cgpu_ledger_uncharge(slot, est - got, &used, &memsize);
	} else if (got > est && cgpu_ledger_charge(slot, got - est, &used, &memsize)) {
		/* Larger pages than 2 MiB, or the size rewritten under us: see docs. */
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: the driver took %llu bytes, %llu over the budget's room; %llu charged\n",
				    task_tgid_nr(current), got, got - est, est);
		got = est;
	}
	o->client = b->v.p21.hRoot;
	o->handle = handle;
	o->parent = b->v.p21.hObjectParent;
	o->gpu = gpu;
	o->kind = NVH_MEMORY;
	o->slot = slot;
	o->bytes = got;
	nvh_record(rec, o);
	mutex_unlock(&rec->lock);
	return ret;
}

static bool nvh_class_read(u32 cls)
{
	return cls == NVA_NV01_DEVICE_0 || cls == NVA_NV20_SUBDEVICE_0 ||
	       cls == NVA_NV01_MEMORY_LOCAL_USER;
}

/* Classes that take or map video memory this module does not charge (nvabi.h). */
static bool nvh_class_refused(u32 cls)
{
	return cls == NVA_NV_MEMORY_EXTENDED_USER || cls == NVA_NV01_MEMORY_LOCAL_PHYSICAL ||
	       cls == NVA_NV_MEMORY_FABRIC;
}

/*
 * NV_ESC_RM_ALLOC, whose block (32 or 48 bytes) is at ublk: copied once. Only the classes
 * that place or take video memory are looked at, and only for a limited caller.
 */
static long nvh_rm_alloc(struct file *f, unsigned int cmd, unsigned long arg,
			 nvh_ioctl_fn orig, void __user *ublk, unsigned int bsize)
{
	struct nvh_blk b = { .u = ublk, .size = bsize };
	struct nvh_file *rec;
	bool refuse;
	u32 cls;

	/*
	 * The class alone first, and whose the caller is: what is not looked at (most
	 * classes; the host; an unlimited container) passes for one read, not the block's
	 * copy (docs/kmod.md, "Cost"). A fault is the driver's to report.
	 */
	if (get_user(cls, (u32 __user *)(ublk + offsetof(struct nva_nvos21, hClass))))
		return orig(f, cmd, arg);
	if (nvh_class_refused(cls) && nvh_caller_contained()) {
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: RM_ALLOC of class 0x%x refused in a container (video memory this module does not charge)\n",
				    task_tgid_nr(current), cls);
		return nvh_answer(nvh_status(&b), NVA_ERR_NOT_SUPPORTED);
	}
	if (!nvh_class_read(cls))
		return orig(f, cmd, arg);
	rec = nvh_file_for_caller(f, &refuse);
	if (!rec)
		return refuse ? nvh_answer(nvh_status(&b), NVA_ERR_NO_MEMORY) : orig(f, cmd, arg);
	/* The block decides, whatever the class read first. */
	if (copy_from_user(&b.v, ublk, bsize) || !nvh_class_read(b.v.p21.hClass))
		return orig(f, cmd, arg);
	if (b.v.p21.hClass == NVA_NV01_MEMORY_LOCAL_USER)
		return nvh_alloc_memory(f, cmd, arg, orig, &b, rec);
	return nvh_alloc_parent(f, cmd, arg, orig, &b, rec);
}

/* NV_ESC_RM_FREE, whose block is at ublk. */
static long nvh_rm_free(struct file *f, unsigned int cmd, unsigned long arg,
			nvh_ioctl_fn orig, void __user *ublk)
{
	struct nva_nvos00 before, after;
	struct hlist_node *tmp;
	struct nvh_file *rec;
	struct nvh_obj *o;
	long ret;
	int bkt;

	mutex_lock(&nvh.files_lock);
	rec = nvh_file_find(f);
	mutex_unlock(&nvh.files_lock);
	if (!rec || copy_from_user(&before, ublk, sizeof(before)))
		return orig(f, cmd, arg);
	ret = orig(f, cmd, arg);
	/*
	 * Given back only when the driver says it freed, and the block still names what it
	 * named before the call (a rewrite in between keeps the charge: too much, not too
	 * little, until the file closes).
	 */
	if (ret || copy_from_user(&after, ublk, sizeof(after)) || after.status != NVA_NV_OK ||
	    after.hRoot != before.hRoot || after.hObjectOld != before.hObjectOld)
		return ret;
	mutex_lock(&rec->lock);
	if (before.hObjectOld == before.hRoot) {
		hash_for_each_safe(rec->objs, bkt, tmp, o, node)
			if (o->client == before.hRoot)
				nvh_obj_drop(rec, o);
	} else {
		o = nvh_obj_find(rec, before.hRoot, before.hObjectOld);
		if (o)
			nvh_drop_tree(rec, o);
	}
	mutex_unlock(&rec->lock);
	return ret;
}

/*
 * NV_ESC_RM_DUP_OBJECT of a memory object charged to a container, by a caller in a
 * container: refused. A duplicate keeps the memory in the driver after the original is
 * freed, and the charge goes with the original's free: duplicating and freeing again
 * and again would hold memory past the budget. Until duplicates are followed (docs),
 * they are refused with the driver's NV_ERR_INSUFFICIENT_PERMISSIONS; everything else
 * (devices, memory nobody is charged for, the host's calls) goes to the driver.
 */
static long nvh_rm_dup(struct file *f, unsigned int cmd, unsigned long arg,
		       nvh_ioctl_fn orig, void __user *ublk)
{
	struct nva_nvos55 p;
	struct nvh_file *rec;
	struct nvh_obj *o;
	bool charged = false;
	int bkt;

	if (copy_from_user(&p, ublk, sizeof(p)))
		return orig(f, cmd, arg);
	mutex_lock(&nvh.files_lock);
	hash_for_each(nvh.files, bkt, rec, node) {
		mutex_lock(&rec->lock);
		o = nvh_obj_find(rec, p.hClientSrc, p.hObjectSrc);
		charged = o && o->kind == NVH_MEMORY;
		mutex_unlock(&rec->lock);
		if (charged)
			break;
	}
	mutex_unlock(&nvh.files_lock);
	if (!charged || !nvh_caller_contained())
		return orig(f, cmd, arg);
	pr_warn_ratelimited("cgpu_km: enforce: pid %d: duplicating charged memory (client 0x%x, object 0x%x) refused\n",
			    task_tgid_nr(current), p.hClientSrc, p.hObjectSrc);
	return nvh_answer(ublk + offsetof(struct nva_nvos55, status),
			  NVA_ERR_INSUFFICIENT_PERMISSIONS);
}

static bool nvh_vid_heap_passes(u32 function)
{
	switch (function) {
	case NVA_NVOS32_FUNCTION_FREE:
	case NVA_NVOS32_FUNCTION_INFO:
	case NVA_NVOS32_FUNCTION_DUMP:
	case NVA_NVOS32_FUNCTION_REACQUIRE_COMPR:
	case NVA_NVOS32_FUNCTION_RELEASE_COMPR:
	case NVA_NVOS32_FUNCTION_GET_MEM_ALIGNMENT:
	case NVA_NVOS32_FUNCTION_HW_FREE:
	case NVA_NVOS32_FUNCTION_ALLOC_OS_DESCRIPTOR:
		return true;
	}
	return false;
}

/*
 * NV_ESC_RM_VID_HEAP_CONTROL, RM's deprecated heap interface: its allocating functions
 * make NV01_MEMORY_LOCAL_USER objects inside the driver (rmapi_deprecated_vidheapctrl.c),
 * never passing RM_ALLOC. Not charged here, so refused in a container, as are functions
 * this module does not know. A FREE of charged memory through it keeps the charge until
 * the file closes: too much, never too little.
 */
static long nvh_vid_heap(struct file *f, unsigned int cmd, unsigned long arg,
			 nvh_ioctl_fn orig, void __user *ublk)
{
	u32 function;

	if (get_user(function, (u32 __user *)(ublk + offsetof(struct nva_nvos32_head, function))) ||
	    nvh_vid_heap_passes(function) || !nvh_caller_contained())
		return orig(f, cmd, arg);
	pr_warn_ratelimited("cgpu_km: enforce: pid %d: RM_VID_HEAP_CONTROL function %u refused in a container (it allocates outside RM_ALLOC)\n",
			    task_tgid_nr(current), function);
	return nvh_answer(ublk + offsetof(struct nva_nvos32_head, status), NVA_ERR_NOT_SUPPORTED);
}

/* One escape's block at ublk of bsize bytes, direct or unwrapped from XFER. */
static long nvh_escape(struct file *f, unsigned int cmd, unsigned long arg, nvh_ioctl_fn orig,
		       unsigned int nr, void __user *ublk, unsigned int bsize)
{
	switch (nr) {
	case NVA_ESC_RM_ALLOC:
		if (bsize == sizeof(struct nva_nvos21) || bsize == sizeof(struct nva_nvos64))
			return nvh_rm_alloc(f, cmd, arg, orig, ublk, bsize);
		break;
	case NVA_ESC_RM_FREE:
		if (bsize == sizeof(struct nva_nvos00))
			return nvh_rm_free(f, cmd, arg, orig, ublk);
		break;
	case NVA_ESC_RM_DUP_OBJECT:
		if (bsize == sizeof(struct nva_nvos55))
			return nvh_rm_dup(f, cmd, arg, orig, ublk);
		break;
	case NVA_ESC_RM_VID_HEAP_CONTROL:
		if (bsize == NVA_NVOS32_SIZE)
			return nvh_vid_heap(f, cmd, arg, orig, ublk);
		break;
	}
	return orig(f, cmd, arg);
}

static long nvh_ioctl_body(struct file *f, unsigned int cmd, unsigned long arg)
{
	nvh_ioctl_fn orig = (nvh_ioctl_fn)READ_ONCE(nvh.ioctl.addr);
	struct nva_xfer x;

	if (_IOC_NR(cmd) != NVA_ESC_IOCTL_XFER_CMD)
		return nvh_escape(f, cmd, arg, orig, _IOC_NR(cmd), (void __user *)arg,
				  _IOC_SIZE(cmd));
	/*
	 * The wrapped form libcuda uses for large blocks: the 16-byte header copied once,
	 * the inner block treated as if direct (an XFER inside an XFER is the driver's to
	 * refuse). A fault, or a header of another size, is the driver's to answer.
	 */
	if (_IOC_SIZE(cmd) != sizeof(x) || copy_from_user(&x, (void __user *)arg, sizeof(x)) ||
	    x.cmd == NVA_ESC_IOCTL_XFER_CMD)
		return orig(f, cmd, arg);
	return nvh_escape(f, cmd, arg, orig, x.cmd, u64_to_user_ptr(x.ptr), x.size);
}

static long nvh_ioctl_wrap(struct file *f, unsigned int cmd, unsigned long arg)
{
	int idx = srcu_read_lock(&nvh_srcu);
	long ret = nvh_ioctl_body(f, cmd, arg);

	srcu_read_unlock(&nvh_srcu, idx);
	return ret;
}

/* The driver's release: it frees the file's objects; then so do we. */
static int nvh_close_wrap(struct inode *inode, struct file *f)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_close_fn orig = (nvh_close_fn)READ_ONCE(nvh.close.addr);
	struct nvh_file *rec;
	int ret;

	ret = orig(inode, f);
	mutex_lock(&nvh.files_lock);
	rec = nvh_file_find(f);
	if (rec)
		hash_del(&rec->node);
	mutex_unlock(&nvh.files_lock);
	if (rec)
		nvh_file_free(rec);
	srcu_read_unlock(&nvh_srcu, idx);
	return ret;
}

/* ---- attaching ---- */

/*
 * The ioctls the wrapper reads: RM_ALLOC, RM_FREE, RM_DUP_OBJECT, RM_VID_HEAP_CONTROL, and XFER, whose inner
 * escape only user memory tells. Every other (RM_CONTROL, most of what libcuda issues) goes to the driver
 * from the entry at once: redirecting it would cost the wrapper and a second pass through
 * ftrace to call the original, for nothing (docs/kmod.md, "Cost").
 */
static __always_inline bool nvh_reads(unsigned int cmd)
{
	return _IOC_NR(cmd) == NVA_ESC_RM_ALLOC || _IOC_NR(cmd) == NVA_ESC_RM_FREE ||
	       _IOC_NR(cmd) == NVA_ESC_RM_DUP_OBJECT || _IOC_NR(cmd) == NVA_ESC_RM_VID_HEAP_CONTROL ||
	       _IOC_NR(cmd) == NVA_ESC_IOCTL_XFER_CMD;
}

static void notrace nvh_ftrace(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct nvh_hook *h = container_of(ops, struct nvh_hook, ops);
	struct pt_regs *regs = ftrace_get_regs(fregs);

	/* The wrapper's own call of the original runs the original. */
	if (!regs || within_module(parent_ip, THIS_MODULE))
		return;
	if (h == &nvh.ioctl && !nvh_reads(regs_get_kernel_argument(regs, 1)))
		return;
	regs->ip = (unsigned long)h->wrapper;
}

/*
 * kallsyms_lookup_name, which is not exported: its address from a kprobe registered on
 * it and removed at once (the standard way to resolve a non-exported symbol), taken
 * once at load. The kprobe goes on this rarely called function rather than on the
 * driver's entry itself: arming and disarming a probe there would patch the hot entry
 * twice more (docs/kmod.md, "Open: patching a hot entry in the test VM").
 */
typedef unsigned long (*nvh_lookup_fn)(const char *name);
static nvh_lookup_fn nvh_lookup;

static int nvh_find_lookup(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int err = register_kprobe(&kp);

	if (err < 0)
		return err;
	nvh_lookup = (nvh_lookup_fn)kp.addr;
	unregister_kprobe(&kp);
#ifdef CONFIG_X86_64
	{
		/* With IBT a kprobe sits after the ENDBR64; the callable start is before it. */
		static const u8 endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
		u8 b[4];

		if (!copy_from_kernel_nofault(b, (u8 *)nvh_lookup - 4, 4) && !memcmp(b, endbr64, 4))
			nvh_lookup = (nvh_lookup_fn)((u8 *)nvh_lookup - 4);
	}
#endif
	return 0;
}

/* The start of function name in module `nvidia` ("nvidia:name": that module only), 0 if none. */
static unsigned long nvh_resolve(const char *name)
{
	char sym[KSYM_SYMBOL_LEN], want[KSYM_NAME_LEN + 16];
	unsigned long addr;

	snprintf(want, sizeof(want), "nvidia:%s", name);
	addr = nvh_lookup(want);
	if (!addr)
		return 0;
	/* Exactly that symbol, at its start, in the driver's module. */
	sprint_symbol(sym, addr);
	snprintf(want, sizeof(want), "%s+0x0/", name);
	if (strncmp(sym, want, strlen(want)) || !strstr(sym, " [nvidia]")) {
		pr_err("cgpu_km: enforce: %s resolved to %s, not the nvidia module's entry\n",
		       name, sym);
		return 0;
	}
	return addr;
}

static int nvh_hook_on(struct nvh_hook *h, const char *name, void *wrapper)
{
	int err;

	h->addr = nvh_resolve(name);
	if (!h->addr)
		return -ENOENT;
	h->wrapper = wrapper;
	memset(&h->ops, 0, sizeof(h->ops));
	h->ops.func = nvh_ftrace;
	/*
	 * No FTRACE_OPS_FL_RECURSION: nvh_ftrace calls nothing that could come back to it
	 * (inline helpers only, which the kernel builds notrace), so the guard ftrace would
	 * wrap around it is pure cost on every ioctl (docs/kmod.md, "Cost").
	 */
	h->ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY;
	err = ftrace_set_filter_ip(&h->ops, h->addr, 0, 0);
	if (err) {
		ftrace_free_filter(&h->ops);
		return err;
	}
	err = register_ftrace_function(&h->ops);
	if (err) {
		ftrace_free_filter(&h->ops);
		return err;
	}
	h->on = true;
	return 0;
}

static void nvh_hook_off(struct nvh_hook *h)
{
	if (!h->on)
		return;
	if (unregister_ftrace_function(&h->ops))
		pr_err("cgpu_km: enforce: unregistering the hook at %pS failed\n", (void *)h->addr);
	ftrace_free_filter(&h->ops);
	h->on = false;
}

/* The driver's version: nv_version, else the module's own. "" if not known. */
static void nvh_driver_version(char *buf, size_t len)
{
	struct file *fp;
	loff_t pos = 0;
	ssize_t n;

	buf[0] = '\0';
	if (nv_version && nv_version[0]) {
		strscpy(buf, nv_version, len);
		return;
	}
	fp = filp_open("/sys/module/nvidia/version", O_RDONLY, 0);
	if (IS_ERR(fp))
		return;
	n = kernel_read(fp, buf, len - 1, &pos);
	filp_close(fp, NULL);
	buf[n > 0 ? n : 0] = '\0';
	strim(buf);
}

/* nvh.lock held. Attaches if the driver is there and known; says why not otherwise. */
static void nvh_attach(void)
{
	const struct nvh_layout *l = NULL;
	char ver[64];
	unsigned int i;
	int err;

	lockdep_assert_held(&nvh.lock);
	if (nvh.attached)
		return;
	nvh_driver_version(ver, sizeof(ver));
	for (i = 0; i < ARRAY_SIZE(nvh_layouts); i++)
		if (!strcmp(ver, nvh_layouts[i].version))
			l = &nvh_layouts[i];
	if (!l) {
		snprintf(nvh.state, sizeof(nvh.state), "off (driver %s unknown)",
			 ver[0] ? ver : "version");
		pr_warn("cgpu_km: enforce=1 but enforcement is OFF: NVIDIA driver %s is not in the layout table\n",
			ver[0] ? ver : "of unknown version");
		return;
	}
	nvh.layout = l;
	/* The release first: every file charged through the ioctl is seen closing. */
	err = nvh_hook_on(&nvh.close, l->close_sym, nvh_close_wrap);
	if (!err) {
		err = nvh_hook_on(&nvh.ioctl, l->ioctl_sym, nvh_ioctl_wrap);
		if (err)
			nvh_hook_off(&nvh.close);
	}
	if (err) {
		snprintf(nvh.state, sizeof(nvh.state), "off (driver %s: cannot attach: %d)",
			 ver, err);
		pr_err("cgpu_km: enforce=1 but enforcement is OFF: cannot attach to driver %s (%s, %s): %d\n",
		       ver, l->ioctl_sym, l->close_sym, err);
		return;
	}
	nvh.attached = true;
	WRITE_ONCE(cgpu.driver_charged, true);
	snprintf(nvh.state, sizeof(nvh.state), "on (driver %s)", ver);
	pr_info("cgpu_km: enforcement on: attached to %s and %s of NVIDIA driver %s\n",
		l->ioctl_sym, l->close_sym, ver);
}

/*
 * nvh.lock held. No new call is redirected after this; calls already inside a wrapper
 * finish first. Files still tracked (only at cgpu_km's unload: the driver's own unload
 * comes after every file closed) let go of their charges.
 */
static void nvh_detach(const char *why)
{
	struct hlist_node *tmp;
	struct nvh_file *rec;
	int bkt;

	lockdep_assert_held(&nvh.lock);
	if (!nvh.attached)
		return;
	WRITE_ONCE(cgpu.driver_charged, false);
	nvh_hook_off(&nvh.ioctl);
	nvh_hook_off(&nvh.close);
	synchronize_srcu(&nvh_srcu);
	mutex_lock(&nvh.files_lock);
	hash_for_each_safe(nvh.files, bkt, tmp, rec, node) {
		hash_del(&rec->node);
		nvh_file_free(rec);
	}
	mutex_unlock(&nvh.files_lock);
	nvh.attached = false;
	nvh.layout = NULL;
	snprintf(nvh.state, sizeof(nvh.state), "off (%s)", why);
	pr_info("cgpu_km: enforcement off: detached (%s)\n", why);
}

static int nvh_module_event(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, "nvidia"))
		return NOTIFY_DONE;
	mutex_lock(&nvh.lock);
	if (action == MODULE_STATE_LIVE)
		nvh_attach();
	else if (action == MODULE_STATE_GOING)
		nvh_detach("driver unloaded");
	mutex_unlock(&nvh.lock);
	return NOTIFY_DONE;
}

static int nvh_show(struct seq_file *m, void *v)
{
	mutex_lock(&nvh.lock);
	seq_printf(m, "enforcement: %s\n", nvh.state);
	mutex_unlock(&nvh.lock);
	return 0;
}

int cgpu_nvhook_init(void)
{
	int err;

	if (enforce != 0 && enforce != 1) {
		pr_err("cgpu_km: enforce=%d is not 0 or 1\n", enforce);
		return -EINVAL;
	}
	if (!enforce)
		return 0;
	err = nvh_find_lookup();
	if (err) {
		pr_err("cgpu_km: enforce=1: cannot find kallsyms_lookup_name (%d)\n", err);
		return err;
	}
	err = init_srcu_struct(&nvh_srcu);
	if (err)
		return err;
	hash_init(nvh.files);
	strscpy(nvh.state, "off (no nvidia driver loaded)", sizeof(nvh.state));
	nvh.proc = proc_create_single("cgpu_km/enforcement", 0444, NULL, nvh_show);
	if (!nvh.proc) {
		cleanup_srcu_struct(&nvh_srcu);
		return -ENOMEM;
	}
	nvh.nb.notifier_call = nvh_module_event;
	err = register_module_notifier(&nvh.nb);
	if (err) {
		proc_remove(nvh.proc);
		cleanup_srcu_struct(&nvh_srcu);
		return err;
	}
	/*
	 * A driver loaded already: attach now. One that goes live meanwhile is attached
	 * by whichever of the two comes first (nvh.lock); a failure is logged and shown,
	 * and the load goes on with enforcement off.
	 */
	mutex_lock(&nvh.lock);
	if (nvh_resolve(nvh_layouts[0].ioctl_sym) || nvh_resolve(nvh_layouts[1].ioctl_sym))
		nvh_attach();
	mutex_unlock(&nvh.lock);
	return 0;
}

void cgpu_nvhook_exit(void)
{
	if (!enforce)
		return;
	unregister_module_notifier(&nvh.nb);
	mutex_lock(&nvh.lock);
	nvh_detach("cgpu_km unloading");
	mutex_unlock(&nvh.lock);
	/*
	 * A task redirected to a wrapper but not yet inside its read section, or just
	 * past its end, is still on this module's text: wait until every task has passed
	 * a voluntary switch (what livepatch and ftrace's own trampolines rely on).
	 */
	synchronize_rcu_tasks();
	proc_remove(nvh.proc);
	cleanup_srcu_struct(&nvh_srcu);
}
