// SPDX-License-Identifier: GPL-2.0
/*
 * enforce=1: the budget at the NVIDIA driver's own boundary (docs/kmod.md, "Enforcement
 * at the driver's boundary"). cgpu_km interposes on RM's entry, rm_ioctl, which the
 * driver's ioctl calls with its own kernel copy of the escape's block, on the file's
 * open and release, on the export to a dma-buf (which does not pass rm_ioctl), on
 * the duplicates nvidia-uvm makes and frees for its mappings of RM memory and on what
 * it keeps of registered channels and GPU VA spaces, and on nvidia-uvm's own makers of
 * page tables (sparse mappings, dynamic parallelism regions, semaphore pools), range
 * free, file release and makers of managed ranges and va_spaces (so
 * that a container gets no managed memory), all found by name, so that a limited
 * container's video-memory
 * allocations are charged to its ledger whether or not the process cooperates
 * (libcgpu, static binaries, raw ioctls alike). The charge is what the driver says it
 * holds for the new object, asked by handle through the API it gives kernel clients
 * (nvidia_get_rm_ops), with buffers no task of the tenant can write. Its channel groups
 * and channels and its GPU VA spaces, whose memory the driver reports nowhere, are
 * counted and capped, and so are those nvidia-uvm keeps for it.
 *
 * How: each function's address comes from kallsyms_lookup_name("nvidia:<name>"), itself
 * found once at load by a kprobe registered on it and removed at once (it is not
 * exported; the kprobe lookup is the standard way to resolve a non-exported symbol). The call is redirected with an
 * ftrace_ops on that one address, FTRACE_OPS_FL_IPMODIFY (with the arguments ftrace
 * passes by default, or SAVE_REGS where it passes none: compat.h), as livepatch does:
 * the callback sets regs->ip to our wrapper, which calls the original function
 * by its start address. That second call passes the same ftrace site again; the
 * callback lets it through because its caller (parent_ip) lies in this module. Nothing
 * else in cgpu_km calls the hooked functions, so "called from cgpu_km" means "a
 * wrapper's own call". (Jumping past the fentry call instead would break on kernels with IBT, where
 * the function starts with ENDBR64.) The kernel's own x86_64 ftrace code of 6.1 does
 * the rest: FTRACE_OPS_FL_RECURSION, trampolines, text patching.
 *
 * Lifetime: the hooks are registered when both cgpu_km and a driver of a version in
 * the table are there: at cgpu_km's load if `nvidia` is loaded, else when it goes live
 * (module notifier); they go at the driver's MODULE_STATE_GOING (its files are all
 * closed by then: each pins it) and at cgpu_km's unload. nvidia-uvm's own functions
 * (nvidia_uvm:) the same way, on with the driver's or as it comes (before its init
 * makes its device), off at its GOING or before the driver's. Every wrapper runs inside an
 * SRCU read section; unload unregisters the ftrace_ops (no new redirection), then
 * waits for the SRCU readers (calls inside the driver) and for an RCU-tasks grace
 * period (a task redirected but not yet inside the read section, or just past its
 * end, is still on our text), before any of the module's memory goes.
 *
 * Locks, outermost first: nvh.lock (attach/detach) is never held by a wrapper;
 * nvh.files_lock (the table of tracked files) -> rec->lock (one file's objects) ->
 * nvh.mem_lock (memory shared by duplicates) -> inst->lock (the ledger), any of them
 * skipped; nvh.clients_lock (which file holds a client's lines) under any of them, with
 * none taken inside it. nvh.holds_lock (nvidia-uvm's mappings and what it keeps) -> a
 * holder's rec->lock -> nvh.mem_lock, never with files_lock. nvcarry.c's lock (the files carrying a hot
 * update's reservations) under nvh.lock, inst->lock (upgrade.c's looks) or alone.
 * cgpu.reg_lock (attach to a container) is taken with none of them held. No
 * lock is held across a call into the driver (rm_ioctl, or the kernel client's
 * operations, which take the driver's own locks). The wrappers of nvidia-uvm's makers
 * run under its locks (the caller's mmap_lock, its va_space's) and take cgpu.reg_lock
 * alone, which is never held across a user copy or a call into either driver.
 */
#include <linux/delay.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/ftrace.h>
#include <linux/hashtable.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/srcu.h>
#include <linux/uaccess.h>
#include "cgpu.h"
#include "compat.h"
#include "nvabi.h"
#include "lib/rules.h"

static int enforce;
module_param(enforce, int, 0444);
MODULE_PARM_DESC(enforce, "1: charge video-memory allocations at the NVIDIA driver's RM entry (docs/kmod.md); 0 (default): do not attach");

static char *nv_version = "";
module_param(nv_version, charp, 0444);
MODULE_PARM_DESC(nv_version, "the NVIDIA driver's version, for its layouts; empty: the driver module's own (/sys/module/nvidia/version)");

/*
 * The releases whose layouts are known, each checked against NVIDIA's headers by
 * simdrv/conformance. Any other: enforcement stays off, and says so.
 */
static const struct nvh_layout {
	const char *version;
	const char *open_sym, *close_sym;	/* the device files' open and release */
	u32 size_off;		/* of the size in NV_MEMORY_ALLOCATION_PARAMS */
	/*
	 * nvidia-uvm makes its duplicates in one RM client, the session of uvm_global.c,
	 * so that one is named by its handle alone and a hot update carries the mappings
	 * (map=). 535 also makes a session per MIG partition (nv_gpu_ops.c,
	 * uvm_gpu.c): a handle may repeat across them.
	 */
	bool one_uvm_client;
} nvh_layouts[] = {
	{ "535.261.03", "nvidia_frontend_open", "nvidia_frontend_close", NVA_MEMPARAMS_SIZE_OFF, false },
	{ "550.163.01", "nvidia_open", "nvidia_close", NVA_MEMPARAMS_SIZE_OFF, true },
};

/* RM's entry and the kernel client's API: one name each in every release of the table. */
#define NVH_RM_IOCTL_SYM	"rm_ioctl"
#define NVH_GET_RM_OPS_SYM	"nvidia_get_rm_ops"
#define NVH_DMABUF_SYM		"nv_dma_buf_export"
/* nvidia.ko's half of nvidia-uvm's mappings of RM memory (nv_uvm_interface.h). */
#define NVH_UVM_DUP_SYM		"nvUvmInterfaceDupMemory"
#define NVH_UVM_FREE_SYM	"nvUvmInterfaceFreeDupedHandle"
/* and of its channels' registration (uvm_user_channel.c) */
#define NVH_UVM_RETAIN_SYM	"nvUvmInterfaceRetainChannel"
#define NVH_UVM_RELEASE_SYM	"nvUvmInterfaceReleaseChannel"
/* and of its GPU VA spaces' (uvm_va_space.c) */
#define NVH_UVM_DUP_VASPACE_SYM	"nvUvmInterfaceDupAddressSpace"
#define NVH_UVM_DESTROY_VASPACE_SYM "nvUvmInterfaceAddressSpaceDestroy"
/*
 * nvidia-uvm's own handlers of the commands that make page tables from no RM call (a
 * sparse mapping, a dynamic parallelism region, a semaphore pool) and of a range's free,
 * and its file's release (uvm_api.h, uvm.c), in its module: one name each in 535 and 550.
 */
#define NVH_UVM_MOD		"nvidia_uvm"
#define NVH_UVM_SPARSE_SYM	"uvm_api_map_external_sparse"
#define NVH_UVM_DP_REGION_SYM	"uvm_api_map_dynamic_parallelism_region"
#define NVH_UVM_POOL_SYM	"uvm_api_alloc_semaphore_pool"
#define NVH_UVM_RANGE_FREE_SYM	"uvm_api_free"
#define NVH_UVM_CLOSE_SYM	"uvm_release_entry"
/* and its makers of a managed range (uvm_mmap's) and of a va_space (UVM_INITIALIZE's) */
#define NVH_UVM_MMAP_SYM	"uvm_va_range_create_mmap"
#define NVH_UVM_VA_SPACE_SYM	"uvm_va_space_create"
#define NVH_UVM_TRIES		5	/* looks at what a mapping or a keep names before it is refused */

#define NVH_PAGE	(2ULL << 20)	/* the charge is checked in 2 MiB pages */
#define NVH_FILE_BITS	8
#define NVH_HOLD_BITS	12		/* a hold per live allocation of every container process */

/*
 * Channel groups, channels, GPU VA spaces and devices a container may hold at the
 * driver per GPU (docs/kmod.md, "Channels"): the driver holds memory for each (for a
 * device, the VA space RM may make it of its own) that it reports nowhere, so they are
 * counted, not charged. 0: no cap (the hole open again). Read at each allocation.
 */
#define NVH_CHANNELS_DEFAULT	256
static unsigned int max_channels = NVH_CHANNELS_DEFAULT;

static int nvh_set_max_channels(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 10, &v) || v > CGPU_FILE_OBJS_MAX) {
		/* As written, without sysfs's newline, and not all of a long one. */
		pr_err("cgpu_km: max_channels=%.*s is not a count of 0..%u (0: no cap)\n",
		       (int)min_t(size_t, strcspn(val, "\n"), 16), val, CGPU_FILE_OBJS_MAX);
		return -EINVAL;
	}
	WRITE_ONCE(max_channels, v);
	return 0;
}

static const struct kernel_param_ops nvh_max_channels_ops = {
	.set = nvh_set_max_channels,
	.get = param_get_uint,
};
module_param_cb(max_channels, &nvh_max_channels_ops, &max_channels, 0644);
MODULE_PARM_DESC(max_channels, "enforce=1: channel groups, channels, GPU VA spaces and devices a limited container may hold per GPU, 0..16384 (0: no cap; default 256)");

typedef u32 (*nvh_rm_ioctl_fn)(void *sp, void *nv, void *nvfp, u32 cmd, void *data, u32 size);
typedef int (*nvh_file_fn)(struct inode *, struct file *);
typedef u32 (*nvh_get_rm_ops_fn)(struct nva_rm_ops *);
typedef u32 (*nvh_dmabuf_fn)(void *nv, void *params);
typedef u32 (*nvh_uvm_dup_fn)(void *device, u32 hClient, u32 hPhysMemory, u32 *hDupMemory, void *info);
typedef u32 (*nvh_uvm_free_fn)(void *device, u32 hPhysHandle);
typedef u32 (*nvh_uvm_retain_fn)(void *vaSpace, u32 hClient, u32 hChannel, void **retained, void *info);
typedef u32 (*nvh_uvm_dup_vaspace_fn)(void *device, u32 hUserClient, u32 hUserVASpace, void **vaSpace,
				      void *info);
typedef void (*nvh_uvm_let_go_fn)(void *kept);
typedef u32 (*nvh_uvm_api_fn)(void *params, struct file *filp);
typedef u32 (*nvh_uvm_mmap_fn)(void *va_space, void *mm, void *vma_wrapper, void **out);
typedef u32 (*nvh_uvm_va_space_fn)(void *mapping, void **va_space_ptr, u64 flags);

struct nvh_hook {
	unsigned long addr;		/* the driver's function, its start: callable */
	void *wrapper;
	struct ftrace_ops ops;
	bool on;
};

/* One driver file that a limited container opened or allocated through. */
struct nvh_file {
	struct hlist_node node;		/* nvh.files, by key; read under RCU by nvh_ftrace */
	struct rcu_head rcu;
	const void *key;		/* the file's private data, rm_ioctl's nvfp: identity only */
	u64 id;				/* unique while cgpu_km is loaded (a key can come again) */
	/*
	 * Recorded at the file's open, so every call that changed a handle on it passed a
	 * wrapper: only then can its memory be the source of a followed duplicate. Cleared
	 * if a line of it could not be indexed by its client (nvh_client_add).
	 */
	bool from_open;
	/*
	 * The calls on the file that may change what a handle of its clients names (frees,
	 * and allocations and duplicates of the classes read here, with cgpu_km's own frees
	 * inside them), started and not yet done: nvh_op_begin.
	 */
	atomic_t ops_started, ops_busy;
	struct cgpu_attachment *att;	/* the container's ledgers, one per GPU (its files count) */
	struct mutex lock;		/* objs, nobjs */
	DECLARE_HASHTABLE(objs, 6);
	unsigned int nobjs;
};

/*
 * One object the driver made for the file: a device or subdevice (which GPU the objects
 * under it are on; a device is counted too: nvh_device_counts), a video-memory object
 * (its bytes, charged to that GPU's ledger), or a channel group, channel or VA space
 * (counted on that GPU's instance: max_channels).
 */
enum nvh_kind { NVH_DEVICE, NVH_SUBDEVICE, NVH_MEMORY, NVH_CHANNEL, NVH_VASPACE };

struct nvh_obj {
	struct hlist_node node;
	struct list_head doom;		/* a tree being dropped (nvh_drop_tree) */
	bool doomed;			/* on that list */
	u32 client, handle, parent;
	u32 gpu;
	enum nvh_kind kind;
	u64 id;				/* memory, once a duplicate's source: unique */
	struct nvh_file *rec;		/* memory: the file it is in */
	/* Memory no duplicate names: the ledger charged and the bytes; a channel's slot. */
	struct cgpu_slot *slot;
	u64 bytes;
	/* Memory a followed duplicate names too (then slot and bytes are unused). */
	struct nvh_mem *mem;
	/* A device's: bit i while it holds a count on rec->att->slots[i] (nvh_device_counts). */
	u32 counts;
	struct list_head mlink;		/* mem->lines, nvh.mem_lock */
};

/*
 * Video memory named by more than one handle of a container (the original and its
 * followed duplicates, in any of the container's files): charged once, to one file's
 * slot (the payer's) until the last line goes. The payer's file closing while others
 * hold it moves the charge to one of them (nvh_mem_unlink). nvh.mem_lock.
 */
struct nvh_mem {
	struct list_head lines;
	struct nvh_file *payer;
	struct cgpu_slot *slot;		/* the payer's, on gpu */
	u64 bytes;
	u32 gpu;
};

/*
 * A process of a container whose memory nvidia-uvm maps (nvh_uvm_dup): a record of its
 * own, not a driver file's, attached to the container as a file is, whose lines are the
 * duplicates nvidia-uvm holds for the mappings. They join the memory's lines, so the
 * memory stays charged while mapped, and the charge moves to this record's slot when
 * the handles and files it came from are gone. users: wrappers between finding it and
 * being done, and holds; the record goes with the last. nvh.holds_lock.
 */
struct nvh_holder {
	struct hlist_node node;		/* nvh.holders, by pid */
	pid_t pid;
	u64 start;
	unsigned int users;
	struct nvh_file *rec;
};

/*
 * A channel or VA space of a container that nvidia-uvm keeps (nvh_kept_take): counted
 * again against max_channels on the holder's slot (a channel with its group), from the
 * retain or duplicate to its release, since what it keeps stays in the driver after the
 * process frees its own.
 * nvh.holds_lock.
 */
struct nvh_kept {
	struct hlist_node node;		/* nvh.kept, by kept */
	struct hlist_node dnode;	/* a VA space's: nvh.kept_devs, by device */
	void *kept;			/* the driver's: what its release is called with */
	const void *device;		/* a VA space's: nvidia-uvm's device it is duplicated on */
	struct nvh_holder *holder;	/* one of its users */
	struct cgpu_slot *slot;		/* holder->rec's, on the object's GPU */
	unsigned int n;			/* counts taken there */
};

/*
 * A span of VA nvidia-uvm made page tables for on the GPU itself, from no RM call, for a
 * caller in a container (nvh_uvm_span_charge): a sparse mapping, a dynamic parallelism
 * region or a semaphore pool. Its tables' most charged as lines of holder's record on
 * the GPU its UUID names or, if none of the container's does (or it names none), on
 * each of the container's, until the range's free or the file's release
 * (nvh_spans_forget). nvh.holds_lock.
 */
struct nvh_span {
	struct hlist_node node;		/* nvh.spans, by file */
	const struct file *file;	/* nvidia-uvm's, its va_space */
	u64 start, end;			/* inclusive */
	u8 uuid[CGPU_UUID_BYTES];	/* the GPU it was asked on; zero: none named */
	struct nvh_holder *holder;	/* one of its users */
	unsigned int n;
	struct nvh_obj *tables[CGPU_MAX_GPUS];	/* in holder->rec */
};

/* One duplicate nvidia-uvm holds for a mapping: its handle in nvidia-uvm's client on device. */
struct nvh_hold {
	struct hlist_node node;		/* nvh.holds, by handle */
	const void *device;
	u32 hdup;
	struct nvh_obj *line;		/* in holder->rec: video memory's */
	/* In holder->rec: its page tables' charge, on each GPU it may be on (system memory's). */
	unsigned int ntables;
	struct nvh_obj *tables[CGPU_MAX_GPUS];
	struct nvh_holder *holder;
};


