/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgpu_km's shared state. Locking, outermost first:
 *   cgpu.ctl_mutex  serialises instance add/del and the unload pin; held across
 *                   removing an instance's procfs directory, which waits for that
 *                   directory's handlers, so those handlers never take it.
 *   cgpu.reg_lock   the registry: GPU settings, instance lists, weights, highprio,
 *                   default_memsize. Node handlers and attach take it briefly.
 *   gpu->sched_lock one GPU's compute scheduler: struct cgs, which instance sits in
 *                   which scheduler slot, who waits and who takes part in the current
 *                   slice, the GPU's entry on the status page. A spinlock with irqs
 *                   off: the slice timer (hard hrtimer) takes it too. Taken under
 *                   reg_lock when a setting changes, so procfs and the scheduler are
 *                   updated together.
 *   inst->lock      one instance's ledger: memsize, used, its processes and files. A
 *                   mutex, not a spinlock: meminfo and the hot update's dump walk up to
 *                   CGPU_INST_FILES_MAX processes under it, which must not keep
 *                   preemption off. Never nested with sched_lock.
 * cgpu.state (hot update, upgrade.c) changes under ctl_mutex and reg_lock together, so
 * holding either one keeps it still; the charge path reads it once under inst->lock.
 * cgpu.exiting is set under ctl_mutex before unload takes the tree down.
 */
#ifndef CGPU_KM_H
#define CGPU_KM_H

#include <linux/capability.h>
#include <linux/errno.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/user_namespace.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "lib/types.h"
#include "sched/cgs.h"
#include "uapi/cgpu_ioctl.h"

/*
 * The hot update's compatibility (docs/upgrade.md): the format of the state this
 * module writes when frozen, the oldest it can import, and the /dev/cgpu ABI versions
 * it serves. A build may override the format (make STATE_FORMAT=N), which makes a
 * module that refuses the state of every other format: the test's incompatible one.
 * Format 2 added `bind` lines and the processes' start times: a format 1 state has no
 * container bound, so this module does not read it (every container would be unlimited).
 * Format 3 added `channels=` to `charge` lines (a process's counts against max_channels,
 * which may then hold no bytes); a format 2 state has none, read as 0: what the old
 * module counted is not known (docs/upgrade.md). Format 4 added `obj` lines (video
 * memory a process's charge counts, one object alone under its handle, given back once
 * the driver frees it); a format 2 or 3 state has none: its reservations give nothing
 * back until their processes hold no driver file. Format 5 added `map=` (nvidia-uvm's
 * duplicate for a mapping) and `same=1` (more lines of one memory) to `obj` lines.
 */
#ifndef CGPU_STATE_FORMAT
#define CGPU_STATE_FORMAT 5
#define CGPU_STATE_FORMAT_MIN 2
#else
#define CGPU_STATE_FORMAT_MIN CGPU_STATE_FORMAT
#endif
#define CGPU_ABI_MIN 1

#define CGPU_TOP_NODES	4
#define CGPU_GPU_NODES	5
#define CGPU_INST_NODES	5

struct cgpu_node_desc;
struct proc_dir_entry;
struct seq_file;

/* A procfs file: what it is and the object it shows (NULL for top-level nodes). */
struct cgpu_node {
	const struct cgpu_node_desc *desc;
	void *obj;
};

/*
 * One host GPU. Its settings are kept twice, as procfs shows them (reg_lock) and
 * inside the scheduler (sched_lock); slices.c changes both in one step.
 */
struct cgpu_gpu {
	unsigned int index;
	u32 max_inst, policy, prio_ratio;	/* reg_lock */
	u32 ninst, weight_used;			/* reg_lock */
	struct list_head insts;			/* reg_lock */
	struct proc_dir_entry *dir;
	struct cgpu_node nodes[CGPU_GPU_NODES];

