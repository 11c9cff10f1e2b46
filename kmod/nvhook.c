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
	struct cgpu_attachment *att;	/* the container's ledger (its files count) */
	struct cgpu_slot *slot;		/* GPU 0's (this slice's attribution) */
	struct mutex lock;		/* objs, nobjs */
	DECLARE_HASHTABLE(objs, 6);
	unsigned int nobjs;
};

/* One memory object charged: (client, handle) -> bytes. */
struct nvh_obj {
	struct hlist_node node;
	u32 client, handle;
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
		cgpu_ledger_uncharge(rec->slot, o->bytes, &used, &memsize);
	cgpu_free(o);
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

/*
 * The record to charge an allocation of the caller's on f to. NULL with *refuse false:
 * the caller is in no container (or its container has no instance on GPU 0): it passes
 * untouched. NULL with *refuse true: the caller is limited but cannot be charged now
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
		if (cgpu_bind_contains(&rec->slot->inst->bind, current))
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
	if (!err) {
		rec->slot = cgpu_slot_of(rec->att, 0);
		if (!rec->slot) {
			cgpu_detach(rec->att);
			err = -ENOENT;	/* not limited on GPU 0: see docs, per-GPU attribution */
		}
	}
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
		if (!cgpu_bind_contains(&rec->slot->inst->bind, current)) {
			*refuse = true;
			return NULL;
		}
	}
	return rec;
}

/* ---- the wrapped calls ---- */

/* The driver's answer to a limited caller, without calling it: status set, return 0. */
static long nvh_answer(void __user *status, u32 code)
{
	return put_user(code, (u32 __user *)status) ? -EFAULT : 0;
}

static long nvh_rm_alloc(struct file *f, unsigned int cmd, unsigned long arg,
			 nvh_ioctl_fn orig)
{
	void __user *uarg = (void __user *)arg;
	unsigned int size = _IOC_SIZE(cmd);
	size_t status_off = size == sizeof(struct nva_nvos21) ?
		offsetof(struct nva_nvos21, status) : offsetof(struct nva_nvos64, status);
	u32 msize = nvh.layout->memparams_size;
	union { struct nva_nvos21 p21; struct nva_nvos64 p64; } before, after;
	u8 mp[NVA_MEMPARAMS_SIZE_NEW];
	struct nvh_obj *o, *stale;
	struct nvh_file *rec;
	u64 want, est, got, used, memsize;
	bool refuse;
	long ret;
	u32 st;

	/* One copy of the block; a fault is the driver's to report. */
	if (copy_from_user(&before, uarg, size) ||
	    before.p21.hClass != NVA_NV01_MEMORY_LOCAL_USER)
		return orig(f, cmd, arg);
	rec = nvh_file_for_caller(f, &refuse);
	if (!rec)
		return refuse ? nvh_answer(uarg + status_off, NVA_ERR_NO_MEMORY) :
				orig(f, cmd, arg);
	/* The class's parameters, once; answered as the driver answers them. */
	if (!before.p21.pAllocParms)
		return nvh_answer(uarg + status_off, NVA_ERR_INVALID_ARGUMENT);
	if (copy_from_user(mp, u64_to_user_ptr(before.p21.pAllocParms), msize))
		return nvh_answer(uarg + status_off, NVA_ERR_INVALID_ADDRESS);
	memcpy(&want, mp + NVA_MEMPARAMS_SIZE_OFF, sizeof(want));
	if (want > U64_MAX - (NVH_PAGE - 1))
		return nvh_answer(uarg + status_off, NVA_ERR_NO_MEMORY);
	est = round_up(want, NVH_PAGE);

	/* Room for the object's line first, then the charge: nothing to undo after. */
	o = cgpu_zalloc(sizeof(*o));
	if (!o)
		return nvh_answer(uarg + status_off, NVA_ERR_NO_MEMORY);
	mutex_lock(&rec->lock);
	refuse = rec->nobjs >= NVH_OBJS_MAX;
	if (!refuse)
		rec->nobjs++;	/* the place is taken now; given back on failure */
	mutex_unlock(&rec->lock);
	if (refuse || (est && cgpu_ledger_charge(rec->slot, est, &used, &memsize))) {
		if (!refuse) {
			mutex_lock(&rec->lock);
			rec->nobjs--;
			mutex_unlock(&rec->lock);
		}
		cgpu_free(o);
		return nvh_answer(uarg + status_off, NVA_ERR_NO_MEMORY);
	}

	ret = orig(f, cmd, arg);

	/*
	 * The driver's answer, read back once: status, the new handle and the size it
	 * took (written back into the class parameters). Time of check to time of use:
	 * another thread of the caller may rewrite these between the driver's write and
	 * this read; the full version asks the driver about the handle instead (docs).
	 */
	got = 0;
	st = NVA_ERR_INVALID_ARGUMENT;
	if (!ret && !copy_from_user(&after, uarg, size) &&
	    !copy_from_user(mp, u64_to_user_ptr(before.p21.pAllocParms), msize)) {
		memcpy(&st, (u8 *)&after + status_off, sizeof(st));
		memcpy(&got, mp + NVA_MEMPARAMS_SIZE_OFF, sizeof(got));
	}
	mutex_lock(&rec->lock);
	if (st != NVA_NV_OK) {
		rec->nobjs--;
		if (est)
			cgpu_ledger_uncharge(rec->slot, est, &used, &memsize);
		mutex_unlock(&rec->lock);
		cgpu_free(o);
		return ret;
	}
	/* What the driver took: less than the 2 MiB estimate is given back. */
	if (got < est) {
		cgpu_ledger_uncharge(rec->slot, est - got, &used, &memsize);
	} else if (got > est && cgpu_ledger_charge(rec->slot, got - est, &used, &memsize)) {
		/* Larger pages than 2 MiB, or the size rewritten under us: see docs. */
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: the driver took %llu bytes, %llu over the budget's room; %llu charged\n",
				    task_tgid_nr(current), got, got - est, est);
		got = est;
	}
	o->client = after.p21.hRoot;
	o->handle = after.p21.hObjectNew;
	o->bytes = got;
	/* A line left by an object freed with its parent: that handle is taken again. */
	stale = nvh_obj_find(rec, o->client, o->handle);
	if (stale)
		nvh_obj_drop(rec, stale);
	hash_add(rec->objs, &o->node, nvh_key(o->client, o->handle));
	mutex_unlock(&rec->lock);
	return ret;
}