static struct {
	struct mutex lock;		/* attach, detach, state */
	bool attached;
	bool notifier;
	const struct nvh_layout *layout;	/* fixed while attached */
	char state[160];		/* /proc/cgpu_km/enforcement */
	struct nvh_hook rm_ioctl, open, close, dmabuf, uvm_dup, uvm_free, uvm_retain, uvm_release,
			  uvm_dup_vaspace, uvm_destroy_vaspace;
	/* nvidia-uvm's own functions, on while it is loaded and the driver's hooks are */
	struct nvh_hook uvm_sparse, uvm_dp_region, uvm_pool, uvm_range_free, uvm_close, uvm_mmap,
		uvm_va_space;
	bool uvm_on;
	atomic64_t managed_refused;	/* containers' mmaps of nvidia-uvm refused */
	atomic64_t hmm_off;		/* containers' va_spaces made with HMM off */
	struct nva_rm_ops rm;		/* the driver's kernel client API, fixed while attached */
	atomic64_t taken_back;		/* objects freed after the fact (over the budget) */
	atomic64_t channels_refused;	/* at max_channels */
	struct notifier_block nb;
	struct mutex files_lock;
	DECLARE_HASHTABLE(files, NVH_FILE_BITS);
	struct mutex mem_lock;		/* every struct nvh_mem */
	struct mutex clients_lock;	/* clients; taken with no other lock inside */
	DECLARE_HASHTABLE(clients, NVH_FILE_BITS);
	atomic64_t ids;			/* of files and memory lines */
	atomic64_t followed;		/* duplicates followed */
	struct mutex holds_lock;	/* holders, holds, kept, spans; files_lock never inside */
	DECLARE_HASHTABLE(holders, NVH_FILE_BITS);
	DECLARE_HASHTABLE(holds, NVH_HOLD_BITS);
	atomic_t nholds;		/* read by nvh_ftrace: the free is redirected only if any */
	atomic64_t mapped;		/* nvidia-uvm's mappings followed */
	DECLARE_HASHTABLE(kept, NVH_FILE_BITS);
	DECLARE_HASHTABLE(kept_devs, NVH_FILE_BITS);
	DECLARE_HASHTABLE(spans, NVH_FILE_BITS);
	atomic_t nspans;		/* read by nvh_ftrace: a free or release is redirected only if any */
	atomic_t nkept;			/* read by nvh_ftrace: the releases are redirected only if any */
	struct proc_dir_entry *proc;
} nvh = {
	.lock = __MUTEX_INITIALIZER(nvh.lock),
	.files_lock = __MUTEX_INITIALIZER(nvh.files_lock),
	.mem_lock = __MUTEX_INITIALIZER(nvh.mem_lock),
	.clients_lock = __MUTEX_INITIALIZER(nvh.clients_lock),
	.holds_lock = __MUTEX_INITIALIZER(nvh.holds_lock),
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

/* How many lines rec has under (client, handle): more than one after a race (nvh_record). */
static unsigned int nvh_lines(struct nvh_file *rec, u32 client, u32 handle)
{
	struct nvh_obj *o;
	unsigned int n = 0;

	hash_for_each_possible(rec->objs, o, node, nvh_key(client, handle))
		n += o->client == client && o->handle == handle;
	return n;
}

/* Devices and subdevices: the lines that say which GPU, indexed by client (nvh_client_add). */
static bool nvh_gpu_line(const struct nvh_obj *o)
{
	return o->kind == NVH_DEVICE || o->kind == NVH_SUBDEVICE;
}

/* A channel group, channel or VA space: one of its slot's count (max_channels). */
static bool nvh_counted(const struct nvh_obj *o)
{
	return o->kind == NVH_CHANNEL || o->kind == NVH_VASPACE;
}

/* Gives back the counts of mask on rec's slots (nvh_device_counts). */
static void nvh_counts_give(struct nvh_file *rec, u32 mask)
{
	unsigned int i;

	for (i = 0; i < rec->att->n; i++)
		if (mask & BIT(i))
			cgpu_ledger_chan_give(&rec->att->slots[i], 1);
}

/* What line o holds against max_channels, given back: it is gone. */
static void nvh_obj_uncount(struct nvh_file *rec, struct nvh_obj *o)
{
	if (nvh_counted(o))
		cgpu_ledger_chan_give(o->slot, 1);
	if (o->counts) {
		nvh_counts_give(rec, o->counts);
		o->counts = 0;
	}
}

/* What an allocation of counted class cls is recorded as. */
static enum nvh_kind nvh_counted_kind(u32 cls)
{
	return cls == NVA_FERMI_VASPACE_A ? NVH_VASPACE : NVH_CHANNEL;
}

/*
 * The driver's own answer for one past the cap: a GPU out of channels for a channel
 * group or channel, out of a resource other than memory for a VA space.
 */
static u32 nvh_counted_refusal(enum nvh_kind kind)
{
	return kind == NVH_VASPACE ? NVA_ERR_INSUFFICIENT_RESOURCES : NVA_ERR_NO_FREE_FIFOS;
}

/*
 * Line o of shared memory is gone. The memory's payer is always the file of one of its
 * lines: when o was the payer's last, the charge moves to the file of another line, a
 * move within one instance that leaves its total as it was (every line of a memory is
 * in the same container: a duplicate into another is refused, so that file has a slot
 * on the instance). The last line gives the charge back, unless its file is closing
 * (closing: its release gives back all it holds).
 */
static void nvh_mem_unlink(struct nvh_obj *o, bool closing)
{
	struct nvh_mem *m = o->mem;
	struct nvh_obj *q, *heir = NULL;
	struct cgpu_slot *to;
	u64 used, memsize;

	mutex_lock(&nvh.mem_lock);
	list_del(&o->mlink);
	if (list_empty(&m->lines)) {
		/* EAGAIN while a hot update is frozen: left with the payer (too much). */
		if (!closing)
			cgpu_ledger_uncharge(m->slot, m->bytes, &used, &memsize);
		mutex_unlock(&nvh.mem_lock);
		cgpu_free(m);
		return;
	}
	if (m->payer == o->rec) {
		list_for_each_entry(q, &m->lines, mlink) {
			if (q->rec == m->payer) {
				heir = NULL;
				break;
			}
			heir = heir ?: q;
		}
	}
	if (heir) {
		to = cgpu_slot_of(heir->rec->att, m->gpu);
		if (!WARN_ON_ONCE(!to || to->inst != m->slot->inst)) {
			cgpu_ledger_transfer(m->slot, to, m->bytes);
			m->slot = to;
			m->payer = heir->rec;
		}
	}
	mutex_unlock(&nvh.mem_lock);
}

/*
 * Which tracked files hold lines under an RM client (RM gives each client to the one
 * file that made it), so that a duplicate's source is found by its client at once
 * rather than by a walk of every file under files_lock, which a tenant issuing
 * duplicates without pause would hold for as long as the node has files. One entry per
 * (client, file): a client with lines in two listed files (a handle made again in
 * another file while the first's lines of it were still going) is no source until one
 * of them lets go. Only devices and subdevices are counted, which come and go far less
 * often than memory: an allocation's memory line is under a parent of the same file
 * (memory under a parent not tracked is refused) and goes with it; a duplicate's line
 * under a parent its file does not track may leave its client without an entry for
 * that file, and is then no source (refused, never guessed).
 */
struct nvh_client {
	struct hlist_node node;
	u32 client;
	struct nvh_file *rec;
	unsigned int parents;		/* rec's device and subdevice lines under client */
};

static struct nvh_client *nvh_client_find(u32 client, const struct nvh_file *rec)
{
	struct nvh_client *k;

	lockdep_assert_held(&nvh.clients_lock);
	hash_for_each_possible(nvh.clients, k, node, client)
		if (k->client == client && k->rec == rec)
			return k;
	return NULL;
}

/*
 * One more device or subdevice line of rec under client; rec->lock held. The entry is
 * made outside the global clients_lock (the file's own lock is held: only its
 * container waits on the allocation). Where it cannot be made, none of rec's memory
 * can be a duplicate's source any more (refused, never guessed).
 */
static void nvh_client_add(struct nvh_file *rec, u32 client)
{
	struct nvh_client *k, *made = NULL;

	for (;;) {
		mutex_lock(&nvh.clients_lock);
		k = nvh_client_find(client, rec);
		if (k || made)
			break;
		mutex_unlock(&nvh.clients_lock);
		made = cgpu_zalloc(sizeof(*made));
		if (!made) {
			WRITE_ONCE(rec->from_open, false);
			return;
		}
	}
	if (!k) {
		k = made;
		made = NULL;
		k->client = client;
		k->rec = rec;
		hash_add(nvh.clients, &k->node, client);
	}
	k->parents++;
	mutex_unlock(&nvh.clients_lock);
	if (made)
		cgpu_free(made);
}

/*
 * A device or subdevice line of rec under client gone; rec->lock held, or rec no longer
 * reachable. No entry: it could not be made (rec is no source since).
 */
static void nvh_client_del(const struct nvh_file *rec, u32 client)
{
	struct nvh_client *k;

	mutex_lock(&nvh.clients_lock);
	k = nvh_client_find(client, rec);
	if (k && --k->parents == 0) {
		hash_del(&k->node);
		cgpu_free(k);
	}
	mutex_unlock(&nvh.clients_lock);
}

/*
 * The one listed file holding lines under client, or NULL (none, or two). files_lock
 * held: an entry goes before its file is freed, and a listed file is not freed while
 * files_lock is held, so the file found stays valid until files_lock goes. A file
 * leaves nvh.files (hash_del_rcu, which unhashes the node) under files_lock as it
 * closes, before its entries go.
 */
static struct nvh_file *nvh_client_rec(u32 client)
{
	struct nvh_file *rec = NULL;
	struct nvh_client *k;
	unsigned int n = 0;

	lockdep_assert_held(&nvh.files_lock);
	mutex_lock(&nvh.clients_lock);
	hash_for_each_possible(nvh.clients, k, node, client)
		if (k->client == client && !hlist_unhashed(&k->rec->node)) {
			rec = k->rec;
			n++;
		}
	mutex_unlock(&nvh.clients_lock);
	return n == 1 ? rec : NULL;
}

/* The object is gone from the driver: its bytes back to the ledger. rec->lock held. */
static void nvh_obj_drop(struct nvh_file *rec, struct nvh_obj *o)
{
	u64 used, memsize;

	hash_del(&o->node);
	if (nvh_gpu_line(o))
		nvh_client_del(rec, o->client);
	nvh_obj_uncount(rec, o);
	rec->nobjs--;
	/*
	 * EAGAIN while a hot update is frozen: the bytes stay charged to the file until it
	 * closes (too much, never too little).
	 */
	if (o->mem)
		nvh_mem_unlink(o, false);
	else if (o->bytes)
		cgpu_ledger_uncharge(o->slot, o->bytes, &used, &memsize);
	cgpu_free(o);
}

/*
 * The driver freed top and everything under it: a device takes its subdevices, channel
 * groups, channels and the memory under them with it, a group its channels. Few lines
 * have children, so one pass over the table per parent. A parent of two lines (nvh_record)
 * finds the same children twice: each goes on the list once. rec->lock held.
 */
static void nvh_drop_tree(struct nvh_file *rec, struct nvh_obj *top)
{
	struct nvh_obj *q, *o, *n;
	LIST_HEAD(doom);
	int bkt;

	top->doomed = true;
	list_add_tail(&top->doom, &doom);
	list_for_each_entry(q, &doom, doom) {
		if (q->kind == NVH_MEMORY)
			continue;
		hash_for_each(rec->objs, bkt, o, node)
			if (o->client == q->client && o->parent == q->handle && !o->doomed) {
				o->doomed = true;
				list_add_tail(&o->doom, &doom);
			}
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
		if (nvh_gpu_line(o))
			nvh_client_del(rec, o->client);
		nvh_obj_uncount(rec, o);
		if (o->mem)
			nvh_mem_unlink(o, true);
		cgpu_free(o);
	}
	cgpu_detach(rec->att);
	cgpu_free(rec->att);
	mutex_destroy(&rec->lock);
	/* nvh_ftrace may still be comparing its key. */
	cgpu_free_rcu(rec, rcu);
}

/*
 * The record of the driver file whose private data is key, or NULL; under RCU or
 * files_lock. A record found for a file in a call stays valid after the RCU section:
 * records go only at the file's release, which no call on it can overlap, or at
 * detach, which waits for the calls first (nvh_srcu).
 */
static __always_inline struct nvh_file *nvh_file_find(const void *key)
{
	struct nvh_file *rec;

	hash_for_each_possible_rcu_notrace(nvh.files, rec, node, (unsigned long)key)
		if (rec->key == key)
			return rec;
	return NULL;
}

/* nvh_file_find for a wrapped call on that file. */
static struct nvh_file *nvh_file_of_call(const void *key)
{
	struct nvh_file *rec;

	rcu_read_lock();
	rec = nvh_file_find(key);
	rcu_read_unlock();
	return rec;
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
 * A record attached to the caller's container, in no table yet; NULL and *err if none.
 * A holder's (nvh_holder) leaves a hot update's reservation to the process's files.
 */
static struct nvh_file *nvh_rec_new(int *err, bool holder)
{
	struct nvh_file *rec = cgpu_zalloc(sizeof(*rec));

	*err = -ENOMEM;
	if (rec)
		rec->att = cgpu_zalloc(sizeof(*rec->att));
	if (rec && rec->att) {
		rec->att->leaves_reservation = holder;
		*err = cgpu_attach(rec->att);
	}
	if (*err) {
		if (rec)
			cgpu_free(rec->att);
		cgpu_free(rec);
		return NULL;
	}
	rec->id = atomic64_inc_return(&nvh.ids);
	mutex_init(&rec->lock);
	hash_init(rec->objs);
	return rec;
}

/*
 * The record to charge an allocation of the caller's on f to, made if f has none yet
 * (from_open: by f's open, before any call on it). NULL with *refuse false: the caller
 * is in no container: it passes untouched. NULL with *refuse true: the caller is
 * limited but cannot be charged now (out of memory, too many files, a hot update
 * frozen, or f is another container's). The record lives until f is released or
 * cgpu_km detaches, neither of which can happen while an ioctl on f is running.
 */
static struct nvh_file *nvh_file_get(const void *f, bool *refuse, bool from_open)
{
	struct nvh_file *rec, *other;
	int err;

	*refuse = false;
	rec = nvh_file_of_call(f);
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
	rec = nvh_rec_new(&err, false);
	if (!rec) {
		/* EAGAIN (a hot update frozen) comes for everyone: the host passes. */
		*refuse = err != -ENOENT && nvh_caller_contained();
		return NULL;
	}
	rec->key = f;
	rec->from_open = from_open;
	mutex_lock(&nvh.files_lock);
	other = nvh_file_find(f);	/* another thread of the caller was quicker */
	if (!other)
		hash_add_rcu(nvh.files, &rec->node, (unsigned long)f);
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

static struct nvh_file *nvh_file_for_caller(const void *f, bool *refuse)
{
	return nvh_file_get(f, refuse, false);
}

/*
 * A call on rec's file that may change what a handle names, counted from before the
 * driver runs until its lines are recorded or dropped: a duplicate racing it is not
 * followed (nvh_dup_own). Every such call a caller in a container makes passes a
 * wrapper; the host's calls on a container's descriptor are not counted.
 */
static void nvh_op_begin(struct nvh_file *rec)
{
	/* Running before started: a look that counts it started sees it running. */
	atomic_inc(&rec->ops_busy);
	smp_mb__after_atomic();
	atomic_inc(&rec->ops_started);
	smp_mb__after_atomic();
}

static void nvh_op_end(struct nvh_file *rec)
{
	smp_mb__before_atomic();
	atomic_dec(&rec->ops_busy);
}

/* ---- the driver's kernel client (nvidia_get_rm_ops) ---- */

/*
 * nvh.rm.op runs one operation of the RM API the driver gives kernel clients, with
 * kernel privilege: RM checks neither whose the client is nor copies parameters from
 * user space (XlateUserModeArgsToSecInfo, rmclientValidate), so cgpu_km can ask about,
 * and free, an object of the caller's client by its handle, with buffers no task can
 * write. Its sp is the stack nvidia_ioctl gave rm_ioctl for the call being wrapped,
 * idle before the original runs and once it returned: the driver runs its own RM calls
 * one after the other on one stack the same way, and a stack of its own for each
 * question would be an allocation on every limited allocation.
 *
 * nvh_rm_control: one control on object of client, its parameters here: 0, or -EIO when
 * the driver refused it.
 */
static int nvh_rm_control(void *sp, u32 client, u32 object, u32 cmd, void *params, u32 size)
{
	struct nva_rmapi_ops ops = { .op = NVA_NV04_CONTROL };

	ops.params.control = (struct nva_nvos54){
		.hClient = client, .hObject = object, .cmd = cmd,
		.params = (u64)(unsigned long)params, .paramsSize = size,
	};
	nvh.rm.op(sp, &ops);
	return ops.params.control.status == NVA_NV_OK ? 0 : -EIO;
}

/*
 * What the GPU holds for memory object (client, handle), from the driver's own figure
 * (its descriptor's size, rounded up to what RM's physical allocator takes), and whether
 * it is in video memory.
 */
static int nvh_rm_surface(void *sp, u32 client, u32 handle, u64 *bytes, bool *vidmem)
{
	struct nva_nv0041_surface_info list[2] = {
		{ .index = NVA_NV0041_SURFACE_INFO_INDEX_PHYS_SIZE },
		{ .index = NVA_NV0041_SURFACE_INFO_INDEX_ADDR_SPACE_TYPE },
	};
	struct nva_nv0041_get_surface_info gp = {
		.surfaceInfoListSize = ARRAY_SIZE(list),
		.surfaceInfoList = (u64)(unsigned long)list,
	};

	if (nvh_rm_control(sp, client, handle, NVA_NV0041_CTRL_CMD_GET_SURFACE_INFO, &gp, sizeof(gp)))
		return -EIO;
	*bytes = round_up((u64)list[0].data * NVA_NV0041_SURFACE_INFO_PHYS_SIZE_SCALE,
			  NVA_PMA_GRANULE);
	*vidmem = list[1].data == NVA_ADDR_SPACE_TYPE_VIDMEM;
	return 0;
}

/*
 * Charged classes: video memory (NV01_MEMORY_LOCAL_USER) at what the GPU holds for it,
 * a VA range (NV50_MEMORY_VIRTUAL) at the most page tables RM can hold for it.
 */
static __always_inline bool nvh_class_charged(u32 cls)
{
	return cls == NVA_NV01_MEMORY_LOCAL_USER || cls == NVA_NV50_MEMORY_VIRTUAL;
}

/* The charge of an object of charged class cls asked to be size bytes: to refuse early. */
static u64 nvh_charge_asked(u32 cls, u64 size)
{
	return cls == NVA_NV50_MEMORY_VIRTUAL ? cgpu_range_tables(size) : round_up(size, NVH_PAGE);
}

/*
 * The charge of the object of charged class cls the driver made under (client, handle),
 * from the driver's own figure of its size (a range's is its length in the VA space,
 * which RM reports as a memory object's: memCtrlCmdGetSurfaceInfoLvm on its descriptor).
 * 0, or -EIO where the driver would not say (a range of 16 TiB or more: RM's figure is
 * 32 bits of 4 KiB pages).
 */
static int nvh_charge_made(void *sp, u32 client, u32 handle, u32 cls, u64 *charge)
{
	bool vidmem;
	u64 bytes;

	if (nvh_rm_surface(sp, client, handle, &bytes, &vidmem))
		return -EIO;
	*charge = cls == NVA_NV50_MEMORY_VIRTUAL ? cgpu_range_tables(bytes) : vidmem ? bytes : 0;
	return 0;
}

/* The driver's own word on object (client, handle): its class or its parent (index). */
static int nvh_rm_handle_info(void *sp, u32 client, u32 handle, u32 index, u32 *out)
{
	struct nva_nv0000_get_handle_info hi = { .hObject = handle, .index = index };

	if (nvh_rm_control(sp, client, client, NVA_NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO,
			   &hi, sizeof(hi)))
		return -EIO;
	*out = (u32)hi.data;
	return 0;
}

static int nvh_rm_class(void *sp, u32 client, u32 handle, u32 *cls)
{
	return nvh_rm_handle_info(sp, client, handle, NVA_GET_HANDLE_INFO_INDEX_CLASSID, cls);
}

/*
 * Which GPU device or subdevice (client, handle) is on, as the driver knows it: the
 * subdevice's GPU id (a device's subdevice 0, which the driver finds), and that id's
 * device instance, the number NV0080_ALLOC_PARAMETERS.deviceId names and cgpu_km's GPUs
 * are numbered by. *cls and *parent: the object's class and parent. -ENOENT for a
 * device with no subdevice yet, -EINVAL for another class, -EIO where the driver would
 * not say.
 */
static int nvh_rm_gpu_of(void *sp, u32 client, u32 handle, u32 *cls, u32 *parent, u32 *gpu)
{
	struct nva_nv0080_find_subdevice fs = { .subDeviceInst = 0 };
	struct nva_nv0000_get_id_info_v2 ii = {};
	struct nva_nv2080_get_id id = {};
	u32 sub = handle;

	if (nvh_rm_class(sp, client, handle, cls) ||
	    nvh_rm_handle_info(sp, client, handle, NVA_GET_HANDLE_INFO_INDEX_PARENT, parent))
		return -EIO;
	if (*cls != NVA_NV01_DEVICE_0 && *cls != NVA_NV20_SUBDEVICE_0)
		return -EINVAL;
	if (*cls == NVA_NV01_DEVICE_0) {
		if (nvh_rm_control(sp, client, handle, NVA_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE,
				   &fs, sizeof(fs)))
			return -ENOENT;
		sub = fs.hSubDevice;
	}
	if (nvh_rm_control(sp, client, sub, NVA_NV2080_CTRL_CMD_GPU_GET_ID, &id, sizeof(id)))
		return -EIO;
	ii.gpuId = id.gpuId;
	if (nvh_rm_control(sp, client, client, NVA_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &ii, sizeof(ii)))
		return -EIO;
	*gpu = ii.deviceInstance;
	return 0;
}

/* Frees (client, parent, handle) in the driver, as the owner would; the driver's status. */
static u32 nvh_rm_free_obj(void *sp, u32 client, u32 parent, u32 handle)
{
	struct nva_rmapi_ops ops = { .op = NVA_NV01_FREE };

	ops.params.free = (struct nva_nvos00){
		.hRoot = client, .hObjectParent = parent, .hObjectOld = handle,
	};
	nvh.rm.op(sp, &ops);
	return ops.params.free.status;
}

/* ---- the wrapped calls ---- */

#define NVH_GPU_NONE	U32_MAX

/*
 * One call of RM's entry, rm_ioctl(sp, nv, nvfp, cmd, data, size): data is the driver's
 * own kernel copy of the escape's block (nvidia_ioctl copied it in, unwrapping XFER, and
 * copies it back out after), so no thread of the caller can change what is read here
 * between our look and the driver's; nvfp is the file's private data.
 */
struct nvh_call {
	void *sp, *nv, *nvfp;
	u32 cmd;
	void *data;
	u32 size;
};

static u32 nvh_orig(const struct nvh_call *c)
{
	nvh_rm_ioctl_fn orig = (nvh_rm_ioctl_fn)READ_ONCE(nvh.rm_ioctl.addr);

	return orig(c->sp, c->nv, c->nvfp, c->cmd, c->data, c->size);
}

/* RM_ALLOC's status: NVOS21 (32 bytes) and NVOS64 (48) keep it in different places. */
static u32 *nvh_alloc_status(const struct nvh_call *c)
{
	return c->size == sizeof(struct nva_nvos21) ? &((struct nva_nvos21 *)c->data)->status :
		&((struct nva_nvos64 *)c->data)->status;
}

/* The driver's answer to a limited caller, without calling it: status set, as RM does. */
static u32 nvh_answer(u32 *status, u32 code)
{
	*status = code;
	return NVA_NV_OK;
}

/* A call refused in a container without calling the driver: one log line, the answer. */
static u32 nvh_refuse(u32 *status, u32 code, const char *what, u32 which)
{
	pr_warn_ratelimited("cgpu_km: enforce: pid %d: %s 0x%x refused in a container\n",
			    task_tgid_nr(current), what, which);
	return nvh_answer(status, code);
}

/*
 * A count against max_channels refused (cgpu_ledger_chan_take's or nvh_device_counts's
 * err) for what which (a class; or a channel's or VA space's handle, how: " registered
 * with nvidia-uvm"): frozen for a hot update, or at the cap, which goes in channels
 * refused. One log line, with the cap the refusal read and the GPU it was reached on.
 */
static void nvh_count_refused(int err, const char *what, u32 which, const char *how,
			      unsigned int max, u32 gpu)
{
	if (err == -EAGAIN) {
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: %s 0x%x%s refused: a hot update is under way\n",
				    task_tgid_nr(current), what, which, how);
		return;
	}
	atomic64_inc(&nvh.channels_refused);
	pr_warn_ratelimited("cgpu_km: enforce: pid %d: %s 0x%x%s refused: the container holds max_channels=%u channels, VA spaces and devices on GPU %u\n",
			    task_tgid_nr(current), what, which, how, max, gpu);
}

/*
 * A tracked device, subdevice or channel group (or channel) of rec, or NULL; also NULL for
 * a handle with two lines (nvh_record), where which object the driver holds, and so which
 * GPU, is not known. rec->lock held.
 */
static struct nvh_obj *nvh_parent(struct nvh_file *rec, u32 client, u32 handle)
{
	struct nvh_obj *p = nvh_obj_find(rec, client, handle);

	return p && p->kind != NVH_MEMORY && nvh_lines(rec, client, handle) == 1 ? p : NULL;
}

/* Takes n places in rec's table for more objects, or none; false when it is full. rec->lock held. */
static bool nvh_take_places_locked(struct nvh_file *rec, unsigned int n)
{
	lockdep_assert_held(&rec->lock);
	if (rec->nobjs > CGPU_FILE_OBJS_MAX - n)
		return false;
	rec->nobjs += n;
	return true;
}

static bool nvh_take_place_locked(struct nvh_file *rec)
{
	return nvh_take_places_locked(rec, 1);
}

static bool nvh_take_places(struct nvh_file *rec, unsigned int n)
{
	bool ok;

	mutex_lock(&rec->lock);
	ok = nvh_take_places_locked(rec, n);
	mutex_unlock(&rec->lock);
	return ok;
}

static bool nvh_take_place(struct nvh_file *rec)
{
	return nvh_take_places(rec, 1);
}

static void nvh_give_places(struct nvh_file *rec, unsigned int n)
{
	mutex_lock(&rec->lock);
	rec->nobjs -= n;
	mutex_unlock(&rec->lock);
}

static void nvh_give_place(struct nvh_file *rec)
{
	nvh_give_places(rec, 1);
}

/*
 * Records o (its place taken) under its handle. rec->lock held. Another line under the
 * same handle stays: another thread freed an object between the driver's answer and its
 * record, and an allocation reused the handle; which of the two records came last says
 * nothing of which object the driver still holds, so both stay charged until the
 * client is freed or the file released (too much, never too little): a free of the
 * handle drops neither (the newest could be the live one, and the larger).
 */
static void nvh_record(struct nvh_file *rec, struct nvh_obj *o)
{
	hash_add(rec->objs, &o->node, nvh_key(o->client, o->handle));
	if (nvh_gpu_line(o))
		nvh_client_add(rec, o->client);
}

/*
 * Records o (its place taken) as the object RM_ALLOC c made: kind, on gpu; a memory
 * line's slot and bytes, a channel's slot.
 */
static void nvh_record_made(const struct nvh_call *c, struct nvh_file *rec, struct nvh_obj *o,
			    enum nvh_kind kind, u32 gpu, struct cgpu_slot *slot, u64 bytes)
{
	struct nva_nvos21 *p = c->data;

	o->client = p->hRoot;
	o->handle = p->hObjectNew;
	o->parent = p->hObjectParent;
	o->gpu = gpu;
	o->kind = kind;
	o->rec = kind == NVH_MEMORY ? rec : NULL;
	o->slot = slot;
	o->bytes = bytes;
	mutex_lock(&rec->lock);
	nvh_record(rec, o);
	mutex_unlock(&rec->lock);
}

/*
 * A device's counts against max_channels. RM gives a device a GPU VA space of its own at
 * its first use naming none when its hClientShare is its own client (a channel group, or
 * a read-only control, which passes cgpu_km unread: device_share.c), a page directory
 * the driver reports nowhere, and a client holds one device of a GPU at most (RM's
 * deviceInit): one count a device bounds them. Its GPU is not known when it is made
 * (nvh_alloc_parent), and the VA space can be made before its first subdevice says, so
 * it takes a count on each of the container's GPUs before the driver runs, and keeps
 * only its own GPU's once the driver has said which (nvh_device_placed). *mask: the
 * slots counted; 0 or -EAGAIN (frozen) or -ENOSPC (at the cap on *refused's GPU), with
 * nothing counted.
 */
static int nvh_device_counts(struct nvh_file *rec, unsigned int max, u32 *mask, u32 *refused)
{
	unsigned int i;
	int err;

	BUILD_BUG_ON(CGPU_MAX_GPUS > sizeof_field(struct nvh_obj, counts) * BITS_PER_BYTE);
	*mask = 0;
	for (i = 0; i < rec->att->n; i++) {
		err = cgpu_ledger_chan_take(&rec->att->slots[i], max, 1);
		if (err) {
			*refused = rec->att->slots[i].inst->gpu->index;
			nvh_counts_give(rec, *mask);
			*mask = 0;
			return err;
		}
		*mask |= BIT(i);
	}
	return 0;
}

/*
 * Device d, recorded on no GPU, is on gpu (the driver says): of its counts it keeps its
 * own GPU's only. On a GPU the container has no instance on it keeps them all: nothing
 * is made under it there, but a read-only control still makes its VA space, which no
 * count on that GPU could bound (too much, never too little). rec->lock held.
 */
static void nvh_device_placed(struct nvh_file *rec, struct nvh_obj *d, u32 gpu)
{
	struct cgpu_slot *slot = cgpu_slot_of(rec->att, gpu);
	u32 keep = slot ? BIT(slot - rec->att->slots) : d->counts;

	d->gpu = gpu;
	nvh_counts_give(rec, d->counts & ~keep);
	d->counts &= keep;
}

/*
 * Lines for device or subdevice (client, handle), whose GPU is the driver's own answer,
 * asked by handle (nvh_rm_gpu_of): a subdevice just made under a device cgpu_km saw
 * made, which is on no GPU until then (nvh_alloc_parent); or a device or subdevice the
 * driver has and cgpu_km did not see made (old: made before cgpu_km attached, or before
 * a hot update, whose records are not carried), so that a process running since goes on
 * allocating under it. Asked only once the driver has taken the handle as the parent of
 * a new object of the caller's, or made it: its client is then the caller's, and what
 * cgpu_km asks of a client the caller named is never told back but by RM's own answers.
 * A subdevice's device is recorded with it (a device is a child of its client), so that
 * the device's free drops both; a device recorded on no GPU takes the subdevice's. An old
 * device with no subdevice, whose GPU the driver cannot say, is recorded on no GPU: what
 * is made under it is refused before the driver runs, and only its first allocation
 * takes nvh_alloc_late's way. The GPU, or NVH_GPU_NONE.
 */
static u32 nvh_adopt(const struct nvh_call *c, struct nvh_file *rec, u32 client, u32 handle,
		     bool old)
{
	struct nvh_obj *dev, *sub = NULL;
	u32 cls, parent, gpu, hdev;
	int err;

	err = nvh_rm_gpu_of(c->sp, client, handle, &cls, &parent, &gpu);
	if (err == -ENOENT)
		gpu = NVH_GPU_NONE;
	else if (err)
		return NVH_GPU_NONE;
	hdev = cls == NVA_NV01_DEVICE_0 ? handle : parent;
	/* A device cgpu_km saw made has its line: only an old one may need one. */
	dev = old ? cgpu_zalloc(sizeof(*dev)) : NULL;
	if (cls == NVA_NV20_SUBDEVICE_0)
		sub = cgpu_zalloc(sizeof(*sub));
	mutex_lock(&rec->lock);
	if (dev && !nvh_lines(rec, client, hdev) && nvh_take_place_locked(rec)) {
		*dev = (struct nvh_obj){ .client = client, .handle = hdev, .parent = client,
					 .gpu = gpu, .kind = NVH_DEVICE };
		nvh_record(rec, dev);
		dev = NULL;
	} else if (gpu != NVH_GPU_NONE) {
		/* Recorded on no GPU while it had no subdevice: its subdevice says it now. */
		struct nvh_obj *d = nvh_parent(rec, client, hdev);

		if (d && d->kind == NVH_DEVICE && d->gpu == NVH_GPU_NONE)
			nvh_device_placed(rec, d, gpu);
	}
	if (sub && !nvh_lines(rec, client, handle) && nvh_take_place_locked(rec)) {
		*sub = (struct nvh_obj){ .client = client, .handle = handle, .parent = hdev,
					 .gpu = gpu, .kind = NVH_SUBDEVICE };
		nvh_record(rec, sub);
		sub = NULL;
	}
	mutex_unlock(&rec->lock);
	cgpu_free(dev);
	cgpu_free(sub);
	if (!old)
		return gpu;
	if (gpu == NVH_GPU_NONE)
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: device 0x%x of client 0x%x, made before cgpu_km attached, has no subdevice: on no GPU, nothing under it stands\n",
				    task_tgid_nr(current), hdev, client);
	else
		pr_info_ratelimited("cgpu_km: enforce: pid %d: device 0x%x of client 0x%x, made before cgpu_km attached, is on GPU %u (the driver says): followed from here on\n",
				    task_tgid_nr(current), hdev, client, gpu);
	return gpu;
}

/*
 * NV01_DEVICE_0 and NV20_SUBDEVICE_0: which GPU the objects under them are on. A device
 * is recorded on no GPU: NV0080_ALLOC_PARAMETERS.deviceId is the caller's memory, which
 * the driver copies after any look of ours, so a second thread could make it name
 * another GPU than the one read. Its first subdevice says, once the driver has made it,
 * which GPU the driver put the device on (nvh_adopt), and until then nothing is made
 * under the device (video memory, channels). A device is counted against max_channels
 * on each of the container's GPUs until then (nvh_device_counts): past the cap on any,
 * the driver's NV_ERR_INSUFFICIENT_RESOURCES. A subdevice is on its device's GPU. One
 * not tracked (made before cgpu_km attached) is not recorded, and what is made under it
 * takes nvh_alloc_late's way: never charged to a guessed GPU.
 */
static u32 nvh_alloc_parent(const struct nvh_call *c, struct nvh_file *rec)
{
	struct nva_nvos21 *p = c->data;
	u32 gpu = NVH_GPU_NONE, st, counts = 0, at = NVH_GPU_NONE;
	unsigned int max = READ_ONCE(max_channels);
	struct nvh_obj *o, *par = NULL;
	bool late = false;
	int err;

	if (p->hClass == NVA_NV20_SUBDEVICE_0) {
		mutex_lock(&rec->lock);
		par = nvh_parent(rec, p->hRoot, p->hObjectParent);
		if (par && par->kind == NVH_DEVICE)
			gpu = par->gpu;
		/* Not seen made, or on no GPU yet (its first subdevice, or an old one's). */
		late = par ? par->kind == NVH_DEVICE && gpu == NVH_GPU_NONE :
			!nvh_lines(rec, p->hRoot, p->hObjectParent);
		mutex_unlock(&rec->lock);
		if (gpu == NVH_GPU_NONE) {
			st = nvh_orig(c);
			if (late && st == NVA_NV_OK && *nvh_alloc_status(c) == NVA_NV_OK)
				nvh_adopt(c, rec, p->hRoot, p->hObjectNew, !par);
			return st;
		}
	}
	o = cgpu_zalloc(sizeof(*o));
	if (!o || !nvh_take_place(rec)) {
		if (o)
			cgpu_free(o);
		return nvh_answer(nvh_alloc_status(c), NVA_ERR_NO_MEMORY);
	}
	if (p->hClass == NVA_NV01_DEVICE_0) {
		err = nvh_device_counts(rec, max, &counts, &at);
		if (err) {
			nvh_count_refused(err, "class", p->hClass, "", max, at);
			st = nvh_answer(nvh_alloc_status(c), NVA_ERR_INSUFFICIENT_RESOURCES);
			goto undo;
		}
	}
	st = nvh_orig(c);
	if (st != NVA_NV_OK || *nvh_alloc_status(c) != NVA_NV_OK) {
		nvh_counts_give(rec, counts);
		goto undo;
	}
	o->counts = counts;
	nvh_record_made(c, rec, o, p->hClass == NVA_NV01_DEVICE_0 ? NVH_DEVICE : NVH_SUBDEVICE,
			gpu, NULL, 0);
	return st;

undo:
	nvh_give_place(rec);
	cgpu_free(o);
	return st;
}

/*
 * An allocation the driver made that cannot stand (over the budget once its true size is
 * known, of a size the driver would not tell, past the channel cap, under a parent on no
 * GPU the container has): freed in the driver at once, and the caller told code
 * (NV_ERR_NO_MEMORY, or NV_ERR_NO_FREE_FIFOS for a channel), as if the driver had
 * refused it.
 */
static u32 nvh_take_back(const struct nvh_call *c, u32 code, const char *why, u64 bytes)
{
	struct nva_nvos21 *p = c->data;
	u32 st = nvh_rm_free_obj(c->sp, p->hRoot, p->hObjectParent, p->hObjectNew);

	pr_warn_ratelimited("cgpu_km: enforce: pid %d: object 0x%x of class 0x%x (%llu bytes) %s: freed (driver status 0x%x), status 0x%x\n",
			    task_tgid_nr(current), p->hObjectNew, p->hClass, bytes, why, st, code);
	atomic64_inc(&nvh.taken_back);
	return nvh_answer(nvh_alloc_status(c), code);
}

/*
 * Where an allocation under (client, parent) of rec goes, in one look under rec->lock:
 * the parent's GPU and the container's slot there (a memory's or VA space's parent must be
 * a device or subdevice: under_device; a channel's a device or group), a place taken in
 * rec's table if there is a
 * slot (*placed), and *late when the parent is none cgpu_km saw made (nvh_alloc_late).
 * On a file recorded from its open every parent passed a wrapper, so one with no line
 * yet is one the driver has made and cgpu_km not yet recorded (another thread of the
 * caller's names it before its allocation returned), or none: refused (no slot), never
 * made by the driver before it is counted. The parent may go once unlocked (a free on
 * another thread): its GPU is kept.
 */
static struct cgpu_slot *nvh_place(struct nvh_file *rec, u32 client, u32 parent,
				   bool under_device, u32 *gpu, bool *placed, bool *late)
{
	struct cgpu_slot *slot = NULL;
	struct nvh_obj *par;

	*gpu = NVH_GPU_NONE;
	mutex_lock(&rec->lock);
	par = nvh_parent(rec, client, parent);
	if (par && (under_device ? nvh_gpu_line(par) :
		    par->kind == NVH_DEVICE || par->kind == NVH_CHANNEL)) {
		*gpu = par->gpu;
		slot = cgpu_slot_of(rec->att, *gpu);
	}
	*late = !par && !nvh_lines(rec, client, parent) && !READ_ONCE(rec->from_open);
	*placed = slot && nvh_take_place_locked(rec);
	mutex_unlock(&rec->lock);
	return slot;
}

/*
 * A limited allocation (memory or channel) under a parent cgpu_km did not see made: the
 * driver runs first (its answer is RM's own for a client or parent that is not the
 * caller's), then the parent it took gets its lines and GPU from the driver
 * (nvh_adopt), and the new object is charged or counted there after the fact: freed and
 * refused past the budget or the cap, or on no GPU the container has. What follows under
 * that parent takes the usual way. Only a file opened before cgpu_km attached, or before
 * a hot update, comes here (nvh_place), so the memory it asks for may be held a moment
 * before it is found past the budget and freed.
 */
static u32 nvh_alloc_late(const struct nvh_call *c, struct nvh_file *rec)
{
	struct nva_nvos21 *p = c->data;
	bool memory = nvh_class_charged(p->hClass);
	u32 code = memory ? NVA_ERR_NO_MEMORY : nvh_counted_refusal(nvh_counted_kind(p->hClass));
	unsigned int max = READ_ONCE(max_channels);
	struct cgpu_slot *slot = NULL;
	u64 got = 0, used, memsize;
	struct nvh_obj *o;
	u32 gpu, st;
	int err;

	o = cgpu_zalloc(sizeof(*o));
	if (!o || !nvh_take_place(rec)) {
		cgpu_free(o);
		return nvh_answer(nvh_alloc_status(c), code);
	}
	st = nvh_orig(c);
	if (st != NVA_NV_OK || *nvh_alloc_status(c) != NVA_NV_OK)
		goto undo;
	gpu = nvh_adopt(c, rec, p->hRoot, p->hObjectParent, true);
	if (gpu != NVH_GPU_NONE)
		slot = cgpu_slot_of(rec->att, gpu);
	if (!slot) {
		st = nvh_take_back(c, code, "under a parent on no GPU the container has a budget on", 0);
		goto undo;
	}
	if (memory) {
		if (nvh_charge_made(c->sp, p->hRoot, p->hObjectNew, p->hClass, &got)) {
			st = nvh_take_back(c, code, "of a size the driver would not tell", 0);
			goto undo;
		}
		if (got && cgpu_ledger_charge(slot, got, &used, &memsize)) {
			st = nvh_take_back(c, code, "over the budget once the driver had made it", got);
			goto undo;
		}
	} else if ((err = cgpu_ledger_chan_take(slot, max, 1))) {
		nvh_count_refused(err, "class", p->hClass, "", max, gpu);
		st = nvh_take_back(c, code, "not counted against max_channels", 0);
		goto undo;
	}
	nvh_record_made(c, rec, o, memory ? NVH_MEMORY : nvh_counted_kind(p->hClass), gpu, slot, got);
	return st;

undo:
	nvh_give_place(rec);
	cgpu_free(o);
	return st;
}

/*
 * NV01_MEMORY_LOCAL_USER or NV50_MEMORY_VIRTUAL (nvh_class_charged), under a tracked
 * device or subdevice: charged to the container's ledger on that GPU before the driver
 * runs, from the size asked; then set to what the driver's own figure of the new
 * object's size makes it (nvh_charge_made), asked by its handle. Both classes take
 * NV_MEMORY_ALLOCATION_PARAMS. The class's parameters are the caller's memory, which RM
 * copies in after our look: a second thread can grow the size in between, so the first
 * charge is only a way to refuse early; the driver's own answer decides, and an object
 * found over the budget is freed.
 */
static u32 nvh_alloc_memory(const struct nvh_call *c, struct nvh_file *rec)
{
	struct nva_nvos21 *p = c->data;
	u64 want, est, got, used, memsize;
	struct cgpu_slot *slot;
	struct nvh_obj *o;
	bool placed, late;
	u32 gpu, st;

	/* The size asked, once; answered as the driver answers parameters it cannot read. */
	if (!p->pAllocParms)
		return nvh_answer(nvh_alloc_status(c), NVA_ERR_INVALID_ARGUMENT);
	if (get_user(want, (u64 __user *)u64_to_user_ptr(p->pAllocParms + nvh.layout->size_off)))
		return nvh_answer(nvh_alloc_status(c), NVA_ERR_INVALID_ADDRESS);
	if (want > U64_MAX - (NVH_PAGE - 1))
		return nvh_answer(nvh_alloc_status(c), NVA_ERR_NO_MEMORY);
	if (p->hClass == NVA_NV50_MEMORY_VIRTUAL && want >= NVA_RANGE_SIZE_MAX)
		return nvh_refuse(nvh_alloc_status(c), NVA_ERR_NO_MEMORY,
				  "a VA range of 16 TiB or more (the driver cannot tell its size), class",
				  p->hClass);
	est = nvh_charge_asked(p->hClass, want);

	/* Room for the object's line first, then the charge: nothing to undo after. */
	o = cgpu_zalloc(sizeof(*o));
	if (!o)
		return nvh_answer(nvh_alloc_status(c), NVA_ERR_NO_MEMORY);
	slot = nvh_place(rec, p->hRoot, p->hObjectParent, true, &gpu, &placed, &late);
	if (late) {
		cgpu_free(o);
		return nvh_alloc_late(c, rec);
	}
	if (!slot)	/* no budget there for this container, or a parent of two lines */
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: video memory under %s (parent 0x%x) refused\n",
				    task_tgid_nr(current),
				    gpu != NVH_GPU_NONE ? "a GPU the container has no budget on" :
				    "a parent whose GPU is not known",
				    p->hObjectParent);
	if (!placed) {
		cgpu_free(o);
		return nvh_answer(nvh_alloc_status(c), NVA_ERR_NO_MEMORY);
	}
	if (est && cgpu_ledger_charge(slot, est, &used, &memsize)) {
		nvh_give_place(rec);
		cgpu_free(o);
		return nvh_answer(nvh_alloc_status(c), NVA_ERR_NO_MEMORY);
	}

	st = nvh_orig(c);
	if (st != NVA_NV_OK || *nvh_alloc_status(c) != NVA_NV_OK)
		goto undo;

	/* What the driver made, by its handle from the kernel copy. */
	if (nvh_charge_made(c->sp, p->hRoot, p->hObjectNew, p->hClass, &got)) {
		st = nvh_take_back(c, NVA_ERR_NO_MEMORY, "of a size the driver would not tell", want);
		goto undo;
	}
	if (got > est && cgpu_ledger_charge(slot, got - est, &used, &memsize)) {
		st = nvh_take_back(c, NVA_ERR_NO_MEMORY, "over the budget once the driver had made it", got);
		goto undo;
	}
	if (got < est)
		cgpu_ledger_uncharge(slot, est - got, &used, &memsize);
	nvh_record_made(c, rec, o, NVH_MEMORY, gpu, slot, got);
	return st;

undo:
	if (est)
		cgpu_ledger_uncharge(slot, est, &used, &memsize);
	nvh_give_place(rec);
	cgpu_free(o);
	return st;
}