	spinlock_t sched_lock;
	struct cgs sched;			/* sched_lock */
	struct cgs_inst slots[CGPU_MAX_INST_MAX];	/* sched_lock */
	struct cgpu_inst *slot_inst[CGPU_MAX_INST_MAX];	/* sched_lock */
	u32 next_id;				/* sched_lock: the next sched id */
	u32 hold;				/* sched_lock: serial of the current slice */
	s32 hold_slot;				/* sched_lock: its holder's slot, or CGS_NONE */
	u64 hold_grants;			/* sched_lock: the holder's grants then */
	u32 open_serial;			/* sched_lock: policy 5's go word */
	struct hrtimer timer;
	u64 armed;				/* sched_lock: its expiry, CGS_NEVER: idle */
	wait_queue_head_t wq;			/* SLICE_WAIT and SLICE_WATCH sleep here */
	struct cgpu_sched_status *st;		/* this GPU's entry on the status page */
};

/*
 * The container an instance belongs to: the cgroup of a task the runtime named (inst_ctl
 * bind), taken by the kernel from the task itself. A caller is in the container when its
 * cgroup in the same hierarchy is this one or below it, whatever either is called.
 */
struct cgpu_bind {
	struct cgroup *cgrp;	/* a reference held; NULL: not bound, nobody is in it */
	int ssid;		/* the v1 controller whose hierarchy holds cgrp; -1: v2 */
	struct pid *pid;	/* the task named, for the hot update's state; a reference */
};

/*
 * One container on one GPU. References: the registry's while listed, one per file
 * attached to it; a deleted instance lives on, unlisted and out of procfs, until the
 * last file holding charges on it closes.
 */
struct cgpu_inst {
	struct kref ref;
	struct cgpu_gpu *gpu;
	char id[CGPU_ID_LEN + 1];
	u8 uuid[CGPU_UUID_BYTES];
	u32 weight, highprio;			/* reg_lock */
	bool listed;				/* reg_lock: on gpu->insts */
	struct list_head link;			/* reg_lock */
	struct cgpu_bind bind;			/* reg_lock */
	struct mutex lock;
	u64 memsize, used;			/* lock */
	struct list_head procs;			/* lock: in the order they first attached */
	DECLARE_HASHTABLE(proc_hash, 6);	/* lock: the same, by pid */
	unsigned int nfiles;			/* lock: at most CGPU_INST_FILES_MAX */
	unsigned int nprocs;			/* lock: at most CGPU_INST_FILES_MAX */
	unsigned int nreserved;			/* lock: processes with a reservation */
	u64 reserved;				/* lock: the bytes those hold */
	unsigned int reserved_chan;		/* lock: and the counts (of nchan) */
	unsigned int nchan;			/* lock: what max_channels counts (nvhook.c) */
	DECLARE_HASHTABLE(resobjs, 6);		/* lock: the reservations' objects, by client */
	unsigned int nresobjs;			/* lock: at most CGPU_INST_RESOBJS_MAX */
	struct proc_dir_entry *dir;		/* ctl_mutex */
	struct cgpu_node nodes[CGPU_INST_NODES];
	/*
	 * Scheduling, all under gpu->sched_lock. A slice ends when every file that took
	 * part in it has ended its part (nsub back to 0): what they reported adds up in
	 * hold_used and hold_more.
	 */
	s32 sched_slot;				/* index in gpu->slots, or CGS_NONE once left */
	u32 sched_id;
	u32 nwait;				/* files waiting for a slice */
	u32 nsub;				/* files taking part in the current slice */
	u64 hold_used;
	bool hold_more;
};

/*
 * One process's part of an instance's ledger, all under inst->lock: what its files hold
 * together (meminfo's line, kept as a sum so no show walks the files) and what a hot
 * update holds for it until it attaches again. A process is its tgid and its start
 * time: a new process that is given the same pid is another one.
 */