static long nvh_rm_free(struct file *f, unsigned int cmd, unsigned long arg,
			nvh_ioctl_fn orig)
{
	void __user *uarg = (void __user *)arg;
	struct nva_nvos00 before, after;
	struct hlist_node *tmp;
	struct nvh_file *rec;
	struct nvh_obj *o;
	long ret;
	int bkt;

	mutex_lock(&nvh.files_lock);
	rec = nvh_file_find(f);
	mutex_unlock(&nvh.files_lock);
	if (!rec || copy_from_user(&before, uarg, sizeof(before)))
		return orig(f, cmd, arg);
	ret = orig(f, cmd, arg);
	/*
	 * Given back only when the driver says it freed, and the block still names what it
	 * named before the call (a rewrite in between keeps the charge: too much, not too
	 * little). Objects freed with a parent other than the client stay charged until
	 * their handle is reused or the file closes (docs).
	 */
	if (ret || copy_from_user(&after, uarg, sizeof(after)) || after.status != NVA_NV_OK ||
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
			nvh_obj_drop(rec, o);
	}
	mutex_unlock(&rec->lock);
	return ret;
}

static long nvh_ioctl_body(struct file *f, unsigned int cmd, unsigned long arg)
{
	nvh_ioctl_fn orig = (nvh_ioctl_fn)READ_ONCE(nvh.ioctl.addr);
	unsigned int size = _IOC_SIZE(cmd);

	switch (_IOC_NR(cmd)) {
	case NVA_ESC_RM_ALLOC:
		if (size == sizeof(struct nva_nvos21) || size == sizeof(struct nva_nvos64))
			return nvh_rm_alloc(f, cmd, arg, orig);
		break;
	case NVA_ESC_RM_FREE:
		if (size == sizeof(struct nva_nvos00))
			return nvh_rm_free(f, cmd, arg, orig);
		break;
	}
	/* NV_ESC_IOCTL_XFER_CMD and every other escape: not looked at yet (docs). */
	return orig(f, cmd, arg);
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

static void notrace nvh_ftrace(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct nvh_hook *h = container_of(ops, struct nvh_hook, ops);
	struct pt_regs *regs = ftrace_get_regs(fregs);

	/* The wrapper's own call of the original runs the original. */
	if (regs && !within_module(parent_ip, THIS_MODULE))
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
	h->ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY |
		       FTRACE_OPS_FL_RECURSION;
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