static __always_inline bool nvh_class_channel(u32 cls)
{
	switch (cls) {
	case NVA_KEPLER_CHANNEL_GROUP_A:
	case NVA_GF100_CHANNEL_GPFIFO:
	case NVA_KEPLER_CHANNEL_GPFIFO_A:
	case NVA_KEPLER_CHANNEL_GPFIFO_B:
	case NVA_MAXWELL_CHANNEL_GPFIFO_A:
	case NVA_PASCAL_CHANNEL_GPFIFO_A:
	case NVA_VOLTA_CHANNEL_GPFIFO_A:
	case NVA_TURING_CHANNEL_GPFIFO_A:
	case NVA_AMPERE_CHANNEL_GPFIFO_A:
	case NVA_HOPPER_CHANNEL_GPFIFO_A:
		return true;
	}
	return false;
}

static __always_inline bool nvh_class_counted(u32 cls)
{
	return nvh_class_channel(cls) || cls == NVA_FERMI_VASPACE_A;
}

static __always_inline bool nvh_class_read(u32 cls)
{
	return cls == NVA_NV01_DEVICE_0 || cls == NVA_NV20_SUBDEVICE_0 ||
	       nvh_class_charged(cls) || nvh_class_counted(cls);
}

/*
 * A channel group or channel under a tracked device (a channel also in a tracked group),
 * or a GPU VA space under a tracked device or subdevice: counted on the container's
 * instance on that GPU before the driver runs, refused at max_channels with the driver's
 * own answer (nvh_counted_refusal), given back if the driver refuses and when it is
 * freed (itself, a parent, the client, the file). Counted, not charged: the memory the
 * driver holds for each (GR context buffers, instance blocks, page directories) it
 * reports nowhere, and a size would be a guess. One under a parent cgpu_km did not see
 * made takes nvh_alloc_late's way, as memory does: never counted on a guessed GPU.
 */