struct cgpu_proc {
	struct list_head link;
	struct hlist_node hnode;
	pid_t pid;
	u64 start;		/* ns since boot; 0: imported without one (state format 1) */
	u64 bytes;		/* its files' and its reservation's */
	u64 reserved;		/* of bytes, held for it with no file */
	unsigned int nchan;	/* its files' and its reservation's counts (inst->nchan) */
	unsigned int reserved_chan;	/* of nchan, held for it with no file */
	unsigned int nfiles;
	/*
	 * Objects of the reservation the driver's free gives back and the memory they name
	 * (memledger.c), its bytes; the memory of the last obj line imported (same=1 joins
	 * it; NULL if not kept) and its bytes (0: none yet).
	 */
	struct list_head resobjs, resmems;
	u64 resobj_bytes;
	struct cgpu_resmem *last_mem;
	u64 last_bytes;
	bool keep;		/* its reservation stays until the instance goes (keep=1) */
};

/* An attached file's instances, ascending by GPU index; fixed once published. */
struct cgpu_attachment {
	unsigned int n;
	/*
	 * Set before cgpu_attach by one that is not the process's own file (cgpu_km's
	 * record of nvidia-uvm's mappings): it leaves the process's reservation of a hot
	 * update where it is, for a file of the process to take back.
	 */
	bool leaves_reservation;
	char id[CGPU_ID_LEN + 1];
	struct cgpu_slot {
		struct cgpu_inst *inst;
		struct cgpu_proc *proc;
		u64 bytes;		/* inst->lock: what this file holds */
		/* gpu->sched_lock: */
		u32 hold;		/* the slice this file takes part in, 0: none */
		bool waiting;		/* counted in inst->nwait */
		bool in_wait;		/* a SLICE_WAIT is running on this slot */
	} slots[CGPU_MAX_GPUS];
};

/* The attached container's slot on host GPU gpu, NULL if none. */
static inline struct cgpu_slot *cgpu_slot_of(struct cgpu_attachment *att, u32 gpu)
{
	unsigned int i;

	for (i = 0; i < att->n; i++)
		if (att->slots[i].inst->gpu->index == gpu)
			return &att->slots[i];
	return NULL;
}

/*
 * Where the module stands in a hot update (upgrade.c). Running: everything works.
 * Frozen (the old module, `freeze`): nothing changes any more: no open, attach,
 * charge, uncharge, slice, instance or setting; attached processes hand their
 * charges over and close. Importing (a new module loaded with handover=1): the old
 * state is written in; nobody may open /dev/cgpu until `commit`.
 */
enum cgpu_state { CGPU_RUNNING, CGPU_FROZEN, CGPU_IMPORTING };

/*
 * The cgroups of the listed instances, for a reader that may take no lock (nvhook.c's
 * ftrace callback, which lets the host's and unlimited containers' calls go at once).
 * Republished (identity.c, reg_lock) whenever an instance is bound or unlisted; NULL
 * when none is bound; &cgpu_bound_unknown when the set could not be allocated (anyone
 * may be in a container: the reader asks the registry).
 */
struct cgpu_bound_set {
	struct rcu_head rcu;
	unsigned int n;
	struct {
		struct cgroup *cgrp;	/* the instance's reference keeps it */
		int ssid;
	} b[];
};
extern struct cgpu_bound_set cgpu_bound_unknown;