static u32 nvh_alloc_counted(const struct nvh_call *c, struct nvh_file *rec)
{
	struct nva_nvos21 *p = c->data;
	unsigned int max = READ_ONCE(max_channels);
	enum nvh_kind kind = nvh_counted_kind(p->hClass);
	u32 code = nvh_counted_refusal(kind);
	struct cgpu_slot *slot;
	bool placed, late;
	struct nvh_obj *o;
	u32 gpu, st;
	int err;

	o = cgpu_zalloc(sizeof(*o));
	if (!o)
		return nvh_answer(nvh_alloc_status(c), NVA_ERR_NO_MEMORY);
	slot = nvh_place(rec, p->hRoot, p->hObjectParent, kind == NVH_VASPACE, &gpu, &placed, &late);
	if (late) {
		cgpu_free(o);
		return nvh_alloc_late(c, rec);
	}
	if (!placed) {
		cgpu_free(o);
		if (!slot)
			return nvh_refuse(nvh_alloc_status(c), code,
					  "channel or VA space under a parent whose GPU is not known, or on a GPU the container has no budget on, class",
					  p->hClass);
		return nvh_answer(nvh_alloc_status(c), NVA_ERR_NO_MEMORY);
	}
	err = cgpu_ledger_chan_take(slot, max, 1);
	if (err) {
		nvh_give_place(rec);
		cgpu_free(o);
		nvh_count_refused(err, "class", p->hClass, "", max, gpu);
		return nvh_answer(nvh_alloc_status(c), code);
	}
	st = nvh_orig(c);
	if (st != NVA_NV_OK || *nvh_alloc_status(c) != NVA_NV_OK) {
		cgpu_ledger_chan_give(slot, 1);
		nvh_give_place(rec);
		cgpu_free(o);
		return st;
	}
	nvh_record_made(c, rec, o, kind, gpu, slot, 0);
	return st;
}

/*
 * Classes that take or map video memory, or make RM take page tables, that this module
 * does not charge (nvabi.h).
 */
static __always_inline bool nvh_class_refused(u32 cls)
{
	return cls == NVA_NV_MEMORY_EXTENDED_USER || cls == NVA_NV01_MEMORY_LOCAL_PHYSICAL ||
	       cls == NVA_NV_MEMORY_FABRIC || cls == NVA_NV_MEMORY_MULTICAST_FABRIC ||
	       cls == NVA_NV_MEMORY_EXPORT || cls == NVA_NV01_MEMORY_VIRTUAL ||
	       cls == NVA_NV_MEMORY_MAPPER;
}

/*
 * NV_ESC_RM_ALLOC (NVOS21 or NVOS64) of a class that places or takes video memory
 * (nvh_ftrace lets every other class pass), looked at for a limited caller only.
 */
static u32 nvh_rm_alloc(const struct nvh_call *c)
{
	struct nva_nvos21 *p = c->data;
	struct nvh_file *rec;
	bool refuse;
	u32 st;

	if (nvh_class_refused(p->hClass) && nvh_caller_contained())
		return nvh_refuse(nvh_alloc_status(c), NVA_ERR_NOT_SUPPORTED,
				  "RM_ALLOC of video memory this module does not charge, class", p->hClass);
	if (!nvh_class_read(p->hClass))
		return nvh_orig(c);
	rec = nvh_file_for_caller(c->nvfp, &refuse);
	if (!rec)
		return refuse ? nvh_answer(nvh_alloc_status(c), NVA_ERR_NO_MEMORY) : nvh_orig(c);
	nvh_op_begin(rec);
	if (nvh_class_charged(p->hClass))
		st = nvh_alloc_memory(c, rec);
	else if (nvh_class_counted(p->hClass))
		st = nvh_alloc_counted(c, rec);
	else
		st = nvh_alloc_parent(c, rec);
	nvh_op_end(rec);
	return st;
}

static u32 nvh_rm_free_tracked(const struct nvh_call *c, struct nvh_file *rec)
{
	struct nva_nvos00 *p = c->data;
	struct hlist_node *tmp;
	struct nvh_obj *o;
	int bkt;
	u32 st;

	st = nvh_orig(c);
	if (st != NVA_NV_OK || p->status != NVA_NV_OK)
		return st;
	mutex_lock(&rec->lock);
	if (p->hObjectOld == p->hRoot) {
		hash_for_each_safe(rec->objs, bkt, tmp, o, node)
			if (o->client == p->hRoot)
				nvh_obj_drop(rec, o);
	} else if (nvh_lines(rec, p->hRoot, p->hObjectOld) == 1) {
		nvh_drop_tree(rec, nvh_obj_find(rec, p->hRoot, p->hObjectOld));
	}
	mutex_unlock(&rec->lock);
	return st;
}

/*
 * NV_ESC_RM_FREE: the charge goes back once the driver says it freed, and so do the
 * objects of a hot update's reservations the free took (cgpu_give_back), on a file
 * made before the update too (no record, then).
 */
static u32 nvh_rm_free(const struct nvh_call *c)
{
	struct nva_nvos00 *p = c->data;
	struct nvh_file *rec = nvh_file_of_call(c->nvfp);
	u32 st;

	if (rec) {
		nvh_op_begin(rec);
		st = nvh_rm_free_tracked(c, rec);
		nvh_op_end(rec);
	} else {
		st = nvh_orig(c);
	}
	/* Client 0 names nvidia-uvm's duplicates there, never a caller's: not taken from it. */
	if (st == NVA_NV_OK && p->status == NVA_NV_OK && p->hRoot && atomic_read(&cgpu.resobjs))
		cgpu_give_back(p->hRoot, p->hObjectOld);
	return st;
}

/*
 * Whether line o can be named in a state: by RM's handles, none of them its client
 * (client 0 is nvidia-uvm's duplicate for a mapping: by its handle, where the driver
 * has one client for them), and not a mapping's being made (handle 0 until made).
 */
static bool nvh_line_named(const struct nvh_obj *o)
{
	if (!o->handle)
		return false;
	if (!o->client)
		return READ_ONCE(cgpu.maps_named);
	return o->handle != o->client && o->parent != o->client;
}

/*
 * Line o of memory of bytes charged to slot, as an obj line of slot's process, with its
 * parent's own parent if rec (locked) holds it under one line; same: not the memory's
 * first line. A parent of two lines (nvh_record) names no grandparent: which of them the
 * driver holds is not known, and a wrong one would let a free of an unrelated object give
 * the memory back (without one, the grandparent's free gives nothing back: too much,
 * never too little).
 */
static void nvh_dump_line(struct seq_file *m, struct nvh_file *rec, const struct nvh_obj *o,
			  const struct cgpu_slot *slot, u64 bytes, bool same)
{
	struct nvh_obj *up = o->client && o->rec == rec &&
			     nvh_lines(rec, o->client, o->parent) == 1 ?
			     nvh_obj_find(rec, o->client, o->parent) : NULL;

	cgpu_ledger_dump_obj(m, slot->inst, slot->proc->pid, slot->proc->start, bytes, o->client,
			     o->handle, o->parent, up && up->parent != o->client ? up->parent : 0,
			     same);
}

/*
 * rec's video memory (rec->lock held): a line alone under its handle, and memory
 * followed duplicates or mappings share, once, at its first line, every line of it
 * (same=1 after the first) if every one can be named, so that the next module gives
 * its bytes back once the driver has freed them all. An instance deleted while its
 * files are open is not in the state.
 */
static void nvh_dump_rec(struct seq_file *m, struct nvh_file *rec)
{
	struct nvh_obj *o, *q;
	struct nvh_mem *mem;
	bool all, same;
	int b;

	hash_for_each(rec->objs, b, o, node) {
		if (o->kind != NVH_MEMORY)
			continue;
		if (!o->mem) {
			if (o->slot && o->bytes && o->slot->inst->listed && nvh_line_named(o))
				nvh_dump_line(m, rec, o, o->slot, o->bytes, false);
			continue;
		}
		mem = o->mem;
		mutex_lock(&nvh.mem_lock);
		if (list_first_entry(&mem->lines, struct nvh_obj, mlink) == o && mem->slot &&
		    mem->bytes && mem->slot->inst->listed) {
			all = true;
			list_for_each_entry(q, &mem->lines, mlink)
				all &= nvh_line_named(q);
			same = false;
			list_for_each_entry(q, &mem->lines, mlink) {
				if (all)
					nvh_dump_line(m, rec, q, mem->slot, mem->bytes, same);
				same = true;
			}
		}
		mutex_unlock(&nvh.mem_lock);
	}
}

/*
 * cgpu.driver_objs_dump, for a frozen module's state (reg_lock held, none of ours): the
 * video memory of every record, a file's or a mapping holder's (nvh_dump_rec). A
 * record's process has a file attached, so its charge line names it as it is
 * (cgpu_ledger_dump renames only a process gone).
 */
static void nvh_dump_objs(struct seq_file *m)
{
	struct nvh_holder *h;
	struct nvh_file *rec;
	int bkt;

	mutex_lock(&nvh.files_lock);
	hash_for_each(nvh.files, bkt, rec, node) {
		mutex_lock(&rec->lock);
		nvh_dump_rec(m, rec);
		mutex_unlock(&rec->lock);
	}
	mutex_unlock(&nvh.files_lock);
	mutex_lock(&nvh.holds_lock);
	hash_for_each(nvh.holders, bkt, h, node) {
		mutex_lock(&h->rec->lock);
		nvh_dump_rec(m, h->rec);
		mutex_unlock(&h->rec->lock);
	}
	mutex_unlock(&nvh.holds_lock);
}

/*
 * Where a followed duplicate's source was seen before the driver ran: its file, and the
 * line, found again after (the file may close, and a key and an address come again).
 */
struct nvh_src {
	u64 file_id, line_id;	/* unique while cgpu_km is loaded */
	int ops;		/* the file's ops_started then */
	bool any_file;		/* a file not recorded at its open may be the source */
};

/*
 * The one memory line of the caller's container under (client, handle), in a file
 * recorded at its open unless any_file, its file's rec->lock taken; NULL if none.
 * files_lock held.
 */
static struct nvh_obj *nvh_src_find(u32 client, u32 handle, bool any_file)
{
	struct nvh_file *rec = nvh_client_rec(client);
	struct nvh_obj *o;

	if (!rec || !(any_file || READ_ONCE(rec->from_open)) || !nvh_owns(rec))
		return NULL;
	mutex_lock(&rec->lock);
	o = nvh_obj_find(rec, client, handle);
	if (o && o->kind == NVH_MEMORY && nvh_lines(rec, client, handle) == 1)
		return o;
	mutex_unlock(&rec->lock);
	return NULL;
}

/*
 * The look before the driver copies (nvh_dup_own, nvh_uvm_dup_once): line o of rec joins
 * the memory of the source line (client, handle), if it is the caller's container's and
 * its file has no call running that may change a handle; *seen says what was seen
 * (any_file: nvh_src_find's). m is a spare shared record, used if the source has none
 * yet, else freed. NVH_JOINED, NVH_BUSY (the source's file has such a call running), or
 * NVH_NONE.
 */
enum nvh_join { NVH_NONE, NVH_BUSY, NVH_JOINED };

static enum nvh_join nvh_src_join(struct nvh_file *rec, struct nvh_obj *o, struct nvh_mem *m,
				  u32 client, u32 handle, struct nvh_src *seen)
{
	enum nvh_join got = NVH_NONE;
	struct cgpu_slot *mine;
	struct nvh_obj *src;

	mutex_lock(&nvh.files_lock);
	/*
	 * Not while a hot update is frozen or importing: the state written names every
	 * handle of the memory (a line joined before, not yet made, has handle 0 and keeps
	 * the memory out of it), and one made after would hold it unknown to the next module.
	 * files_lock orders this look with the dump's.
	 */
	src = READ_ONCE(cgpu.state) == CGPU_RUNNING ?
	      nvh_src_find(client, handle, seen->any_file) : NULL;
	if (src) {
		/* Its instance, through its own file's slot: the memory's payer may be closing. */
		mine = cgpu_slot_of(rec->att, src->gpu);
		seen->ops = atomic_read(&src->rec->ops_started);
		smp_rmb();
		if (mine && mine->inst == cgpu_slot_of(src->rec->att, src->gpu)->inst)
			got = atomic_read(&src->rec->ops_busy) ? NVH_BUSY : NVH_JOINED;
		if (got != NVH_JOINED) {
			mutex_unlock(&src->rec->lock);
			src = NULL;
		}
	}
	if (src) {
		if (!src->id)
			src->id = atomic64_inc_return(&nvh.ids);
		seen->file_id = src->rec->id;
		seen->line_id = src->id;
		mutex_lock(&nvh.mem_lock);
		if (!src->mem) {
			/* Its first duplicate: the charge moves from the line to a shared record. */
			INIT_LIST_HEAD(&m->lines);
			m->payer = src->rec;
			m->slot = src->slot;
			m->bytes = src->bytes;
			m->gpu = src->gpu;
			list_add_tail(&src->mlink, &m->lines);
			src->mem = m;
			m = NULL;
		}
		o->mem = src->mem;
		o->gpu = src->gpu;
		list_add_tail(&o->mlink, &o->mem->lines);
		mutex_unlock(&nvh.mem_lock);
		mutex_unlock(&src->rec->lock);
	}
	mutex_unlock(&nvh.files_lock);
	cgpu_free(m);
	return got;
}

/*
 * The look after the driver copied: whether the source line seen is still the one
 * under (client, handle) and its file started no call that may change a handle since,
 * and has none running, but own (the caller's own call, when it is on that file).
 */
static bool nvh_src_unchanged(u32 client, u32 handle, const struct nvh_src *seen, int own)
{
	struct nvh_obj *src;
	bool same = false;

	mutex_lock(&nvh.files_lock);
	smp_mb();
	src = nvh_src_find(client, handle, seen->any_file);
	if (src) {
		same = src->rec->id == seen->file_id && src->id == seen->line_id &&
		       atomic_read(&src->rec->ops_started) == seen->ops + own &&
		       atomic_read(&src->rec->ops_busy) == own;
		mutex_unlock(&src->rec->lock);
	}
	mutex_unlock(&nvh.files_lock);
	return same;
}

/*
 * The caller's duplicate of memory its container holds (nvh_rm_dup): followed, so that
 * the memory stays charged, once, while any of its handles lives. A line for the new
 * handle joins the memory's lines before the driver runs (then the source's last free
 * cannot give the charge back meanwhile), and is recorded if the driver copied that very
 * memory. The source is named by a handle, which another thread can free, and use again
 * for new memory, between this look and the driver's copy; no control of RM says which
 * memory an object is, so the copy is taken to be of the line seen only if the line
 * was alone under its handle and no call that may change a handle of the source's file
 * was running at the look or started since (nvh_op_begin: every such call of a caller
 * in a container on a file recorded at its open counts). Otherwise the duplicate is
 * freed and refused, as one of memory that is not the container's is.
 */
static u32 nvh_dup_own(const struct nvh_call *c)
{
	struct nva_nvos55 *p = c->data;
	struct nvh_mem *m = NULL;
	struct nvh_src seen = {};
	struct nvh_file *rec;
	struct nvh_obj *o;
	bool refuse, certain, made;
	u32 st, freed;

	rec = nvh_file_for_caller(c->nvfp, &refuse);
	if (!rec)
		return nvh_refuse(&p->status, NVA_ERR_INSUFFICIENT_PERMISSIONS,
				  "duplicating video memory through a file it cannot be charged on, object",
				  p->hObjectSrc);
	o = cgpu_zalloc(sizeof(*o));
	m = cgpu_zalloc(sizeof(*m));
	if (!o || !m || !nvh_take_place(rec)) {
		cgpu_free(o);
		cgpu_free(m);
		return nvh_answer(&p->status, NVA_ERR_NO_MEMORY);
	}
	o->kind = NVH_MEMORY;
	o->rec = rec;

	if (nvh_src_join(rec, o, m, p->hClientSrc, p->hObjectSrc, &seen) != NVH_JOINED) {
		nvh_give_place(rec);
		cgpu_free(o);
		return nvh_refuse(&p->status, NVA_ERR_INSUFFICIENT_PERMISSIONS,
				  "duplicating video memory not its container's own, or being changed, object",
				  p->hObjectSrc);
	}

	/* The duplicate makes a handle in the caller's file: a change there too. */
	nvh_op_begin(rec);
	st = nvh_orig(c);

	made = st == NVA_NV_OK && p->status == NVA_NV_OK;
	/* The duplicate's own call counts on the source's file when that is the caller's. */
	certain = made && nvh_src_unchanged(p->hClientSrc, p->hObjectSrc, &seen,
					    seen.file_id == rec->id);
	/*
	 * Not certain: freed before its line goes, so the memory is never held uncharged;
	 * one the driver would not free (not known to happen to what it has just made)
	 * stays a line of the memory seen.
	 */
	freed = made && !certain ? nvh_rm_free_obj(c->sp, p->hClient, p->hParent, p->hObject) :
		NVA_NV_OK;
	if (certain || freed != NVA_NV_OK) {
		o->client = p->hClient;
		o->handle = p->hObject;
		o->parent = p->hParent;
		mutex_lock(&rec->lock);
		nvh_record(rec, o);
		mutex_unlock(&rec->lock);
	} else {
		nvh_mem_unlink(o, false);
		nvh_give_place(rec);
		cgpu_free(o);
	}
	nvh_op_end(rec);
	if (certain)
		atomic64_inc(&nvh.followed);
	if (certain || !made)
		return st;
	atomic64_inc(&nvh.taken_back);
	return nvh_refuse(&p->status, NVA_ERR_INSUFFICIENT_PERMISSIONS,
			  freed == NVA_NV_OK ?
			  "duplicate made while its source could change: freed, object" :
			  "duplicate made while its source could change (the driver would not free it: kept charged), object",
			  p->hObject);
}

/*
 * NV_ESC_RM_DUP_OBJECT by a caller in a container. A duplicate keeps the memory in the
 * driver after the original is freed: video memory the container holds is followed
 * (nvh_dup_own); any other video memory (the host's, another container's, an object
 * this module did not see made) is refused with the driver's
 * NV_ERR_INSUFFICIENT_PERMISSIONS; everything else (devices, system memory, the host's
 * calls) goes to the driver. What the source is comes from the driver, not from the
 * records: an object the driver has just made is recorded only after its answer, and a
 * second thread could duplicate it in between. The handle is resolved again when the
 * driver runs, so the duplicate it made is asked about too, and freed if it is video
 * memory.
 */
static u32 nvh_rm_dup(const struct nvh_call *c)
{
	struct nva_nvos55 *p = c->data;
	struct nvh_file *rec;
	const char *why;
	bool vidmem;
	u64 bytes;
	u32 st, cls;

	if (!nvh_caller_contained())
		return nvh_orig(c);
	if (!nvh_rm_surface(c->sp, p->hClientSrc, p->hObjectSrc, &bytes, &vidmem) && vidmem)
		return nvh_dup_own(c);
	rec = nvh_file_of_call(c->nvfp);
	if (rec)
		nvh_op_begin(rec);
	st = nvh_orig(c);
	/*
	 * What was made is asked of the driver, by its handle: the source's may name another
	 * object by now. A duplicate of a channel group (or of a context share in one), or of
	 * a VA space, would keep it in the driver once its own handle is freed and its count
	 * given back (max_channels); one of a VA range would keep its page tables once its
	 * charge is given back.
	 */
	why = NULL;
	if (st != NVA_NV_OK || p->status != NVA_NV_OK)
		;
	else if (!nvh_rm_surface(c->sp, p->hClient, p->hObject, &bytes, &vidmem) && vidmem)
		why = "duplicate of video memory";
	else if (nvh_rm_class(c->sp, p->hClient, p->hObject, &cls))
		why = "duplicate of an object the driver would not name";
	else if (cls == NVA_KEPLER_CHANNEL_GROUP_A || cls == NVA_FERMI_CONTEXT_SHARE_A)
		why = "duplicate of a channel group or context share";
	else if (cls == NVA_FERMI_VASPACE_A)
		why = "duplicate of a VA space";
	else if (cls == NVA_NV50_MEMORY_VIRTUAL || cls == NVA_NV01_MEMORY_VIRTUAL)
		why = "duplicate of a VA range";
	if (why) {
		st = nvh_rm_free_obj(c->sp, p->hClient, p->hParent, p->hObject);
		atomic64_inc(&nvh.taken_back);
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: %s 0x%x: %s\n", task_tgid_nr(current),
				    why, p->hObject, st == NVA_NV_OK ? "freed" : "the driver would not free it");
		st = nvh_answer(&p->status, NVA_ERR_INSUFFICIENT_PERMISSIONS);
	}
	if (rec)
		nvh_op_end(rec);
	return st;
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
static u32 nvh_vid_heap(const struct nvh_call *c)
{
	struct nva_nvos32_head *p = c->data;
	struct nvh_file *rec;
	u32 st;

	if (!nvh_vid_heap_passes(p->function)) {
		if (!nvh_caller_contained())
			return nvh_orig(c);
		return nvh_refuse(&p->status, NVA_ERR_NOT_SUPPORTED,
				  "RM_VID_HEAP_CONTROL (it allocates outside RM_ALLOC), function",
				  p->function);
	}
	/* FREE and HW_FREE free by handle: counted as RM_FREE is. */
	rec = nvh_file_of_call(c->nvfp);
	if (!rec)
		return nvh_orig(c);
	nvh_op_begin(rec);
	st = nvh_orig(c);
	nvh_op_end(rec);
	return st;
}

/*
 * NV_ESC_RM_ALLOC_MEMORY, RM's deprecated allocation API: besides system memory it makes
 * video-memory objects (NV01_MEMORY_LOCAL_USER there yields the whole-FB view to an
 * administrator, and its other classes, lists of FB pages, the console, FLA, are not
 * charged here either), all inside the driver without an RM_ALLOC. In a container only
 * the system-memory classes pass (libcuda's pinned host memory).
 */
static u32 nvh_alloc_memory_old(const struct nvh_call *c)
{
	struct nva_nvos02 *p = c->data;

	if (p->hClass == NVA_NV01_MEMORY_SYSTEM || p->hClass == NVA_NV01_MEMORY_SYSTEM_OS_DESCRIPTOR ||
	    !nvh_caller_contained())
		return nvh_orig(c);
	return nvh_refuse(&p->status, NVA_ERR_NOT_SUPPORTED,
			  "RM_ALLOC_MEMORY of memory this module does not charge, class", p->hClass);
}

/*
 * NV_ESC_RM_ALLOC_OBJECT: RM_ALLOC without parameters. A class this module tracks or
 * refuses is refused through it in a container (tracking needs the parameters).
 */
static u32 nvh_alloc_object(const struct nvh_call *c)
{
	struct nva_nvos05 *p = c->data;

	if (!(nvh_class_read(p->hClass) || nvh_class_refused(p->hClass)) || !nvh_caller_contained())
		return nvh_orig(c);
	return nvh_refuse(&p->status, NVA_ERR_NOT_SUPPORTED, "RM_ALLOC_OBJECT of class", p->hClass);
}

/*
 * RM_CONTROL importing objects from a file descriptor into the caller's client, or
 * exporting them to one. An import is a duplicate by another door, whose object only
 * the caller's memory names (RM reads the control's parameters from it after us); an
 * export duplicates the object into RM's own export client, where it lives until the
 * descriptor is closed, past every handle of the container's and so past its charge
 * (found in review). In a container both are refused as a duplicate of memory that is
 * not followed is.
 */
static u32 nvh_fd_share(const struct nvh_call *c)
{
	struct nva_nvos54 *p = c->data;

	if (!nvh_caller_contained())
		return nvh_orig(c);
	return nvh_refuse(&p->status, NVA_ERR_INSUFFICIENT_PERMISSIONS,
			  "an import or export of objects through a file descriptor, control",
			  p->cmd);
}

/*
 * NV_ESC_REGISTER_FD: from then on RM takes every call on this file as one on the
 * control file named (escape.c: clientOSInfo), so the clients made through it are that
 * file's and outlive this one; cgpu_km keeps charges by the file a call came on and
 * would give them back at this file's close while the driver still held the memory
 * (found in review). libcuda registers GPU nodes' files, which cannot allocate (RM's
 * escapes that do are the control device's only). A control file's registration is
 * refused in a container (the driver's -EINVAL); a GPU's goes to the driver.
 */
static u32 nvh_register_fd(const struct nvh_call *c)
{
	const struct nva_nv_state_head *nv = c->nv;

	if (!nv || !(READ_ONCE(nv->flags) & NVA_NV_FLAG_CONTROL) || !nvh_caller_contained())
		return nvh_orig(c);
	pr_warn_ratelimited("cgpu_km: enforce: pid %d: registering a control file to another refused in a container\n",
			    task_tgid_nr(current));
	return NVA_ERR_INSUFFICIENT_PERMISSIONS;
}

/*
 * NV_ESC_RM_MAP_MEMORY_DMA by a caller in a container (the block is the driver's kernel
 * copy: no field can change after this look). RM reserves page-table memory for the
 * mapping's length before it checks the length against the range mapped into
 * (serverInterMap_Prologue: virtmemReserveMempool), and that reservation stays in its
 * pool after a refusal; so the length must be one the range's own charge covers: not 0
 * and no more than the range's size, which the driver gives by its handle, in a client
 * the caller's file follows (RM's own answer for any other client: it is not the
 * caller's, or one cgpu_km cannot ask about on the caller's behalf). What the driver
 * cannot size (a context DMA, which makes no GPU page tables, or an object that is not
 * a range) is refused too: a handle the caller frees and makes again as a range between
 * this look and the driver's would map past its charge.
 */
static u32 nvh_map_dma(const struct nvh_call *c)
{
	struct nva_nvos46 *p = c->data;
	struct nvh_file *rec;
	bool ours, vidmem;
	u64 bytes;

	if (!nvh_caller_contained())
		return nvh_orig(c);
	rec = nvh_file_of_call(c->nvfp);
	mutex_lock(&nvh.files_lock);
	ours = rec && nvh_client_rec(p->hClient) == rec;
	mutex_unlock(&nvh.files_lock);
	if (!ours)
		return nvh_refuse(&p->status, NVA_ERR_INVALID_CLIENT,
				  "RM_MAP_MEMORY_DMA in a client cgpu_km does not follow on the caller's file, client",
				  p->hClient);
	if (nvh_rm_surface(c->sp, p->hClient, p->hDma, &bytes, &vidmem))
		return nvh_refuse(&p->status, NVA_ERR_NOT_SUPPORTED,
				  "RM_MAP_MEMORY_DMA into an object whose size the driver would not tell (not a VA range), object",
				  p->hDma);
	if (!p->length || p->length > bytes)
		return nvh_refuse(&p->status, NVA_ERR_INVALID_LIMIT,
				  "RM_MAP_MEMORY_DMA of no length or past the range's size, object",
				  p->hDma);
	return nvh_orig(c);
}

/* One RM escape, its block the driver's kernel copy; a block of another size is RM's to refuse. */
static u32 nvh_rm_ioctl_body(const struct nvh_call *c)
{
	switch (c->cmd) {
	case NVA_ESC_RM_ALLOC:
		if (c->size == sizeof(struct nva_nvos21) || c->size == sizeof(struct nva_nvos64))
			return nvh_rm_alloc(c);
		break;
	case NVA_ESC_RM_FREE:
		if (c->size == sizeof(struct nva_nvos00))
			return nvh_rm_free(c);
		break;
	case NVA_ESC_RM_DUP_OBJECT:
		if (c->size == sizeof(struct nva_nvos55))
			return nvh_rm_dup(c);
		break;
	case NVA_ESC_RM_VID_HEAP_CONTROL:
		if (c->size == NVA_NVOS32_SIZE)
			return nvh_vid_heap(c);
		break;
	case NVA_ESC_RM_ALLOC_MEMORY:
		if (c->size == NVA_NVOS02_WITH_FD_SIZE)
			return nvh_alloc_memory_old(c);
		break;
	case NVA_ESC_RM_ALLOC_OBJECT:
		if (c->size == sizeof(struct nva_nvos05))
			return nvh_alloc_object(c);
		break;
	case NVA_ESC_REGISTER_FD:
		return nvh_register_fd(c);
	case NVA_ESC_RM_MAP_MEMORY_DMA:
		if (c->size == sizeof(struct nva_nvos46))
			return nvh_map_dma(c);
		break;
	case NVA_ESC_RM_CONTROL:
		/* Only imports and exports are redirected here (nvh_ftrace). */
		if (c->size == sizeof(struct nva_nvos54))
			return nvh_fd_share(c);
		break;
	}
	return nvh_orig(c);
}

static u32 nvh_rm_ioctl_wrap(void *sp, void *nv, void *nvfp, u32 cmd, void *data, u32 size)
{
	const struct nvh_call c = { sp, nv, nvfp, cmd, data, size };
	int idx = srcu_read_lock(&nvh_srcu);
	u32 ret = nvh_rm_ioctl_body(&c);

	srcu_read_unlock(&nvh_srcu, idx);
	return ret;
}

/*
 * nv_dma_buf_export(nv, params), which nvidia_ioctl calls for NV_ESC_EXPORT_TO_DMABUF_FD
 * on its kernel copy of the block, setting the block's status to what it returns,
 * without passing rm_ioctl. It duplicates the objects into a client of RM's own, where
 * the memory stays until the dma-buf's last reference goes: past every handle of the
 * container's, and so past its charge; and RM finds the objects' client by its handle
 * alone, not checked to be the caller's (RmDmabufVerifyMemHandle). Refused in a
 * container, as exports to a file descriptor are.
 */
static u32 nvh_dmabuf_wrap(void *nv, void *params)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_dmabuf_fn orig = (nvh_dmabuf_fn)READ_ONCE(nvh.dmabuf.addr);
	u32 ret;

	if (nvh_caller_contained()) {
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: an export to a dma-buf refused in a container\n",
				    task_tgid_nr(current));
		ret = NVA_ERR_INSUFFICIENT_PERMISSIONS;
	} else {
		ret = orig(nv, params);
	}
	srcu_read_unlock(&nvh_srcu, idx);
	return ret;
}

/* ---- nvidia-uvm's mappings of RM memory ---- */

static u32 nvh_hold_key(const void *device, u32 hdup)
{
	return hdup ^ (u32)(unsigned long)device;
}

/* The caller's holder, made if it has none, with one more user; NULL if none can be had. */
static struct nvh_holder *nvh_holder_get(void)
{
	pid_t pid = task_tgid_nr(current);
	u64 start = current->group_leader->start_time;
	struct nvh_holder *h, *mine = NULL;
	int err;

	for (;;) {
		mutex_lock(&nvh.holds_lock);
		hash_for_each_possible(nvh.holders, h, node, pid)
			if (h->pid == pid && h->start == start)
				break;
		if (!h && mine) {
			h = mine;
			mine = NULL;
			hash_add(nvh.holders, &h->node, pid);
		}
		if (h)
			h->users++;
		mutex_unlock(&nvh.holds_lock);
		if (h || mine)
			break;
		/* Made outside the lock: attaching takes the registry's. */
		mine = cgpu_zalloc(sizeof(*mine));
		if (!mine)
			return NULL;
		mine->rec = nvh_rec_new(&err, true);
		if (!mine->rec) {
			cgpu_free(mine);
			return NULL;
		}
		mine->pid = pid;
		mine->start = start;
	}
	if (mine) {
		/* Another thread of the process was quicker. */
		nvh_file_free(mine->rec);
		cgpu_free(mine);
	}
	return h;
}

/* One user less; the last takes the record with it (nothing is charged to it then). */
static void nvh_holder_put(struct nvh_holder *h)
{
	bool last;

	mutex_lock(&nvh.holds_lock);
	last = !--h->users;
	if (last)
		hash_del(&h->node);
	mutex_unlock(&nvh.holds_lock);
	if (last) {
		nvh_file_free(h->rec);
		cgpu_free(h);
	}
}

static bool nvh_meminfo_sysmem(const void *info)
{
	return ((const u8 *)info)[NVA_UVM_MEMINFO_SYSMEM_OFF];
}

/* The memory's size, the driver's (UvmGpuMemoryInfo.size). */
static u64 nvh_meminfo_size(const void *info)
{
	u64 size;

	memcpy(&size, (const u8 *)info + NVA_UVM_MEMINFO_SIZE_OFF, sizeof(size));
	return size;
}

/*
 * The driver's answer st to a duplicate that is not followed: system memory passes;
 * video memory is never held uncharged past this call: freed, and refused.
 */
static u32 nvh_uvm_unfollowed(void *device, u32 hDup, const void *info, u32 st)
{
	nvh_uvm_free_fn orig_free = (nvh_uvm_free_fn)READ_ONCE(nvh.uvm_free.addr);

	if (st != NVA_NV_OK || nvh_meminfo_sysmem(info))
		return st;
	orig_free(device, hDup);
	atomic64_inc(&nvh.taken_back);
	return NVA_ERR_INSUFFICIENT_PERMISSIONS;
}

/*
 * Whether (client, handle) is a memory line of the caller's container that a mapping
 * could follow, looked at before a holder is made for it: a map of anything else
 * (system memory, above all) needs none. A line made after this look is refused with
 * the rest; one gone after it is the join's to find gone.
 */
static bool nvh_src_known(u32 client, u32 handle)
{
	struct nvh_obj *src;

	mutex_lock(&nvh.files_lock);
	src = nvh_src_find(client, handle, true);
	if (src)
		mutex_unlock(&src->rec->lock);
	mutex_unlock(&nvh.files_lock);
	return src != NULL;
}

/*
 * The GPU nvidia-uvm's device is: that of a GPU VA space a container registered on the
 * device since cgpu_km attached (nvidia-uvm maps on a GPU only where the va_space has
 * one, uvm_map_external.c's uvm_va_space_get_gpu_by_uuid_with_gpu_va_space, and
 * duplicates it on the same device, uvm_gpu_device_handle); -1 if none says (one
 * registered before cgpu_km attached or a hot update, or by the host).
 */
static int nvh_uvm_dev_gpu(const void *device)
{
	struct nvh_kept *k;
	int gpu = -1;

	mutex_lock(&nvh.holds_lock);
	hash_for_each_possible(nvh.kept_devs, k, dnode, (unsigned long)device)
		if (k->device == device) {
			gpu = k->slot->inst->gpu->index;
			break;
		}
	mutex_unlock(&nvh.holds_lock);
	return gpu;
}

/*
 * Line t of bytes charged to rec's slot on gpu under handle (client 0: nvidia-uvm's,
 * never a caller's): the page tables nvidia-uvm makes for a mapping, charged before it
 * makes them. 0, or -ENOMEM past the budget (-EAGAIN while a hot update is frozen) with
 * nothing charged.
 */
static int nvh_line_charge(struct nvh_file *rec, u32 gpu, u32 handle, u64 bytes, struct nvh_obj *t)
{
	struct cgpu_slot *slot = cgpu_slot_of(rec->att, gpu);
	u64 used, memsize;
	int err;

	t->bytes = bytes;
	if (WARN_ON_ONCE(!slot))
		return -ENOMEM;
	err = cgpu_ledger_charge(slot, bytes, &used, &memsize);
	if (err)
		return err;
	t->kind = NVH_MEMORY;
	t->rec = rec;
	t->gpu = gpu;
	t->handle = handle;
	t->slot = slot;
	return 0;
}

/* Lines t[0..n) charged and not recorded: given back and freed. */
static void nvh_lines_uncharge(struct nvh_obj **t, unsigned int n)
{
	u64 used, memsize;

	while (n--) {
		cgpu_ledger_uncharge(t[n]->slot, t[n]->bytes, &used, &memsize);
		cgpu_free(t[n]);
	}
}

/*
 * Lines t[0..n) of bytes each charged to rec's slots on gpus[0..n) under handle
 * (nvh_line_charge): all, or none and the error.
 */
static int nvh_lines_charge(struct nvh_file *rec, const u32 *gpus, unsigned int n, u32 handle,
			    u64 bytes, struct nvh_obj **t)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		t[i] = cgpu_zalloc(sizeof(*t[i]));
		err = t[i] ? nvh_line_charge(rec, gpus[i], handle, bytes, t[i]) : -ENOMEM;
		if (err) {
			cgpu_free(t[i]);
			nvh_lines_uncharge(t, i);
			return err;
		}
	}
	return 0;
}

/* The GPUs of every slot of att in gpus: how many. */
static unsigned int nvh_att_gpus(const struct cgpu_attachment *att, u32 *gpus)
{
	unsigned int i;

	for (i = 0; i < att->n; i++)
		gpus[i] = att->slots[i].inst->gpu->index;
	return att->n;
}

/*
 * The hold of a mapping's duplicate hdup on device, followed: its lines (the memory's,
 * o, if video memory; its page tables', hold->tables) recorded in holder's record, their
 * places taken, and one more user of holder's, until the duplicate's free.
 */
static void nvh_hold_add(struct nvh_hold *hold, struct nvh_holder *holder, void *device, u32 hdup,
			 struct nvh_obj *o)
{
	struct nvh_file *rec = holder->rec;
	unsigned int i;

	hold->device = device;
	hold->hdup = hdup;
	hold->line = o;
	hold->holder = holder;
	mutex_lock(&nvh.holds_lock);
	holder->users++;
	hash_add(nvh.holds, &hold->node, nvh_hold_key(device, hdup));
	atomic_inc(&nvh.nholds);
	mutex_lock(&rec->lock);
	if (o)
		nvh_record(rec, o);
	for (i = 0; i < hold->ntables; i++)
		nvh_record(rec, hold->tables[i]);
	mutex_unlock(&rec->lock);
	mutex_unlock(&nvh.holds_lock);
	atomic64_inc(&nvh.mapped);
}

/*
 * A duplicate made whose mapping's page tables cannot be charged (err: -EPERM on a GPU
 * not the container's): freed, refused.
 */