struct cgpu_km {
	unsigned int ngpus;
	struct cgpu_gpu *gpus;
	unsigned int major;
	struct mutex ctl_mutex;
	struct mutex reg_lock;
	u64 default_memsize;			/* reg_lock */
	unsigned int ninst;			/* ctl_mutex + reg_lock to change */
	bool unpin;				/* ctl_mutex: instances do not pin */
	bool exiting;				/* ctl_mutex: unload has begun */
	bool pinned;				/* ctl_mutex: we hold a module ref */
	atomic_t live;				/* objects allocated and not freed */
	struct cgpu_status_page *status;	/* the page every /dev/cgpu maps */
	enum cgpu_state state;			/* ctl_mutex + reg_lock to change */
	u32 import_format;			/* ctl_mutex: 0 until `format` */
	/* ctl_mutex: the other module of the update under way (frozen: the one named by
	 * `freeze to=`; importing: the one named by `from`), "" when not known. */
	char upd_peer[CGPU_VERSION_MAX + 1];
	char last_update[2 * CGPU_VERSION_MAX];	/* ctl_mutex: how the last one ended */
	atomic_t nfiles;			/* /dev/cgpu files open */
	atomic_t nattached;			/* of them, attached */
	struct cgpu_bound_set __rcu *bound;	/* reg_lock to publish */
	/* nvhook.c's lock to publish: set while enforce=1 is attached (the driver's memory
	 * is charged at its boundary), NULL otherwise. */
	const struct cgpu_driver_files *driver_files;
	/* Set once at init under enforce=1 (nvhook.c): the state's obj lines of its records. */
	void (*driver_objs_dump)(struct seq_file *m);
	/*
	 * nvhook.c's lock to publish: set while attached to a driver whose nvidia-uvm makes
	 * its duplicates in one RM client, so that one is named by its handle alone (map=).
	 */
	bool maps_named;
	atomic_t resobjs;			/* the reservations' objects, every instance's */
	wait_queue_head_t upd_wq;		/* poll() on /dev/cgpu: the freeze */
	struct delayed_work reclaim;		/* releases reservations not taken back */
};
extern struct cgpu_km cgpu;	/* state.c */

/*
 * nvcarry.c's answers about the processes' files of the NVIDIA driver, for the hot
 * update's reservations (upgrade.c, memledger.c), published while enforcement is
 * attached (enforce=1): the driver's memory is charged then, and a reservation counts
 * what the process's driver files hold.
 */
struct cgpu_driver_files {
	/*
	 * Whether process (pid, start) holds a file of the NVIDIA driver, so may hold
	 * driver memory charged before a hot update, or one it held at an earlier call is
	 * still open; each call remembers its files.
	 */
	bool (*holds)(pid_t pid, u64 start);
	/* At each reclaim, before the looks: whether to look again even if no reservation
	 * is kept (files held for them are still to be let go). */
	bool (*let_go)(void);
	/* For the state: (pid, start) itself if it lives, else a live process holding a
	 * file remembered for it, if any (left unchanged if none, or if attached: files of
	 * its are attached to the ledger); whether the next module must keep its
	 * reservation until the instance is deleted (keep=1). */
	bool (*holder)(pid_t *pid, u64 *start, bool attached);
};

/*
 * Every object that outlives a call goes through these, so unload can prove that
 * nothing leaked even on a kernel without kmemleak. Charged to the memory cgroup of
 * the caller that makes us allocate: /dev/cgpu is open to every process, and what a
 * container makes the kernel keep counts against its own memory limit.
 */
static inline void *cgpu_zalloc(size_t size)
{
	void *p = kzalloc(size, GFP_KERNEL_ACCOUNT);

	if (p)
		atomic_inc(&cgpu.live);
	return p;
}

static inline void cgpu_free(const void *p)
{
	if (p) {
		atomic_dec(&cgpu.live);
		kfree(p);
	}
}

/* As cgpu_free, once an RCU grace period has passed: for what lock-free readers may
 * still hold. p is not NULL; field is its struct rcu_head. */
#define cgpu_free_rcu(p, field)			\
	do {					\
		atomic_dec(&cgpu.live);		\
		kfree_rcu(p, field);		\
	} while (0)

static inline int cgpu_errno(enum cgpu_rc rc)
{
	static const int map[] = {
		[CGPU_OK] = 0,
		[CGPU_RC_INVAL] = -EINVAL,
		[CGPU_RC_NOMEM] = -ENOMEM,
		[CGPU_RC_NOSPC] = -ENOSPC,
		[CGPU_RC_BUSY] = -EBUSY,
	};

	return (unsigned int)rc < ARRAY_SIZE(map) ? map[rc] : -EINVAL;
}

/*
 * The host's administrator may change the tree and read every instance: both the
 * opener of file and the caller, so that a passed-on descriptor carries no privilege.
 */