static void nvh_uvm_taken_back(void *device, u32 hdup, u32 hMem, const void *info, int err)
{
	nvh_uvm_free_fn orig_free = (nvh_uvm_free_fn)READ_ONCE(nvh.uvm_free.addr);

	orig_free(device, hdup);
	atomic64_inc(&nvh.taken_back);
	pr_warn_ratelimited("cgpu_km: enforce: pid %d: a mapping by nvidia-uvm of memory 0x%x refused: its page tables (up to %llu bytes) %s\n",
			    task_tgid_nr(current), hMem, cgpu_map_tables(nvh_meminfo_size(info)),
			    err == -EAGAIN ? "cannot be charged while a hot update is under way" :
			    err == -EPERM ? "would be on a GPU not its container's" :
			    "would pass the budget");
}

/*
 * One try at following a mapping's duplicate, as nvh_dup_own follows RM's: the line of
 * the source (the caller's container's, alone under its handle, its file with no call
 * that may change a handle running) is looked up, a hold line joins its memory, the
 * driver duplicates, and the duplicate is the memory seen only if nothing changed on the
 * source's file meanwhile. Then the hold is recorded; otherwise the duplicate is freed
 * before the hold line goes (*again: the caller may look again). Memory of no line of
 * the container's: what the driver duplicated is passed if system memory, freed and
 * refused if video memory.
 */
static u32 nvh_uvm_dup_once(struct nvh_holder *holder, void *device, u32 hClient, u32 hMem,
			    u32 *hDup, void *info, bool *again)
{
	nvh_uvm_dup_fn orig = (nvh_uvm_dup_fn)READ_ONCE(nvh.uvm_dup.addr);
	struct nvh_file *rec = holder->rec;
	struct nvh_src seen = {};
	struct nvh_hold *hold;
	struct nvh_mem *m;
	struct nvh_obj *o, *t;
	enum nvh_join j;
	bool certain;
	int err, gpu;
	u32 st;

	*again = false;
	o = cgpu_zalloc(sizeof(*o));
	t = cgpu_zalloc(sizeof(*t));
	m = cgpu_zalloc(sizeof(*m));
	hold = cgpu_zalloc(sizeof(*hold));
	if (!o || !t || !m || !hold || !nvh_take_places(rec, 2)) {
		cgpu_free(o);
		cgpu_free(t);
		cgpu_free(m);
		cgpu_free(hold);
		return NVA_ERR_NO_MEMORY;
	}
	o->kind = NVH_MEMORY;
	o->rec = rec;

	/*
	 * Any file of the container's: the calls a file not recorded at its open may have
	 * had uncounted are those of a process outside the container sharing it, the
	 * limit the host's calls on a container's descriptor have anyway; and a process
	 * running through a hot update, or started before cgpu_km attached, has only such
	 * files: its every allocation would fail.
	 */
	seen.any_file = true;
	j = nvh_src_join(rec, o, m, hClient, hMem, &seen);
	if (j == NVH_BUSY) {
		/* Its file is changing a handle now: the caller looks again after a pause. */
		*again = true;
		st = NVA_ERR_INSUFFICIENT_PERMISSIONS;
		goto out;
	}
	st = orig(device, hClient, hMem, hDup, info);
	certain = st == NVA_NV_OK && j == NVH_JOINED && !nvh_meminfo_sysmem(info) &&
		  nvh_src_unchanged(hClient, hMem, &seen, 0);
	if (certain) {
		/* The tables are the mapping GPU's, a peer mapping's not the memory's. */
		gpu = nvh_uvm_dev_gpu(device);
		if (gpu < 0)
			gpu = o->mem->gpu;
		err = cgpu_slot_of(rec->att, gpu) ?
		      nvh_line_charge(rec, gpu, *hDup, cgpu_map_tables(nvh_meminfo_size(info)), t) : -EPERM;
		if (err) {
			nvh_uvm_taken_back(device, *hDup, hMem, info, err);
			st = err == -EPERM ? NVA_ERR_INSUFFICIENT_PERMISSIONS : NVA_ERR_NO_MEMORY;
			goto out;
		}
		o->handle = *hDup;
		hold->tables[hold->ntables++] = t;
		nvh_hold_add(hold, holder, device, *hDup, o);
		return st;
	}
	if (st == NVA_NV_OK && !nvh_meminfo_sysmem(info))
		*again = j == NVH_JOINED;
	st = nvh_uvm_unfollowed(device, *hDup, info, st);
out:
	if (j == NVH_JOINED)
		nvh_mem_unlink(o, false);
	nvh_give_places(rec, 2);
	cgpu_free(o);
	cgpu_free(t);
	cgpu_free(hold);
	return st;
}

/*
 * A mapping's duplicate hdup of system memory hMem, made on device for a caller in a
 * container: the memory is no container's charge, but the page tables nvidia-uvm makes
 * for the mapping are the mapping GPU's, device's, and charged there as a mapping's of
 * video memory are (nvh_line_charge), to holder's record, until the duplicate's free.
 * A device of no GPU known is charged on each of the container's GPUs (too much, never
 * too little: its processes reach no other GPU); one of a GPU not the container's, or
 * past the budget, is refused, the duplicate freed.
 */
static u32 nvh_uvm_sysmem_hold(struct nvh_holder *holder, void *device, u32 hMem, u32 hdup,
			       const void *info)
{
	struct nvh_file *rec = holder->rec;
	int gpu = nvh_uvm_dev_gpu(device), err = -ENOMEM;
	u32 gpus[CGPU_MAX_GPUS] = { gpu };
	unsigned int n = gpu < 0 ? nvh_att_gpus(rec->att, gpus) : 1;
	struct nvh_hold *hold;

	if (gpu >= 0 && !cgpu_slot_of(rec->att, gpu)) {
		nvh_uvm_taken_back(device, hdup, hMem, info, -EPERM);
		return NVA_ERR_INSUFFICIENT_PERMISSIONS;
	}
	hold = cgpu_zalloc(sizeof(*hold));
	if (hold && nvh_take_places(rec, n)) {
		err = nvh_lines_charge(rec, gpus, n, hdup, cgpu_map_tables(nvh_meminfo_size(info)),
				       hold->tables);
		if (!err) {
			hold->ntables = n;
			nvh_hold_add(hold, holder, device, hdup, NULL);
			return NVA_NV_OK;
		}
		nvh_give_places(rec, n);
	}
	nvh_uvm_taken_back(device, hdup, hMem, info, err);
	cgpu_free(hold);
	return NVA_ERR_NO_MEMORY;
}

/*
 * nvUvmInterfaceDupMemory(device, hClient, hPhysMemory, &hDup, info), which nvidia-uvm
 * calls in the ioctl of the process mapping RM memory (UVM_MAP_EXTERNAL_ALLOCATION,
 * which libcuda makes for every allocation): the duplicate keeps the memory after every
 * handle of the process's is freed, until the mapping goes. For a caller in a
 * container it is followed (nvh_uvm_dup_once), looked at again up to NVH_UVM_TRIES
 * times when the source changed meanwhile, else refused with
 * NV_ERR_INSUFFICIENT_PERMISSIONS, which nvidia-uvm returns as the map's status. A map
 * of system memory has its page tables charged (nvh_uvm_sysmem_hold).
 */
static u32 nvh_uvm_dup_wrap(void *device, u32 hClient, u32 hPhysMemory, u32 *hDupMemory, void *info)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_uvm_dup_fn orig = (nvh_uvm_dup_fn)READ_ONCE(nvh.uvm_dup.addr);
	struct nvh_holder *holder;
	u64 own[NVA_UVM_MEMINFO_SIZE / sizeof(u64)];
	u32 want = hDupMemory ? *hDupMemory : 0;
	unsigned int i;
	bool again = true, sys = false;
	u32 st;

	if (!nvh_caller_contained()) {
		st = orig(device, hClient, hPhysMemory, hDupMemory, info);
		goto out;
	}
	if (!hDupMemory || !(holder = nvh_holder_get())) {
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: a mapping by nvidia-uvm of memory 0x%x that cannot be charged refused in a container\n",
				    task_tgid_nr(current), hPhysMemory);
		st = NVA_ERR_INSUFFICIENT_PERMISSIONS;
		goto out;
	}
	if (!nvh_src_known(hClient, hPhysMemory)) {
		/* Nothing of the container's to follow (system memory, or refused). */
		st = orig(device, hClient, hPhysMemory, hDupMemory, info ?: own);
		st = nvh_uvm_unfollowed(device, *hDupMemory, info ?: own, st);
	} else {
		for (i = 0; i < NVH_UVM_TRIES && again; i++) {
			/* A pause: the call changing a handle of the source's file ends. */
			if (i)
				usleep_range(100, 1000);
			st = nvh_uvm_dup_once(holder, device, hClient, hPhysMemory, hDupMemory,
					      info ?: own, &again);
		}
	}
	/* What passed without a hold is system memory: its mapping's page tables are charged. */
	sys = st == NVA_NV_OK && nvh_meminfo_sysmem(info ?: own);
	if (sys)
		st = nvh_uvm_sysmem_hold(holder, device, hPhysMemory, *hDupMemory, info ?: own);
	nvh_holder_put(holder);
	/*
	 * nvidia-uvm frees a handle left in *hDupMemory on its error path: the one we freed
	 * must not be there (uvm_ext_gpu_map_destroy).
	 */
	if (st != NVA_NV_OK)
		*hDupMemory = want;
	if (st == NVA_ERR_INSUFFICIENT_PERMISSIONS && !sys)
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: a mapping by nvidia-uvm of memory 0x%x not its container's own, or being changed, refused in a container\n",
				    task_tgid_nr(current), hPhysMemory);
out:
	srcu_read_unlock(&nvh_srcu, idx);
	return st;
}

/*
 * nvUvmInterfaceFreeDupedHandle(device, hDup): a mapping's duplicate goes, in whatever
 * task unmaps or closes the va_space. The driver frees it first, then its hold line goes
 * (the memory is never held uncharged): the last line of the memory gives the charge
 * back, and the holder's last hold takes the holder with it.
 */
static u32 nvh_uvm_free_wrap(void *device, u32 hPhysHandle)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_uvm_free_fn orig = (nvh_uvm_free_fn)READ_ONCE(nvh.uvm_free.addr);
	struct nvh_holder *holder = NULL;
	struct nvh_hold *hold;
	unsigned int i;
	u32 st;

	/*
	 * Out of the table before the driver frees it, so that a hold of the same handle
	 * given again is never taken for this one; its line stays until the driver is done.
	 * RM frees the handle whatever the status says (nvGpuOpsFreeDupedHandle's Free is
	 * unconditional, 535's nv_gpu_ops.c), so the line goes whatever it says.
	 */
	mutex_lock(&nvh.holds_lock);
	hash_for_each_possible(nvh.holds, hold, node, nvh_hold_key(device, hPhysHandle))
		if (hold->device == device && hold->hdup == hPhysHandle)
			break;
	if (hold) {
		hash_del(&hold->node);
		atomic_dec(&nvh.nholds);
	}
	mutex_unlock(&nvh.holds_lock);
	st = orig(device, hPhysHandle);
	/*
	 * A duplicate a hot update carried (the driver has one client for them: map=); one
	 * followed now under the same handle means that one is gone already.
	 */
	if (atomic_read(&cgpu.resobjs))
		cgpu_give_back(0, hPhysHandle);
	if (hold) {
		/* The hold is one of the holder's users: it stays until the put. */
		holder = hold->holder;
		mutex_lock(&holder->rec->lock);
		if (hold->line)
			nvh_obj_drop(holder->rec, hold->line);
		for (i = 0; i < hold->ntables; i++)
			nvh_obj_drop(holder->rec, hold->tables[i]);
		mutex_unlock(&holder->rec->lock);
		cgpu_free(hold);
		nvh_holder_put(holder);
	}
	srcu_read_unlock(&nvh_srcu, idx);
	return st;
}


/* ---- nvidia-uvm's page tables made from no RM call ---- */

/*
 * The GPUs a span asked on the GPU of uuid (the caller's) is charged on, in gpus: the
 * container's instance of that UUID (the runtime gives it at `add`; one given none
 * matches nothing), else each of the container's (too much, never too little: its
 * processes reach no other GPU).
 */
static unsigned int nvh_uuid_gpus(const struct cgpu_attachment *att, const u8 *uuid, u32 *gpus)
{
	const struct cgpu_inst *inst;
	unsigned int i;

	for (i = 0; i < att->n; i++) {
		inst = att->slots[i].inst;
		if (memchr_inv(inst->uuid, 0, CGPU_UUID_BYTES) &&
		    !memcmp(inst->uuid, uuid, CGPU_UUID_BYTES)) {
			gpus[0] = inst->gpu->index;
			return 1;
		}
	}
	return nvh_att_gpus(att, gpus);
}

/*
 * The entries on gone, out of the table: their lines dropped (their charges back), their
 * holders' uses put. Outside nvh.holds_lock: a holder's last put takes it.
 */
static void nvh_spans_free_all(struct hlist_head *gone)
{
	struct nvh_span *sp;
	struct hlist_node *tmp;
	struct nvh_file *rec;
	unsigned int i;

	hlist_for_each_entry_safe(sp, tmp, gone, node) {
		rec = sp->holder->rec;
		mutex_lock(&rec->lock);
		for (i = 0; i < sp->n; i++)
			nvh_obj_drop(rec, sp->tables[i]);
		mutex_unlock(&rec->lock);
		nvh_holder_put(sp->holder);
		cgpu_free(sp);
	}
}

/*
 * The spans of file within [start, end] (asked on uuid's GPU, if uuid) are gone: their
 * charges back. One only partly within stays charged whole (too much, never too little)
 * until a free or the release takes all of it.
 */
static void nvh_spans_forget(const struct file *file, u64 start, u64 end, const u8 *uuid)
{
	struct nvh_span *sp;
	struct hlist_node *tmp;
	HLIST_HEAD(gone);

	mutex_lock(&nvh.holds_lock);
	hash_for_each_possible_safe(nvh.spans, sp, tmp, node, (unsigned long)file) {
		if (sp->file != file || sp->start < start || sp->end > end ||
		    (uuid && memcmp(sp->uuid, uuid, CGPU_UUID_BYTES)))
			continue;
		hash_del(&sp->node);
		atomic_dec(&nvh.nspans);
		hlist_add_head(&sp->node, &gone);
	}
	mutex_unlock(&nvh.holds_lock);
	nvh_spans_free_all(&gone);
}

/*
 * The commands whose page tables nvh_uvm_span_charge charges: the hook of nvidia-uvm's
 * handler, whether its parameters name a GPU by UUID (at NVA_UVM_SPAN_UUID_OFF), the
 * most its tables can take for a length, the log's name for it, and whether it
 * unmaps what its GPU had in the span first.
 */
struct nvh_span_kind {
	struct nvh_hook *h;
	bool uuid;
	u64 (*tables)(u64 length);
	const char *what;
	bool remaps;
};

/*
 * orig(params, filp), kind's handler (with nvidia-uvm's kernel copy of the parameters:
 * no second fetch), called for a caller in a container: the most its tables can take
 * over the span at the head of params charged first on the GPU its UUID names
 * (nvh_uuid_gpus; a kind with none: on each of the container's), past the budget
 * refused with NV_ERR_NO_MEMORY before nvidia-uvm runs and logged, given back if it
 * fails, else kept until the range's free or the file's release. For a kind that
 * remaps, what the handler unmapped on that GPU within the span (an earlier sparse
 * mapping of it) gives its charge back.
 */
static u32 nvh_uvm_span_charge(const struct nvh_span_kind *kind, nvh_uvm_api_fn orig,
			       void *params, struct file *filp)
{
	u32 gpus[CGPU_MAX_GPUS], st = NVA_ERR_NO_MEMORY;
	struct nvh_holder *holder = NULL;
	struct nvh_span *sp;
	struct nvh_file *rec;
	u64 base, length, tables;
	int err = -ENOMEM;
	unsigned int i;

	memcpy(&base, (u8 *)params + NVA_UVM_SPAN_BASE_OFF, sizeof(base));
	memcpy(&length, (u8 *)params + NVA_UVM_SPAN_LENGTH_OFF, sizeof(length));
	tables = kind->tables(length);
	sp = cgpu_zalloc(sizeof(*sp));
	if (sp)
		holder = nvh_holder_get();
	if (!holder) {
		cgpu_free(sp);
		err = -ENOENT;
		goto refused;
	}
	rec = holder->rec;
	if (kind->uuid) {
		memcpy(sp->uuid, (u8 *)params + NVA_UVM_SPAN_UUID_OFF, CGPU_UUID_BYTES);
		sp->n = nvh_uuid_gpus(rec->att, sp->uuid, gpus);
	} else {
		sp->n = nvh_att_gpus(rec->att, gpus);
	}
	if (nvh_take_places(rec, sp->n)) {
		err = nvh_lines_charge(rec, gpus, sp->n, 0, tables, sp->tables);
		if (err)
			nvh_give_places(rec, sp->n);
	}
	if (err) {
		nvh_holder_put(holder);
		cgpu_free(sp);
		goto refused;
	}
	st = orig(params, filp);
	if (st != NVA_NV_OK) {
		nvh_lines_uncharge(sp->tables, sp->n);
		nvh_give_places(rec, sp->n);
		nvh_holder_put(holder);
		cgpu_free(sp);
		return st;
	}
	if (kind->remaps)
		nvh_spans_forget(filp, base, base + length - 1, sp->uuid);
	sp->file = filp;
	sp->start = base;
	sp->end = base + length - 1;
	sp->holder = holder;
	mutex_lock(&nvh.holds_lock);
	hash_add(nvh.spans, &sp->node, (unsigned long)filp);
	atomic_inc(&nvh.nspans);
	mutex_lock(&rec->lock);
	for (i = 0; i < sp->n; i++)
		nvh_record(rec, sp->tables[i]);
	mutex_unlock(&rec->lock);
	mutex_unlock(&nvh.holds_lock);
	return st;
refused:
	pr_warn_ratelimited("cgpu_km: enforce: pid %d: %s by nvidia-uvm of %llu bytes refused: its page tables (up to %llu bytes) %s\n",
			    task_tgid_nr(current), kind->what, length, tables,
			    err == -EAGAIN ? "cannot be charged while a hot update is under way" :
			    err == -ENOENT ? "cannot be charged (no record for the process)" :
			    "would pass the budget");
	return st;
}

/*
 * A semaphore pool (UVM_ALLOC_SEMAPHORE_POOL): system memory of the caller's length,
 * mapped at 4 KiB pages in nvidia-uvm's own kernel VA on every registered GPU and in
 * every GPU VA space of the va_space, then and as GPUs and VA spaces are registered
 * later (535's uvm_va_range.c), all tables on the GPUs: two mappings' most, on each
 * of the container's GPUs (no UUID).
 */
static u64 nvh_pool_tables(u64 length)
{
	return 2 * cgpu_map_tables(length);
}

enum { NVH_SPAN_SPARSE, NVH_SPAN_DP_REGION, NVH_SPAN_POOL };

static const struct nvh_span_kind nvh_span_kinds[] = {
	/*
	 * UVM_MAP_EXTERNAL_SPARSE: tables of 64 KiB pages over the whole span at once, on
	 * the GPU of its UUID (uvm_map_external_sparse_on_gpu), after unmapping what that
	 * GPU had there.
	 */
	[NVH_SPAN_SPARSE] = { &nvh.uvm_sparse, true, cgpu_sparse_tables, "a sparse mapping", true },
	/*
	 * UVM_MAP_DYNAMIC_PARALLELISM_REGION: a range of one GPU page whose tables nvidia-uvm
	 * makes on the GPU of its UUID (uvm_map_sked_reflected_range), at any page size,
	 * placed anywhere.
	 */
	[NVH_SPAN_DP_REGION] = { &nvh.uvm_dp_region, true, cgpu_map_tables,
				 "a dynamic parallelism region", false },
	[NVH_SPAN_POOL] = { &nvh.uvm_pool, false, nvh_pool_tables, "a semaphore pool", false },
};

/* A call of kind's handler: a container's charged (nvh_uvm_span_charge), others passed. */
static u32 nvh_uvm_span_wrap(const struct nvh_span_kind *kind, void *params, struct file *filp)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_uvm_api_fn orig = (nvh_uvm_api_fn)READ_ONCE(kind->h->addr);
	u32 st = nvh_caller_contained() ? nvh_uvm_span_charge(kind, orig, params, filp) :
					 orig(params, filp);

	srcu_read_unlock(&nvh_srcu, idx);
	return st;
}

/* uvm_api_map_external_sparse(params, filp) */
static u32 nvh_uvm_sparse_wrap(void *params, struct file *filp)
{
	return nvh_uvm_span_wrap(&nvh_span_kinds[NVH_SPAN_SPARSE], params, filp);
}

/* uvm_api_map_dynamic_parallelism_region(params, filp) */
static u32 nvh_uvm_dp_region_wrap(void *params, struct file *filp)
{
	return nvh_uvm_span_wrap(&nvh_span_kinds[NVH_SPAN_DP_REGION], params, filp);
}

/* uvm_api_alloc_semaphore_pool(params, filp) */
static u32 nvh_uvm_pool_wrap(void *params, struct file *filp)
{
	return nvh_uvm_span_wrap(&nvh_span_kinds[NVH_SPAN_POOL], params, filp);
}

/*
 * uvm_api_free(params, filp), nvidia-uvm's UVM_FREE of a whole range: its spans go with
 * it, their charges back once it is freed.
 */
static u32 nvh_uvm_range_free_wrap(void *params, struct file *filp)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_uvm_api_fn orig = (nvh_uvm_api_fn)READ_ONCE(nvh.uvm_range_free.addr);
	u64 base, length;
	u32 st;

	memcpy(&base, (u8 *)params + NVA_UVM_SPAN_BASE_OFF, sizeof(base));
	memcpy(&length, (u8 *)params + NVA_UVM_SPAN_LENGTH_OFF, sizeof(length));
	st = orig(params, filp);
	if (st == NVA_NV_OK && length)
		nvh_spans_forget(filp, base, base + length - 1, NULL);
	srcu_read_unlock(&nvh_srcu, idx);
	return st;
}

/*
 * uvm_release_entry(inode, filp), the release of nvidia-uvm's file, which destroys its
 * va_space and every mapping in it: the file's spans' charges back after.
 * (Under a suspend nvidia-uvm defers the destroy: the charge goes a little early.)
 */
static int nvh_uvm_close_wrap(struct inode *inode, struct file *filp)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_file_fn orig = (nvh_file_fn)READ_ONCE(nvh.uvm_close.addr);
	int ret = orig(inode, filp);

	nvh_spans_forget(filp, 0, ~0ULL, NULL);
	srcu_read_unlock(&nvh_srcu, idx);
	return ret;
}

/*
 * uvm_va_range_create_mmap(va_space, mm, vma_wrapper, out), which nvidia-uvm's mmap
 * calls to make a managed range, under the caller's mmap_lock and va_space lock. A
 * container's is refused: nvidia-uvm moves managed memory to a GPU in pages it takes
 * from RM's allocator itself, in its fault workers, for no process RM could charge
 * (docs/kmod.md, "Managed memory"), so none is made. Refused as a collision
 * (NV_ERR_UVM_ADDRESS_IN_USE, -EADDRINUSE to the caller): so the one mmap that makes no
 * range, a semaphore pool's CPU mapping (of system memory), still works.
 */
static u32 nvh_uvm_mmap_wrap(void *va_space, void *mm, void *vma_wrapper, void **out)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_uvm_mmap_fn orig = (nvh_uvm_mmap_fn)READ_ONCE(nvh.uvm_mmap.addr);
	u32 st = NVA_ERR_UVM_ADDRESS_IN_USE;

	if (nvh_caller_contained()) {
		atomic64_inc(&nvh.managed_refused);
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: managed memory (a mmap of nvidia-uvm) refused: nvidia-uvm would move it to the GPU outside the container's budget\n",
				    task_tgid_nr(current));
	} else {
		st = orig(va_space, mm, vma_wrapper, out);
	}
	srcu_read_unlock(&nvh_srcu, idx);
	return st;
}

/*
 * uvm_va_space_create(mapping, va_space_ptr, flags), which UVM_INITIALIZE calls with its
 * kernel copy of the flags: a container's va_space is made with HMM off
 * (UVM_INIT_FLAGS_DISABLE_HMM), so that nvidia-uvm never moves the process's pageable
 * memory to a GPU, which would be managed memory by another way in; libcuda learns it
 * from UVM_PAGEABLE_MEM_ACCESS, as on a node without HMM. (The same file initialized
 * again must bring the flags the va_space kept: with HMM off.)
 */
static u32 nvh_uvm_va_space_wrap(void *mapping, void **va_space_ptr, u64 flags)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_uvm_va_space_fn orig = (nvh_uvm_va_space_fn)READ_ONCE(nvh.uvm_va_space.addr);
	u32 st;

	if (!(flags & NVA_UVM_INIT_FLAGS_DISABLE_HMM) && nvh_caller_contained()) {
		flags |= NVA_UVM_INIT_FLAGS_DISABLE_HMM;
		atomic64_inc(&nvh.hmm_off);
	}
	st = orig(mapping, va_space_ptr, flags);
	srcu_read_unlock(&nvh_srcu, idx);
	return st;
}

/* ---- channels and VA spaces nvidia-uvm keeps ---- */

/* What the look before the driver keeps a counted object found (nvh_counted_look). */
struct nvh_look {
	u64 file_id;
	int ops;		/* its file's ops_started then */
	u32 gpu;
	unsigned int n;		/* counts it keeps: a channel in a group keeps the group too */
};

enum nvh_found { NVH_FOUND_NONE, NVH_FOUND_BUSY, NVH_FOUND };

/*
 * Counted object (client, handle) of kind (a channel, a VA space) of the caller's
 * container, in any of its files (it is counted whichever file made it): NVH_FOUND with
 * *l filled, NVH_FOUND_BUSY while its file has a call running that may change a handle,
 * or NVH_FOUND_NONE.
 */
static enum nvh_found nvh_counted_look(u32 client, u32 handle, enum nvh_kind kind,
				       struct nvh_look *l)
{
	enum nvh_found got = NVH_FOUND_NONE;
	struct nvh_obj *o, *par;
	struct nvh_file *rec;

	mutex_lock(&nvh.files_lock);
	rec = nvh_client_rec(client);
	if (rec && nvh_owns(rec)) {
		mutex_lock(&rec->lock);
		o = nvh_obj_find(rec, client, handle);
		par = o ? nvh_parent(rec, client, o->parent) : NULL;
		/*
		 * A VA space under a subdevice is refused: RM's nvGpuOpsDupAddressSpace takes
		 * the parent for a device without checking (NV_ASSERT, then a NULL pointer).
		 */
		if (o && o->kind == kind && nvh_lines(rec, client, handle) == 1 &&
		    (kind != NVH_VASPACE || (par && par->kind == NVH_DEVICE))) {
			l->file_id = rec->id;
			l->ops = atomic_read(&rec->ops_started);
			l->gpu = o->gpu;
			/* A channel not known to be under its device keeps its group too. */
			l->n = kind == NVH_CHANNEL && !(par && par->kind == NVH_DEVICE) ? 2 : 1;
			got = atomic_read(&rec->ops_busy) ? NVH_FOUND_BUSY : NVH_FOUND;
		}
		mutex_unlock(&rec->lock);
	}
	mutex_unlock(&nvh.files_lock);
	return got;
}

/*
 * The look after the driver kept it: the object seen is the one it kept only if the
 * handle still names it, on the same GPU, and its file started no call that may change a
 * handle since and runs none (a second thread could free it and make another under the
 * same handle, on another GPU, between the looks and the driver's).
 */
static bool nvh_counted_same(u32 client, u32 handle, enum nvh_kind kind, const struct nvh_look *seen)
{
	struct nvh_look now;

	smp_mb();
	return nvh_counted_look(client, handle, kind, &now) == NVH_FOUND &&
	       now.file_id == seen->file_id && now.ops == seen->ops && now.gpu == seen->gpu &&
	       now.n == seen->n;
}

/*
 * Before the driver keeps object (client, handle) of kind for nvidia-uvm, for a caller
 * in a container: an entry with seen->n more counts against max_channels on the caller's
 * holder record (which outlives the process's RM files, as what is kept does), or NULL
 * and *st the refusal, or NULL and *again when the object's file is changing a handle
 * (look again after a pause). An object that is not one cgpu_km counts for the
 * container (another container's, the host's, one made before cgpu_km attached or
 * before a hot update) is refused: RM finds it by its client's handle alone, so it
 * would keep anyone's.
 */
static struct nvh_kept *nvh_kept_take(u32 client, u32 handle, enum nvh_kind kind,
				      struct nvh_look *seen, u32 *st, bool *again)
{
	const char *what = kind == NVH_VASPACE ? "VA space" : "channel";
	unsigned int max = READ_ONCE(max_channels);
	struct nvh_holder *holder = NULL;
	struct cgpu_slot *slot = NULL;
	enum nvh_found found;
	struct nvh_kept *k;
	int err;

	*again = false;
	*st = NVA_ERR_INSUFFICIENT_PERMISSIONS;
	found = nvh_counted_look(client, handle, kind, seen);
	if (found == NVH_FOUND_BUSY) {
		*again = true;
		return NULL;
	}
	if (found == NVH_FOUND_NONE) {
		pr_warn_ratelimited("cgpu_km: enforce: pid %d: %s 0x%x registered with nvidia-uvm refused: not one its container holds at the driver%s\n",
				    task_tgid_nr(current), what, handle,
				    kind == NVH_VASPACE ? " under a device" : "");
		return NULL;
	}
	*st = NVA_ERR_NO_MEMORY;
	k = cgpu_zalloc(sizeof(*k));
	if (k)
		holder = nvh_holder_get();
	if (holder)
		slot = cgpu_slot_of(holder->rec->att, seen->gpu);
	if (!slot)
		goto fail;
	err = cgpu_ledger_chan_take(slot, max, seen->n);
	if (err) {
		nvh_count_refused(err, what, handle, " registered with nvidia-uvm", max, seen->gpu);
		*st = nvh_counted_refusal(kind);
		goto fail;
	}
	k->holder = holder;
	k->slot = slot;
	k->n = seen->n;
	return k;
fail:
	if (holder)
		nvh_holder_put(holder);
	cgpu_free(k);
	return NULL;
}

/* The count of an entry in no table back: the driver kept nothing, or let go of it. */
static void nvh_kept_put(struct nvh_kept *k)
{
	if (!k)
		return;
	cgpu_ledger_chan_give(k->slot, k->n);
	nvh_holder_put(k->holder);
	cgpu_free(k);
}

/* The driver kept it, under its pointer kept: the entry goes in the table. */
static void nvh_kept_done(struct nvh_kept *k, void *kept)
{
	k->kept = kept;
	mutex_lock(&nvh.holds_lock);
	hash_add(nvh.kept, &k->node, (unsigned long)kept);
	if (k->device)
		hash_add(nvh.kept_devs, &k->dnode, (unsigned long)k->device);
	atomic_inc(&nvh.nkept);
	mutex_unlock(&nvh.holds_lock);
}

/*
 * The driver is about to let go of kept: its entry, if any, out of the table first (the
 * driver may hand the same pointer out again as soon as it has let go).
 */
static struct nvh_kept *nvh_kept_find(void *kept)
{
	struct nvh_kept *k;

	mutex_lock(&nvh.holds_lock);
	hash_for_each_possible(nvh.kept, k, node, (unsigned long)kept)
		if (k->kept == kept)
			break;
	if (k) {
		hash_del(&k->node);
		if (k->device)
			hash_del(&k->dnode);
		atomic_dec(&nvh.nkept);
	}
	mutex_unlock(&nvh.holds_lock);
	return k;
}

/*
 * One of nvidia-uvm's calls that has the driver keep an object of the caller's: its
 * kind and handles, where the driver says what it kept, the call itself (the original,
 * with the other arguments) and the hook of the driver's release of what it kept.
 */
struct nvh_keep_call {
	enum nvh_kind kind;
	u32 client, handle;
	void **kept;
	u32 (*orig)(const struct nvh_keep_call *k);
	void *a0, *a1;
	struct nvh_hook *let_go;
};

/*
 * The call for a caller in a container: counted (nvh_kept_take), the count taken before
 * the driver runs and kept only if the object seen is the one kept, else let go and
 * looked at again, up to NVH_UVM_TRIES times, then refused. Anyone else's passes.
 */
static u32 nvh_keep_wrap(const struct nvh_keep_call *c)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_uvm_let_go_fn let_go = (nvh_uvm_let_go_fn)READ_ONCE(c->let_go->addr);
	struct nvh_look seen;
	struct nvh_kept *k;
	unsigned int i;
	bool again;
	u32 st;

	if (!nvh_caller_contained()) {
		st = c->orig(c);
		goto out;
	}
	st = NVA_ERR_INVALID_ARGUMENT;
	if (!c->kept)
		goto out;
	for (i = 0; i < NVH_UVM_TRIES; i++) {
		if (i)
			usleep_range(100, 1000);
		k = nvh_kept_take(c->client, c->handle, c->kind, &seen, &st, &again);
		if (!k) {
			if (again)
				continue;
			goto out;
		}
		if (c->kind == NVH_VASPACE)
			k->device = c->a0;
		st = c->orig(c);
		if (st == NVA_NV_OK && nvh_counted_same(c->client, c->handle, c->kind, &seen)) {
			nvh_kept_done(k, *c->kept);
			goto out;
		}
		/*
		 * Nothing left where the driver said what it kept: nvidia-uvm lets go of
		 * what it finds there on its error path (uvm_va_space.c's duplicate is its
		 * own struct's field), which would let go of it twice.
		 */
		if (st == NVA_NV_OK) {
			let_go(*c->kept);
			*c->kept = NULL;
		}
		nvh_kept_put(k);
		if (st != NVA_NV_OK)
			goto out;
	}
	st = NVA_ERR_INSUFFICIENT_PERMISSIONS;
	pr_warn_ratelimited("cgpu_km: enforce: pid %d: %s 0x%x registered with nvidia-uvm refused: being changed\n",
			    task_tgid_nr(current), c->kind == NVH_VASPACE ? "VA space" : "channel", c->handle);
out:
	srcu_read_unlock(&nvh_srcu, idx);
	return st;
}

static u32 nvh_uvm_retain_orig(const struct nvh_keep_call *k)
{
	nvh_uvm_retain_fn orig = (nvh_uvm_retain_fn)READ_ONCE(nvh.uvm_retain.addr);

	return orig(k->a0, k->client, k->handle, k->kept, k->a1);
}

/*
 * nvUvmInterfaceRetainChannel(vaSpace, hClient, hChannel, &retained, info), which
 * nvidia-uvm calls in the ioctl of the process registering a channel
 * (UVM_REGISTER_CHANNEL): RM duplicates the channel's group into nvidia-uvm's client
 * and keeps the channel with a retainer, past the process's free of both and until
 * nvidia-uvm releases it (nv_gpu_ops.c).
 */
static u32 nvh_uvm_retain_wrap(void *vaSpace, u32 hClient, u32 hChannel, void **retained, void *info)
{
	const struct nvh_keep_call c = { NVH_CHANNEL, hClient, hChannel, retained,
					 nvh_uvm_retain_orig, vaSpace, info, &nvh.uvm_release };

	return nvh_keep_wrap(&c);
}

static u32 nvh_uvm_dup_vaspace_orig(const struct nvh_keep_call *k)
{
	nvh_uvm_dup_vaspace_fn orig = (nvh_uvm_dup_vaspace_fn)READ_ONCE(nvh.uvm_dup_vaspace.addr);

	return orig(k->a0, k->client, k->handle, k->kept, k->a1);
}

/*
 * nvUvmInterfaceDupAddressSpace(device, hUserClient, hUserVASpace, &vaSpace, info),
 * which nvidia-uvm calls in the ioctl of the process registering a GPU VA space
 * (UVM_REGISTER_GPU_VASPACE): RM duplicates the VA space into nvidia-uvm's client, past
 * the process's free of it and until nvidia-uvm destroys the duplicate (nv_gpu_ops.c).
 */
static u32 nvh_uvm_dup_vaspace_wrap(void *device, u32 hUserClient, u32 hUserVASpace, void **vaSpace,
				    void *info)
{
	const struct nvh_keep_call c = { NVH_VASPACE, hUserClient, hUserVASpace, vaSpace,
					 nvh_uvm_dup_vaspace_orig, device, info, &nvh.uvm_destroy_vaspace };

	return nvh_keep_wrap(&c);
}

/*
 * The driver's release h of what it kept: in whatever task unregisters, unregisters the
 * GPU or ends the va_space (nvUvmInterfaceAddressSpaceDestroy also for nvidia-uvm's own
 * address spaces, which have no entry); the count back once the driver has let go.
 */
static void nvh_let_go_wrap(struct nvh_hook *h, void *kept)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_uvm_let_go_fn orig = (nvh_uvm_let_go_fn)READ_ONCE(h->addr);
	struct nvh_kept *k = nvh_kept_find(kept);

	orig(kept);
	nvh_kept_put(k);
	srcu_read_unlock(&nvh_srcu, idx);
}

/* nvUvmInterfaceReleaseChannel(retained) */
static void nvh_uvm_release_wrap(void *retained)
{
	nvh_let_go_wrap(&nvh.uvm_release, retained);
}

/* nvUvmInterfaceAddressSpaceDestroy(vaSpace) */
static void nvh_uvm_destroy_vaspace_wrap(void *vaSpace)
{
	nvh_let_go_wrap(&nvh.uvm_destroy_vaspace, vaSpace);
}

/*
 * The driver's open: a file of the control node (where RM's escapes go) opened by a
 * caller in a container gets its record now, so that every free on it passes
 * nvh_rm_free; a record cannot be had (a hot update frozen, too many files) leaves the
 * file to get one at its first charge, and its memory cannot be a followed duplicate's
 * source. The open itself is the driver's, whatever happens here.
 */
static int nvh_open_wrap(struct inode *inode, struct file *f)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_file_fn orig = (nvh_file_fn)READ_ONCE(nvh.open.addr);
	bool refuse;
	int ret;

	ret = orig(inode, f);
	if (!ret && iminor(inode) == NVA_CTL_MINOR)
		nvh_file_get(f->private_data, &refuse, true);
	srcu_read_unlock(&nvh_srcu, idx);
	return ret;
}

/*
 * The driver's release: it frees the file's objects; then so do we. The record leaves
 * the table first (no call can come on a file being released), so that the file's key,
 * which the driver may give a new file as soon as it lets go of this one, never finds
 * it; its charges go only once the driver has freed the memory.
 */
static int nvh_close_wrap(struct inode *inode, struct file *f)
{
	int idx = srcu_read_lock(&nvh_srcu);
	nvh_file_fn orig = (nvh_file_fn)READ_ONCE(nvh.close.addr);
	const void *key = f->private_data;
	struct nvh_file *rec;
	int ret;

	mutex_lock(&nvh.files_lock);
	rec = nvh_file_find(key);
	if (rec)
		hash_del_rcu(&rec->node);
	mutex_unlock(&nvh.files_lock);
	ret = orig(inode, f);
	if (rec)
		nvh_file_free(rec);
	cgpu_carry_released(key);
	srcu_read_unlock(&nvh_srcu, idx);
	return ret;
}

/* ---- attaching ---- */

/*
 * Whether a driver file has charges here: a lookup under RCU, since the callback may
 * take no lock. A file gets its record before its first charge and keeps it until it
 * closes, so a file without one has nothing a free could give back.
 */
static __always_inline bool nvh_tracked(const void *key)
{
	bool found;

	rcu_read_lock_sched_notrace();
	found = nvh_file_find(key) != NULL;
	rcu_read_unlock_sched_notrace();
	return found;
}

/*
 * The RM calls the wrapper reads, decided from rm_ioctl's arguments: its command is the
 * escape number (XFER already unwrapped) and its data the driver's kernel copy of size
 * bytes, so a class or a control's number is a plain load. Redirected: RM_ALLOC of the
 * classes that place or take video memory, of devices and subdevices (which GPU), and
 * of channel groups, channels and VA spaces (max_channels), RM_FREE on a file with
 * charges, RM_DUP_OBJECT, RM_VID_HEAP_CONTROL, RM_ALLOC_MEMORY, RM_ALLOC_OBJECT,
 * REGISTER_FD, RM_MAP_MEMORY_DMA, and of RM_CONTROL the imports from and exports to a file descriptor, all
 * but the frees only for a caller who may be in a container (cgpu_maybe_contained: the
 * host's and unlimited containers' would pass the wrapper untouched). Every other call
 * (most of what libcuda issues: controls, and allocations of contexts, engines, events)
 * goes to the driver at once: redirecting it would cost the wrapper and a second pass
 * through ftrace to call the original, for nothing (docs/kmod.md, "Cost").
 */