static inline bool cgpu_host_admin(const struct file *file)
{
	return file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN) && capable(CAP_SYS_ADMIN);
}

/*
 * How the registry gives an instance its procfs directory and takes it away again:
 * the tree is above the registry (docs/kmod.md, "Layers"), so main.c hands procfs.c's
 * ops to the registry at init instead of the registry calling up into the tree.
 */
struct cgpu_inst_dir_ops {
	int (*add)(struct cgpu_inst *inst);
	void (*del)(struct cgpu_inst *inst);
};

/* registry.c */
struct cgpu_cmd;
int cgpu_registry_init(unsigned int ngpus, const struct cgpu_inst_dir_ops *dir_ops);
void cgpu_registry_exit(void);
int cgpu_inst_ctl(const char *buf, size_t len);
int cgpu_inst_add(const struct cgpu_cmd *cmd);		/* ctl_mutex held */
int cgpu_inst_bind(const struct cgpu_cmd *cmd);		/* ctl_mutex held */
struct cgpu_inst *cgpu_find(struct cgpu_gpu *g, const char *id);	/* reg_lock held */
void cgpu_give_back(u32 client, u32 handle);		/* no lock held */
/* A GPU setting checked, applied to the scheduler and stored; reg_lock held. */
enum cgpu_gpu_key { CGPU_KEY_MAX_INST, CGPU_KEY_POLICY, CGPU_KEY_PRIO_RATIO };
int cgpu_gpu_setting(struct cgpu_gpu *g, enum cgpu_gpu_key key, u64 v);
int cgpu_update_pin(void);				/* ctl_mutex held */
int cgpu_attach(struct cgpu_attachment *att);
void cgpu_detach(struct cgpu_attachment *att);

/* upgrade.c: the hot update (docs/upgrade.md) */
int cgpu_upgrade_init(void);
void cgpu_upgrade_exit(void);
int cgpu_upgrade_write(const char *buf, size_t len);
void cgpu_upgrade_show(struct seq_file *m);
int cgpu_handover(struct cgpu_attachment *att);

/* The tree takes writes only while running; reg_lock held. */
static inline int cgpu_tree_writable(void)
{
	lockdep_assert_held(&cgpu.reg_lock);
	return cgpu.state == CGPU_RUNNING ? 0 : -EBUSY;
}

/* slices.c: the scheduler of each GPU (docs/scheduler.md) */
int cgpu_sched_init(unsigned int ngpus);
void cgpu_sched_exit(void);
void cgpu_sched_gpu_init(struct cgpu_gpu *g);
void cgpu_sched_gpu_exit(struct cgpu_gpu *g);
int cgpu_sched_join(struct cgpu_inst *inst);		/* reg_lock held */
void cgpu_sched_leave(struct cgpu_inst *inst);		/* reg_lock held */
int cgpu_sched_set_policy(struct cgpu_gpu *g, u32 v);	/* reg_lock held, v valid */
int cgpu_sched_set_max_inst(struct cgpu_gpu *g, u32 v);
int cgpu_sched_set_prio_ratio(struct cgpu_gpu *g, u32 v);
int cgpu_sched_set_weight(struct cgpu_inst *inst, u32 v);
int cgpu_sched_set_highprio(struct cgpu_inst *inst, u32 v);
void cgpu_sched_detach(struct cgpu_slot *s);		/* the file is closing */
long cgpu_sched_ioctl(struct cgpu_attachment *att, unsigned int cmd, void __user *arg);
/* reg_lock held */
int cgpu_sched_inst_stat(struct cgpu_inst *inst, struct cgpu_inst_stat *a);
int cgpu_sched_mmap(struct vm_area_struct *vma);
void cgpu_sched_republish(void);		/* cgpu.state changed */

/* memledger.c */
int cgpu_ledger_link(struct cgpu_slot *s, pid_t pid, u64 start, struct cgpu_proc **spare,
		     bool take_reserved);