static __always_inline bool nvh_reads(unsigned long cmd, const void *nvfp, const void *data,
				      unsigned long size)
{
	u32 v;

	switch (cmd) {
	case NVA_ESC_RM_ALLOC:
		/* A block of another size is RM's to refuse. */
		if ((size != sizeof(struct nva_nvos21) && size != sizeof(struct nva_nvos64)) || !data)
			return false;
		v = ((const struct nva_nvos21 *)data)->hClass;
		return (nvh_class_read(v) || nvh_class_refused(v)) && cgpu_maybe_contained();
	case NVA_ESC_RM_FREE:
		/* A free may take an object a hot update's reservation counts (nvh_rm_free). */
		return nvh_tracked(nvfp) || (atomic_read(&cgpu.resobjs) && cgpu_maybe_contained());
	case NVA_ESC_RM_DUP_OBJECT:
	case NVA_ESC_RM_VID_HEAP_CONTROL:
	case NVA_ESC_RM_ALLOC_MEMORY:
	case NVA_ESC_RM_ALLOC_OBJECT:
	case NVA_ESC_REGISTER_FD:
	case NVA_ESC_RM_MAP_MEMORY_DMA:
		return cgpu_maybe_contained();
	case NVA_ESC_RM_CONTROL:
		if (size != sizeof(struct nva_nvos54) || !data)
			return false;
		v = ((const struct nva_nvos54 *)data)->cmd;
		return (v == NVA_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD ||
			v == NVA_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD ||
			v == NVA_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD ||
			v == NVA_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD) &&
		       cgpu_maybe_contained();
	}
	return false;
}

/*
 * RM's entry, the hot one (every ioctl of every process on the node): the command
 * decides first, and most calls return after a load or two; whether the call is the
 * wrapper's own call of the original (which runs the original) is asked only of a call
 * that would be redirected (docs/kmod.md, "Cost").
 */
static void notrace nvh_ftrace_rm_ioctl(unsigned long ip, unsigned long parent_ip,
					struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = cgpu_ftrace_regs(fregs);

	if (!regs ||
	    !nvh_reads(regs_get_kernel_argument(regs, 3),
		       (const void *)regs_get_kernel_argument(regs, 2),
		       (const void *)regs_get_kernel_argument(regs, 4),
		       regs_get_kernel_argument(regs, 5)) ||
	    within_module(parent_ip, THIS_MODULE))
		return;
	regs->ip = (unsigned long)nvh.rm_ioctl.wrapper;
}

/* The other hooks: the open and release of the driver's files, the export, nvidia-uvm's two. */
static void notrace nvh_ftrace(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct nvh_hook *h = container_of(ops, struct nvh_hook, ops);
	struct pt_regs *regs = cgpu_ftrace_regs(fregs);

	/* The wrapper's own call of the original runs the original. */
	if (!regs || within_module(parent_ip, THIS_MODULE))
		return;
	/*
	 * nvidia-uvm's duplicates: a container's are followed, and their frees while any is,
	 * or a hot update's reservation keeps any object.
	 */
	if (((h == &nvh.uvm_dup || h == &nvh.uvm_retain || h == &nvh.uvm_dup_vaspace) &&
	     !cgpu_maybe_contained()) ||
	    (h == &nvh.uvm_free && !atomic_read(&nvh.nholds) && !atomic_read(&cgpu.resobjs)) ||
	    ((h == &nvh.uvm_release || h == &nvh.uvm_destroy_vaspace) && !atomic_read(&nvh.nkept)) ||
	    ((h == &nvh.uvm_sparse || h == &nvh.uvm_dp_region || h == &nvh.uvm_pool ||
	      h == &nvh.uvm_mmap || h == &nvh.uvm_va_space) && !cgpu_maybe_contained()) ||
	    ((h == &nvh.uvm_range_free || h == &nvh.uvm_close) && !atomic_read(&nvh.nspans)))
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

/* Function name of module mod (nvidia, or nvidia_uvm): its address, 0 if not there. */
static unsigned long nvh_resolve(const char *mod, const char *name)
{
	char sym[KSYM_SYMBOL_LEN], want[KSYM_NAME_LEN + 32], tag[MODULE_NAME_LEN + 4];
	unsigned long addr;

	snprintf(tag, sizeof(tag), " [%s]", mod);
	snprintf(want, sizeof(want), "%s:%s", mod, name);
	addr = nvh_lookup(want);
	if (!addr)
		return 0;
	/* Exactly that symbol, at its start, in that module. */
	sprint_symbol(sym, addr);
	snprintf(want, sizeof(want), "%s+0x0/", name);
	if (strncmp(sym, want, strlen(want)) || !strstr(sym, tag)) {
		pr_err("cgpu_km: enforce: %s resolved to %s, not the %s module's entry\n",
		       name, sym, mod);
		return 0;
	}
	return addr;
}

static int nvh_hook_on(struct nvh_hook *h, const char *mod, const char *name, void *wrapper)
{
	int err;

	h->addr = nvh_resolve(mod, name);
	if (!h->addr)
		return -ENOENT;
	h->wrapper = wrapper;
	memset(&h->ops, 0, sizeof(h->ops));
	h->ops.func = h == &nvh.rm_ioctl ? nvh_ftrace_rm_ioctl : nvh_ftrace;
	/*
	 * No FTRACE_OPS_FL_RECURSION: the callbacks call nothing that could come back to them
	 * (inline helpers, which the kernel builds notrace, and cgpu_maybe_contained, notrace
	 * too), so the guard ftrace would wrap around it is pure cost on every ioctl
	 * (docs/kmod.md, "Cost").
	 */
	h->ops.flags = CGPU_FTRACE_REGS_FLAG | FTRACE_OPS_FL_IPMODIFY;
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

/*
 * With every hook off: waits for the calls inside a wrapper, then lets go of every
 * file's record and what it holds. nvh.lock held.
 */
static void nvh_forget_files(void)
{
	struct hlist_node *tmp;
	struct nvh_holder *h;
	struct nvh_hold *hold;
	struct nvh_kept *k;
	struct nvh_file *rec;
	int bkt;

	synchronize_srcu(&nvh_srcu);
	cgpu_carry_stop();
	mutex_lock(&nvh.files_lock);
	hash_for_each_safe(nvh.files, bkt, tmp, rec, node) {
		hash_del_rcu(&rec->node);
		nvh_file_free(rec);
	}
	mutex_unlock(&nvh.files_lock);
	/* The holds' lines are their holders' records' objects, freed with them. */
	mutex_lock(&nvh.holds_lock);
	hash_for_each_safe(nvh.holds, bkt, tmp, hold, node) {
		hash_del(&hold->node);
		cgpu_free(hold);
	}
	atomic_set(&nvh.nholds, 0);
	/* What nvidia-uvm keeps is counted on its holder's record: given back before that goes. */
	hash_for_each_safe(nvh.kept, bkt, tmp, k, node) {
		hash_del(&k->node);
		cgpu_ledger_chan_give(k->slot, k->n);
		cgpu_free(k);
	}
	atomic_set(&nvh.nkept, 0);
	hash_for_each_safe(nvh.holders, bkt, tmp, h, node) {
		hash_del(&h->node);
		nvh_file_free(h->rec);
		cgpu_free(h);
	}
	mutex_unlock(&nvh.holds_lock);
}

/* A hook of a table: what it is, the function's name, its wrapper. */
struct nvh_hook_spec {
	struct nvh_hook *h;
	const char *name;
	void *wrapper;
};

/*
 * The n hooks of module mod on, in their order: 0, or the first one's error (*failed,
 * its index, if failed) with those before it off again.
 */
static int nvh_hooks_on_all(const struct nvh_hook_spec *hooks, unsigned int n, const char *mod,
			    unsigned int *failed)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		err = nvh_hook_on(hooks[i].h, mod, hooks[i].name, hooks[i].wrapper);
		if (err) {
			if (failed)
				*failed = i;
			while (i--)
				nvh_hook_off(hooks[i].h);
			return err;
		}
	}
	return 0;
}

/*
 * Every hook, in the order they go on: nvidia-uvm's free of a duplicate (every hold
 * recorded is seen going), its duplicate, its releases and keeps of a channel and of a
 * VA space (each release of one counted is seen) and the export to a dma-buf (followed or
 * refused from the moment anything can be charged), then the release (every file
 * recorded at its open or charged is seen closing), the open and RM's entry.
 */
static int nvh_hooks_on(const struct nvh_layout *l)
{
	const struct nvh_hook_spec hooks[] = {
		{ &nvh.uvm_free, NVH_UVM_FREE_SYM, nvh_uvm_free_wrap },
		{ &nvh.uvm_dup, NVH_UVM_DUP_SYM, nvh_uvm_dup_wrap },
		{ &nvh.uvm_release, NVH_UVM_RELEASE_SYM, nvh_uvm_release_wrap },
		{ &nvh.uvm_retain, NVH_UVM_RETAIN_SYM, nvh_uvm_retain_wrap },
		{ &nvh.uvm_destroy_vaspace, NVH_UVM_DESTROY_VASPACE_SYM, nvh_uvm_destroy_vaspace_wrap },
		{ &nvh.uvm_dup_vaspace, NVH_UVM_DUP_VASPACE_SYM, nvh_uvm_dup_vaspace_wrap },
		{ &nvh.dmabuf, NVH_DMABUF_SYM, nvh_dmabuf_wrap },
		{ &nvh.close, l->close_sym, nvh_close_wrap },
		{ &nvh.open, l->open_sym, nvh_open_wrap },
		{ &nvh.rm_ioctl, NVH_RM_IOCTL_SYM, nvh_rm_ioctl_wrap },
	};

	return nvh_hooks_on_all(hooks, ARRAY_SIZE(hooks), "nvidia", NULL);
}

/* Off in the reverse order; a hook that is not on is skipped. */
static void nvh_hooks_off(void)
{
	nvh_hook_off(&nvh.rm_ioctl);
	nvh_hook_off(&nvh.open);
	nvh_hook_off(&nvh.close);
	nvh_hook_off(&nvh.dmabuf);
	nvh_hook_off(&nvh.uvm_dup_vaspace);
	nvh_hook_off(&nvh.uvm_destroy_vaspace);
	nvh_hook_off(&nvh.uvm_retain);
	nvh_hook_off(&nvh.uvm_release);
	nvh_hook_off(&nvh.uvm_dup);
	nvh_hook_off(&nvh.uvm_free);
}

/*
 * nvidia-uvm's own functions, which charge the page tables it makes from no RM call and
 * keep managed memory out of containers: on once both the driver's hooks are and
 * nvidia-uvm is loaded (it loads after the driver, and may go and come back on its own),
 * the release first (every file with a span charged is seen closing), then the range's
 * free, then the makers. Not there, or not attachable: none is on, said in the log and in
 * /proc/cgpu_km/enforcement. nvh.lock held.
 */
static const struct nvh_hook_spec nvh_uvm_own[] = {
	{ &nvh.uvm_close, NVH_UVM_CLOSE_SYM, nvh_uvm_close_wrap },
	{ &nvh.uvm_range_free, NVH_UVM_RANGE_FREE_SYM, nvh_uvm_range_free_wrap },
	{ &nvh.uvm_sparse, NVH_UVM_SPARSE_SYM, nvh_uvm_sparse_wrap },
	{ &nvh.uvm_dp_region, NVH_UVM_DP_REGION_SYM, nvh_uvm_dp_region_wrap },
	{ &nvh.uvm_pool, NVH_UVM_POOL_SYM, nvh_uvm_pool_wrap },
	{ &nvh.uvm_mmap, NVH_UVM_MMAP_SYM, nvh_uvm_mmap_wrap },
	{ &nvh.uvm_va_space, NVH_UVM_VA_SPACE_SYM, nvh_uvm_va_space_wrap },
};

static void nvh_uvm_hooks_on(void)
{
	unsigned int failed;
	int err;

	lockdep_assert_held(&nvh.lock);
	if (!nvh.attached || nvh.uvm_on || !nvh_lookup(NVH_UVM_MOD ":" NVH_UVM_CLOSE_SYM))
		return;
	err = nvh_hooks_on_all(nvh_uvm_own, ARRAY_SIZE(nvh_uvm_own), NVH_UVM_MOD, &failed);
	if (err) {
		pr_warn("cgpu_km: enforce: nvidia-uvm's page tables go uncharged and managed memory unrefused: cannot attach to %s's %s: %d\n",
			NVH_UVM_MOD, nvh_uvm_own[failed].name, err);
		return;
	}
	nvh.uvm_on = true;
	pr_info("cgpu_km: enforcement: attached to %s's %s, %s, %s, %s, %s, %s and %s\n",
		NVH_UVM_MOD, NVH_UVM_CLOSE_SYM, NVH_UVM_RANGE_FREE_SYM, NVH_UVM_SPARSE_SYM,
		NVH_UVM_DP_REGION_SYM, NVH_UVM_POOL_SYM, NVH_UVM_MMAP_SYM, NVH_UVM_VA_SPACE_SYM);
}

/*
 * Off in the reverse order, the calls inside a wrapper done; the charges of spans
 * still recorded (none when nvidia-uvm goes: each file pins it) given back.
 * nvh.lock held.
 */
static void nvh_uvm_hooks_off(void)
{
	struct nvh_span *sp;
	struct hlist_node *tmp;
	HLIST_HEAD(gone);
	unsigned int i;
	int bkt;

	lockdep_assert_held(&nvh.lock);
	if (!nvh.uvm_on)
		return;
	for (i = ARRAY_SIZE(nvh_uvm_own); i--;)
		nvh_hook_off(nvh_uvm_own[i].h);
	synchronize_srcu(&nvh_srcu);
	mutex_lock(&nvh.holds_lock);
	hash_for_each_safe(nvh.spans, bkt, tmp, sp, node) {
		hash_del(&sp->node);
		hlist_add_head(&sp->node, &gone);
	}
	atomic_set(&nvh.nspans, 0);
	mutex_unlock(&nvh.holds_lock);
	nvh_spans_free_all(&gone);
	nvh.uvm_on = false;
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
	unsigned long get;
	char ver[64];
	unsigned int i;
	u32 st;
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
	/*
	 * The kernel client API, which also says the driver's own version: asked with the
	 * one chosen, it answers NV_OK only if that is the running driver's (strcmp), so a
	 * wrong nv_version or a stale version file cannot pick a layout.
	 */
	get = nvh_resolve("nvidia", NVH_GET_RM_OPS_SYM);
	if (!get) {
		snprintf(nvh.state, sizeof(nvh.state), "off (driver %s: no %s)", ver,
			 NVH_GET_RM_OPS_SYM);
		pr_err("cgpu_km: enforce=1 but enforcement is OFF: driver %s has no %s\n", ver,
		       NVH_GET_RM_OPS_SYM);
		return;
	}
	memset(&nvh.rm, 0, sizeof(nvh.rm));
	nvh.rm.version_string = l->version;
	st = ((nvh_get_rm_ops_fn)get)(&nvh.rm);
	if (st != NVA_NV_OK || !nvh.rm.op) {
		strscpy(ver, st != NVA_NV_OK && nvh.rm.version_string ? nvh.rm.version_string : "?",
			sizeof(ver));
		snprintf(nvh.state, sizeof(nvh.state),
			 "off (driver %s unknown: its RM interface is of %s)", l->version, ver);
		pr_warn("cgpu_km: enforce=1 but enforcement is OFF: the layouts of %s were chosen, the driver's RM interface is of %s (status 0x%x)\n",
			l->version, ver, st);
		return;
	}
	nvh.layout = l;
	err = nvh_hooks_on(l);
	if (err) {
		/* The hooks on before the failing one may have recorded and charged files. */
		nvh_forget_files();
		nvh.layout = NULL;
		snprintf(nvh.state, sizeof(nvh.state), "off (driver %s: cannot attach: %d)",
			 ver, err);
		pr_err("cgpu_km: enforce=1 but enforcement is OFF: cannot attach to driver %s (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s): %d\n",
		       ver, NVH_RM_IOCTL_SYM, l->open_sym, l->close_sym, NVH_DMABUF_SYM,
		       NVH_UVM_DUP_SYM, NVH_UVM_FREE_SYM, NVH_UVM_RETAIN_SYM, NVH_UVM_RELEASE_SYM,
		       NVH_UVM_DUP_VASPACE_SYM, NVH_UVM_DESTROY_VASPACE_SYM, err);
		return;
	}
	nvh.attached = true;
	nvh_uvm_hooks_on();
	WRITE_ONCE(cgpu.driver_files, cgpu_carry_start(nvh.close.addr));
	WRITE_ONCE(cgpu.maps_named, l->one_uvm_client);
	snprintf(nvh.state, sizeof(nvh.state), "on (driver %s)", ver);
	pr_info("cgpu_km: enforcement on: attached to %s, %s, %s, %s, %s, %s, %s, %s, %s and %s of NVIDIA driver %s\n",
		NVH_RM_IOCTL_SYM, l->open_sym, l->close_sym, NVH_DMABUF_SYM, NVH_UVM_DUP_SYM,
		NVH_UVM_FREE_SYM, NVH_UVM_RETAIN_SYM, NVH_UVM_RELEASE_SYM, NVH_UVM_DUP_VASPACE_SYM,
		NVH_UVM_DESTROY_VASPACE_SYM, ver);
}

/*
 * nvh.lock held. No new call is redirected after this; calls already inside a wrapper
 * finish first. Files still tracked (only at cgpu_km's unload: the driver's own unload
 * comes after every file closed) let go of their charges.
 */
static void nvh_detach(const char *why)
{
	lockdep_assert_held(&nvh.lock);
	if (!nvh.attached)
		return;
	WRITE_ONCE(cgpu.driver_files, NULL);
	WRITE_ONCE(cgpu.maps_named, false);
	nvh_uvm_hooks_off();
	nvh_hooks_off();
	nvh_forget_files();
	nvh.attached = false;
	nvh.layout = NULL;
	snprintf(nvh.state, sizeof(nvh.state), "off (%s)", why);
	pr_info("cgpu_km: enforcement off: detached (%s)\n", why);
}

static int nvh_module_event(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	bool uvm = !strcmp(mod->name, NVH_UVM_MOD);

	if (strcmp(mod->name, "nvidia") && !uvm)
		return NOTIFY_DONE;
	mutex_lock(&nvh.lock);
	/*
	 * nvidia-uvm's functions are hooked as it comes, before its init makes its device:
	 * none of its files is ever opened unhooked (ftrace serves a coming module's text).
	 */
	if ((action == MODULE_STATE_COMING || action == MODULE_STATE_LIVE) && uvm)
		nvh_uvm_hooks_on();
	else if (action == MODULE_STATE_LIVE)
		nvh_attach();
	else if (action == MODULE_STATE_GOING && uvm)
		nvh_uvm_hooks_off();
	else if (action == MODULE_STATE_GOING)
		nvh_detach("driver unloaded");
	mutex_unlock(&nvh.lock);
	return NOTIFY_DONE;
}

static int nvh_show(struct seq_file *m, void *v)
{
	mutex_lock(&nvh.lock);
	seq_printf(m, "enforcement: %s\n", nvh.state);
	seq_printf(m, "taken back: %lld\n", (long long)atomic64_read(&nvh.taken_back));
	seq_printf(m, "duplicates followed: %lld\n", (long long)atomic64_read(&nvh.followed));
	seq_printf(m, "mappings followed: %lld\n", (long long)atomic64_read(&nvh.mapped));
	seq_printf(m, "channel cap: %u\n", READ_ONCE(max_channels));
	seq_printf(m, "channels refused: %lld\n", (long long)atomic64_read(&nvh.channels_refused));
	seq_printf(m, "channels and VA spaces nvidia-uvm keeps: %d\n", atomic_read(&nvh.nkept));
	if (nvh.uvm_on) {
		seq_printf(m, "nvidia-uvm spans charged: %d\n", atomic_read(&nvh.nspans));
		seq_printf(m, "managed memory refused: %lld\n",
			   (long long)atomic64_read(&nvh.managed_refused));
		seq_printf(m, "va_spaces made with HMM off: %lld\n",
			   (long long)atomic64_read(&nvh.hmm_off));
	} else {
		seq_puts(m, "nvidia-uvm spans charged: off (nvidia-uvm not attached)\n");
		seq_puts(m, "managed memory refused: off (nvidia-uvm not attached)\n");
		seq_puts(m, "va_spaces made with HMM off: off (nvidia-uvm not attached)\n");
	}
	cgpu_carry_show(m);
	seq_printf(m, "objects kept for reservations: %d\n", atomic_read(&cgpu.resobjs));
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
	hash_init(nvh.clients);
	hash_init(nvh.holders);
	hash_init(nvh.holds);
	hash_init(nvh.kept);
	cgpu_carry_init();
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
	WRITE_ONCE(cgpu.driver_objs_dump, nvh_dump_objs);
	mutex_lock(&nvh.lock);
	if (nvh_resolve("nvidia", NVH_RM_IOCTL_SYM))
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