void cgpu_ledger_unlink(struct cgpu_slot *s);
int cgpu_ledger_charge(struct cgpu_slot *s, u64 bytes, u64 *used, u64 *memsize);
int cgpu_ledger_uncharge(struct cgpu_slot *s, u64 bytes, u64 *used, u64 *memsize);
void cgpu_ledger_undo_charge(struct cgpu_slot *s, u64 bytes);
void cgpu_ledger_transfer(struct cgpu_slot *s, struct cgpu_slot *t, u64 bytes);
void cgpu_ledger_reserve(struct cgpu_slot *s);
int cgpu_ledger_import(struct cgpu_inst *inst, pid_t pid, u64 start, u64 bytes,
		       unsigned int channels, bool keep, struct cgpu_proc **spare);
struct cgpu_upd;
int cgpu_ledger_import_obj(struct cgpu_inst *inst, const struct cgpu_upd *u, bool named);
void cgpu_ledger_seal(struct cgpu_inst *inst);
void cgpu_ledger_give_back(struct cgpu_inst *inst, u32 client, u32 handle);
unsigned int cgpu_ledger_reclaim(struct cgpu_inst *inst, bool (*keep)(pid_t pid, u64 start),
				 unsigned int *kept);
/* What a hot update's reservations hold, summed over instances. */
struct cgpu_reserved {
	unsigned int n;		/* processes */
	u64 bytes;
	unsigned int channels;
};
void cgpu_ledger_reserved(struct cgpu_inst *inst, struct cgpu_reserved *r);
void cgpu_ledger_look(struct cgpu_inst *inst, bool (*look)(pid_t pid, u64 start));
int cgpu_ledger_chan_take(struct cgpu_slot *s, unsigned int max, unsigned int n);
void cgpu_ledger_chan_give(struct cgpu_slot *s, unsigned int n);
void cgpu_ledger_dump(struct seq_file *m, struct cgpu_inst *inst);
void cgpu_ledger_dump_obj(struct seq_file *m, const struct cgpu_inst *inst, pid_t pid, u64 start,
			  u64 bytes, u32 client, u32 handle, u32 parent, u32 grand, bool same);
void cgpu_ledger_read(struct cgpu_inst *inst, u64 *used, u64 *memsize);
int cgpu_ledger_set_memsize(struct cgpu_inst *inst, u64 memsize);
void cgpu_ledger_show(struct seq_file *m, struct cgpu_inst *inst);
void cgpu_ledger_init(struct cgpu_inst *inst);

/* identity.c: which container a task is in (the cgroup it was bound by). */
int cgpu_bind_task(struct pid *pid, struct cgpu_bind *b);
void cgpu_bind_release(struct cgpu_bind *b);
bool cgpu_bind_contains(const struct cgpu_bind *b, struct task_struct *t);
const struct cgpu_inst *cgpu_caller_inst(void);		/* reg_lock held */
struct cgpu_bound_set *cgpu_bound_alloc(void);		/* no lock held */
void cgpu_bound_publish(struct cgpu_bound_set *spare);	/* reg_lock held */
bool cgpu_maybe_contained(void);			/* no lock; notrace */

/* procfs.c */
int cgpu_procfs_init(void);
void cgpu_procfs_exit(void);
extern const struct cgpu_inst_dir_ops cgpu_procfs_inst_dir;

/* chardev.c */
int cgpu_chardev_init(unsigned int major);
int cgpu_chardev_publish(void);
void cgpu_chardev_unpublish(void);
void cgpu_chardev_exit(void);

/* nvhook.c: enforce=1, the budget at the NVIDIA driver's ioctl entry */
int cgpu_nvhook_init(void);
void cgpu_nvhook_exit(void);

/* nvcarry.c: the driver files that keep a hot update's reservations (nvhook.c's) */
void cgpu_carry_init(void);
const struct cgpu_driver_files *cgpu_carry_start(unsigned long close);
void cgpu_carry_stop(void);
void cgpu_carry_released(const void *key);
void cgpu_carry_show(struct seq_file *m);

/* selftest.c */
int cgpu_selftest(void);

#endif
