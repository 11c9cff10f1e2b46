// SPDX-License-Identifier: GPL-2.0
/*
 * cgpu_km: the driver files that keep a hot update's reservations under enforce=1
 * (docs/kmod.md, "Hot upgrade"; docs/upgrade.md, "Reclaim"). A reservation counts what
 * a process held at the NVIDIA driver before the update, which the new module does not
 * know object by object: it is kept while the process, or one that inherited its
 * files, holds a file of the driver or of nvidia-uvm (the driver frees all a file
 * made when the file is released). Published as cgpu.driver_files by nvhook.c while it
 * is attached; called by upgrade.c (holds, let_go) and memledger.c (holder), and by
 * nvhook.c's release wrapper (cgpu_carry_released).
 *
 * Locks: carry.lock, under nvh.lock (attach, the enforcement page), inst->lock
 * (upgrade.c's looks) or alone; none taken inside it.
 */
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/workqueue.h>
#include "cgpu.h"

#define CARRY_BITS	8

/*
 * A driver file a process held while it had a hot update's reservation (carry_look): the
 * reservation stays while the file is open, whichever process holds it then (a child
 * that inherited it). An RM file's entry goes at its release, which passes nvhook.c's
 * nvh_close_wrap. Another file of the driver (nvidia-uvm's, whose mappings hold RM
 * memory) has a release cgpu_km does not see: its entry holds a reference instead,
 * lets go of it soon after that is the only one left (carry_let_go_work), and stays
 * until a whole reclaim period has passed since, so that the reservation outlasts
 * what the file's release frees (carry_let_go). carry.lock.
 */
struct carry_file {
	struct hlist_node node;		/* carry.files, by key */
	const void *key;		/* an RM file's private data; another file itself */
	struct file *pin;		/* not an RM file: referenced; NULL once let go */
	u64 let_go_at;			/* then: carry.reclaims when it was let go */
	bool rm;
	struct carry_proc *by;
};

/*
 * A process whose reservation driver files keep (carry_look): at most CARRY_FILES of
 * them remembered, so that what a hot update makes cgpu_km keep and walk is bounded by
 * reserved processes, not by the files a tenant opens. One that held more is full: its
 * reservation is kept for good (until its instance is deleted), since a file not
 * remembered may hold its memory anywhere. Goes with its last entry unless full.
 * carry.lock.
 */
struct carry_proc {
	struct hlist_node node;		/* carry.procs, by pid */
	pid_t pid;
	u64 start;
	unsigned int nfiles;		/* its entries in carry.files */
	bool full;
};

/* libcuda holds a few files a GPU (docs/kmod.md): a process past this many is full. */
#define CARRY_FILES	256

/* How often the files held for reservations are looked at, while there are any. */
#define CARRY_LET_GO_MS	100

static struct {
	struct mutex lock;
	DECLARE_HASHTABLE(files, CARRY_BITS);
	DECLARE_HASHTABLE(procs, CARRY_BITS);
	unsigned int nfiles, nfull;	/* entries, full processes */
	bool on;			/* attached: entries may be added (until cgpu_carry_stop) */
	unsigned long close;		/* the driver's release: an RM file's (fixed while on) */
	u64 reclaims;			/* upgrade.c's reclaims so far */
	struct delayed_work let_go;	/* carry_let_go_work, while a file is held */
} carry = {
	.lock = __MUTEX_INITIALIZER(carry.lock),
};

/*
 * A file of the NVIDIA driver (/dev/nvidiactl, /dev/nvidiaN: its clients and what they
 * made) or of nvidia-uvm (/dev/nvidia-uvm: a va_space, whose mappings keep RM's
 * duplicates of memory past every handle of the process's), by the module that owns
 * its operations (both set .owner, 535's and 550's nv.c and uvm.c; the stand-in serves
 * nvidia-uvm's files from its one module, docs/sim.md). A module's name is the host's
 * to choose, never a container's. The file holds its module, so the name is there to
 * read. Also the driver's other files (/dev/nvidia-caps, nvidia-uvm-tools): too much.
 */
static bool carry_driver_file(const struct file *f)
{
	const struct module *m = f->f_op ? f->f_op->owner : NULL;

	return m && (!strcmp(m->name, "nvidia") || !strcmp(m->name, "nvidia_uvm"));
}

/* One look at a process's files (carry_scan_fd): some driver files, referenced, more to come. */
#define CARRY_SCAN_FILES	8
struct carry_scan {
	struct file *f[CARRY_SCAN_FILES];
	unsigned int n, next;
	bool driver;			/* a file of the driver or of nvidia-uvm seen */
};

/*
 * How many entries pin f: a file two reserved processes held (one forked from the
 * other) is pinned by each, and is held by nobody else once its count is that many.
 * Entries of one file share its bucket. carry.lock.
 */
static unsigned int carry_pins(const struct file *f)
{
	const struct carry_file *e;
	unsigned int n = 0;

	lockdep_assert_held(&carry.lock);
	hash_for_each_possible(carry.files, e, node, (unsigned long)f)
		n += e->pin == f;
	return n;
}

/* Whether f's release passes nvhook.c's nvh_close_wrap (an RM file): its entry goes there. */
static bool carry_rm_file(const struct file *f)
{
	return (unsigned long)f->f_op->release == READ_ONCE(carry.close);
}

/* For iterate_fd, under the table's spinlock: a reference on each driver file, 8 at a time. */
static int carry_scan_fd(const void *arg, struct file *f, unsigned int fd)
{
	struct carry_scan *sc = (struct carry_scan *)arg;

	if (!carry_driver_file(f))
		return 0;
	sc->driver = true;
	if (sc->n == CARRY_SCAN_FILES) {
		sc->next = fd;
		return 1;
	}
	sc->f[sc->n++] = get_file(f);
	return 0;
}

/* Process (pid, start)'s entry: while files are remembered for it, or for good once full. */
static struct carry_proc *carry_proc(pid_t pid, u64 start)
{
	struct carry_proc *c;

	lockdep_assert_held(&carry.lock);
	hash_for_each_possible(carry.procs, c, node, pid)
		if (c->pid == pid && c->start == start)
			return c;
	return NULL;
}

/* e is forgotten (its pin, if any, is the caller's); its process with its last, unless full. */
static void carry_del(struct carry_file *e)
{
	struct carry_proc *c = e->by;

	lockdep_assert_held(&carry.lock);
	hash_del(&e->node);
	cgpu_free(e);
	carry.nfiles--;
	if (--c->nfiles || c->full)
		return;
	hash_del(&c->node);
	cgpu_free(c);
}

/*
 * c (NULL: none yet, made here) is full: its reservation is kept for good. ENOMEM: not
 * marked (as a file that cannot be remembered).
 */
static void carry_full(struct carry_proc **cp, pid_t pid, u64 start)
{
	struct carry_proc *c = *cp;

	lockdep_assert_held(&carry.lock);
	if (!c) {
		c = cgpu_zalloc(sizeof(*c));
		if (!c)
			return;
		*c = (struct carry_proc){ .pid = pid, .start = start };
		hash_add(carry.procs, &c->node, pid);
		*cp = c;
	}
	if (!c->full) {
		c->full = true;
		carry.nfull++;
	}
}

/*
 * One more file remembered for c (NULL: none yet, made here); false if c is full or
 * now becomes full, or on ENOMEM (the file is not remembered then).
 */
static bool carry_add(struct carry_proc **cp, pid_t pid, u64 start, const void *key, bool rm,
		      struct file *pin)
{
	struct carry_proc *c = *cp;
	struct carry_file *e;

	lockdep_assert_held(&carry.lock);
	if (c && c->full)
		return false;
	if (c && c->nfiles == CARRY_FILES) {
		carry_full(cp, pid, start);
		pr_warn_ratelimited("cgpu_km: enforce: pid %d held more than %u driver files at a hot update: its reservation is kept until its instance is deleted\n",
				    pid, CARRY_FILES);
		return false;
	}
	e = cgpu_zalloc(sizeof(*e));
	if (e && !c) {
		c = cgpu_zalloc(sizeof(*c));
		if (c) {
			*c = (struct carry_proc){ .pid = pid, .start = start };
			hash_add(carry.procs, &c->node, pid);
			*cp = c;
		}
	}
	if (!c) {
		cgpu_free(e);
		return false;
	}
	if (!e)
		return false;
	*e = (struct carry_file){ .key = key, .rm = rm, .pin = pin, .by = c };
	hash_add(carry.files, &e->node, (unsigned long)key);
	c->nfiles++;
	carry.nfiles++;
	return true;
}

/* carry_look's pass over thread t's file table. */
static bool carry_look_table(pid_t pid, u64 start, struct task_struct *t)
{
	struct carry_scan sc = { .driver = false };
	struct carry_proc *c;
	struct carry_file *e;
	unsigned int i;
	bool full;
	int more;

	do {
		sc.n = 0;
		task_lock(t);
		more = t->files ? iterate_fd(t->files, sc.next, carry_scan_fd, &sc) : 0;
		task_unlock(t);
		mutex_lock(&carry.lock);
		c = carry_proc(pid, start);
		for (i = 0; i < sc.n && carry.on; i++) {
			bool rm = carry_rm_file(sc.f[i]), known = false;
			const void *key = rm ? sc.f[i]->private_data : sc.f[i];

			/* A let-go entry's key may be a new file's address by now. */
			hash_for_each_possible(carry.files, e, node, (unsigned long)key)
				known |= e->key == key && (e->rm || e->pin) && e->by == c;
			if (known || !carry_add(&c, pid, start, key, rm, rm ? NULL : sc.f[i]))
				continue;
			if (!rm) {
				sc.f[i] = NULL;
				queue_delayed_work(system_wq, &carry.let_go,
						   msecs_to_jiffies(CARRY_LET_GO_MS));
			}
		}
		full = c && c->full;
		mutex_unlock(&carry.lock);
		for (i = 0; i < sc.n; i++)
			if (sc.f[i])
				fput(sc.f[i]);
	} while (more && !full);
	return sc.driver;
}

/*
 * The threads of process (pid, start) that hold its file tables, one each, referenced:
 * the leader's table is gone once it exited (a thread may go on: pthread_exit of main),
 * and a thread may have one of its own (unshare(CLONE_FILES)). How many: 0 for a
 * process gone, -1 (none referenced) for one of more than CARRY_TABLES tables.
 */
#define CARRY_TABLES	8
static int carry_tables(pid_t pid, u64 start, struct task_struct **th)
{
	const struct files_struct *seen[CARRY_TABLES];
	struct task_struct *t, *leader;
	int n = 0, i;

	rcu_read_lock();
	leader = pid_task(find_pid_ns(pid, &init_pid_ns), PIDTYPE_TGID);
	if (!leader || leader->start_time != start) {
		rcu_read_unlock();
		return 0;
	}
	for_each_thread(leader, t) {
		/*
		 * Compared only, to look at each table once: a table can change under us as
		 * its descriptors can, and each is read again under its thread's task_lock.
		 */
		const struct files_struct *fs = READ_ONCE(t->files);

		if (!fs)
			continue;
		for (i = 0; i < n && seen[i] != fs; i++)
			;
		if (i < n)
			continue;
		if (n == CARRY_TABLES) {
			n = -1;
			break;
		}
		seen[n] = fs;
		th[n++] = get_task_struct(t);
	}
	rcu_read_unlock();
	if (n < 0)
		for (i = 0; i < CARRY_TABLES; i++)
			put_task_struct(th[i]);
	return n;
}

/*
 * Remembers the driver files process (pid, start) holds now, in any of its threads'
 * tables, as carrying its reservation, and says whether it holds a file of the NVIDIA
 * driver or of nvidia-uvm. Each file is referenced from the look until its entry is in:
 * an RM file closed meanwhile is released by our fput, after the entry, so its release
 * takes the entry away; another file's entry keeps the reference. A process of more
 * tables than are looked at is full.
 */
static bool carry_look(pid_t pid, u64 start)
{
	struct task_struct *th[CARRY_TABLES];
	bool driver = false;
	int n, i;

	n = carry_tables(pid, start, th);
	if (n < 0) {
		struct carry_proc *c;

		mutex_lock(&carry.lock);
		c = carry_proc(pid, start);
		if (carry.on)
			carry_full(&c, pid, start);
		mutex_unlock(&carry.lock);
		pr_warn_ratelimited("cgpu_km: enforce: pid %d had more than %u file tables at a hot update: its reservation is kept until its instance is deleted\n",
				    pid, CARRY_TABLES);
		return true;
	}
	for (i = 0; i < n; i++) {
		driver |= carry_look_table(pid, start, th[i]);
		put_task_struct(th[i]);
	}
	return driver;
}

/*
 * cgpu.driver_files->holds: whether process (pid, start) may still hold driver memory a
 * hot update's reservation counts (upgrade.c keeps the reservation while it does): it
 * holds a file of the NVIDIA driver or of nvidia-uvm (the driver frees all a file made,
 * and nvidia-uvm all a va_space mapped, when the file is released), or a driver file
 * it held at an earlier look is still open in any process (one forked from it that
 * outlived it) or was let go of less than a whole reclaim period ago
 * (carry_let_go), or it was once found full. Each look remembers the files it finds
 * (carry_look).
 */
static bool carry_holds(pid_t pid, u64 start)
{
	struct carry_proc *c;
	bool holds;

	mutex_lock(&carry.lock);
	c = carry_proc(pid, start);
	holds = c && c->full;
	mutex_unlock(&carry.lock);
	/* A full process's files are not looked at again: nothing more would be kept. */
	if (!holds)
		holds = carry_look(pid, start);
	if (!holds) {
		mutex_lock(&carry.lock);
		holds = carry_proc(pid, start) != NULL;
		mutex_unlock(&carry.lock);
	}
	return holds;
}

/* What carry_holder looks for in every process's files: keys of remembered files. */
#define CARRY_SEEK_KEYS	8
struct carry_seek {
	const void *key[CARRY_SEEK_KEYS];
	unsigned int n;
	unsigned int seen;		/* a bit per key found */
	bool all;			/* walk on past a match */
};

/* For iterate_fd, under the table's spinlock: whether f is a file sought (marked seen). */
static int carry_seek_fd(const void *arg, struct file *f, unsigned int fd)
{
	struct carry_seek *sk = (struct carry_seek *)arg;
	const void *key;
	unsigned int i;

	if (!carry_driver_file(f))
		return 0;
	key = carry_rm_file(f) ? f->private_data : f;
	for (i = 0; i < sk->n; i++)
		if (sk->key[i] == key) {
			sk->seen |= 1u << i;
			return !sk->all;
		}
	return 0;
}

/* For iterate_fd: whether f is a file of the driver or of nvidia-uvm. */
static int carry_any_fd(const void *arg, struct file *f, unsigned int fd)
{
	return carry_driver_file(f);
}

/*
 * Walks every file table of process (pid, start) with fn(arg) until one answers
 * nonzero: whether one did. Yes also for a process of more tables than are looked at
 * (carry_look keeps its reservation for good); no for one gone.
 */
static bool carry_walk(pid_t pid, u64 start,
		       int (*fn)(const void *, struct file *, unsigned int), const void *arg)
{
	struct task_struct *th[CARRY_TABLES];
	bool hit = false;
	int n, i;

	n = carry_tables(pid, start, th);
	if (n < 0)
		return true;
	for (i = 0; i < n; i++) {
		task_lock(th[i]);
		hit = hit || (th[i]->files && iterate_fd(th[i]->files, 0, fn, arg));
		task_unlock(th[i]);
		put_task_struct(th[i]);
	}
	return hit;
}

/*
 * cgpu.driver_files->holder, for a frozen module's state: a process gone whose
 * reservation files it held keep (carry_look) is named by a live process that holds one
 * of them now, so that the next module, which looks by process at its commit, finds
 * them: the first found, of the first CARRY_SEEK_KEYS files. Whether the next module
 * must keep the reservation until its instance is deleted (the state's keep=1): the
 * process is full (a file not remembered may hold its memory anywhere), or it is gone
 * and a file remembered for it is open with no live process found holding it (in
 * flight on a socket, or past the first CARRY_SEEK_KEYS): the next module, looking by
 * process, would find nothing and release it while the driver holds the memory. One
 * pass over every process's files, at a dump only. A key is a file's private data or
 * the file, compared only: one released meanwhile can at worst name a process that
 * keeps the reservation longer (too much, never too little). attached: files of the
 * process's are attached to the ledger (then it is not renamed): if it is gone, or
 * alive with no driver file in its tables (it passed them on and closed its own), they
 * are open in another process that nothing names: kept. A process named must hold
 * every remembered file still open, else kept: the next module would release the
 * reservation when it lets go, while another process holds the rest.
 */
static bool carry_holder(pid_t *pid, u64 *start, bool attached)
{
	struct carry_seek sk = { .n = 0 };
	const struct files_struct *last = NULL;
	struct task_struct *p, *t;
	struct carry_proc *c;
	struct carry_file *e;
	bool alive, full, open = false, more = false, found = false;
	pid_t hpid = 0;
	u64 hstart = 0;
	int bkt;

	rcu_read_lock();
	t = pid_task(find_pid_ns(*pid, &init_pid_ns), PIDTYPE_TGID);
	/* A thread of it runs (its leader may have exited before the others). */
	alive = t && t->start_time == *start && atomic_read(&t->signal->live) > 0;
	rcu_read_unlock();
	/* Gone, its attached files open elsewhere: no process to name it by. */
	if (attached && !alive)
		return true;
	/*
	 * Alive, its attached files open, none of the driver's in its tables: it passed
	 * them on (to a child, over a socket) and closed its own; the next module, looking
	 * at its files, would find nothing.
	 */
	if (attached && !carry_walk(*pid, *start, carry_any_fd, NULL))
		return true;
	mutex_lock(&carry.lock);
	c = carry_proc(*pid, *start);
	full = c && c->full;
	/* A pinned file only cgpu_km holds is let go of soon: nobody can take it again. */
	if (c && !alive && !full)
		hash_for_each(carry.files, bkt, e, node)
			if (e->by == c && (e->rm || (e->pin && file_count(e->pin) > carry_pins(e->pin)))) {
				open = true;
				if (sk.n < CARRY_SEEK_KEYS)
					sk.key[sk.n++] = e->key;
				else
					more = true;
			}
	mutex_unlock(&carry.lock);
	if (!open)
		return full;
	/* Every thread: a table may be a thread's own, or outlive its leader (carry_tables). */
	rcu_read_lock();
	for_each_process_thread(p, t) {
		const struct files_struct *fs = READ_ONCE(t->files);

		/* A group's threads come together: a table they share is walked once. */
		if ((t->flags & PF_EXITING) || !fs || fs == last)
			continue;
		last = fs;
		task_lock(t);
		found = t->files && iterate_fd(t->files, 0, carry_seek_fd, &sk);
		task_unlock(t);
		if (found) {
			hpid = task_tgid_nr(t);
			hstart = p->start_time;
			goto out;	/* out of both loops */
		}
	}
out:
	rcu_read_unlock();
	if (!found)
		return true;
	*pid = hpid;
	*start = hstart;
	/*
	 * The next module keeps it while that process holds one of them: it must hold every
	 * one (a file another process kept would hold the memory past it).
	 */
	if (more)
		return true;
	sk.seen = 0;
	sk.all = true;
	carry_walk(hpid, hstart, carry_seek_fd, &sk);
	return sk.seen != (1u << sk.n) - 1;
}

/* The RM file whose private data is key was released: it carries nothing any more. */
void cgpu_carry_released(const void *key)
{
	struct hlist_node *tmp;
	struct carry_file *e;

	mutex_lock(&carry.lock);
	hash_for_each_possible_safe(carry.files, e, tmp, node, (unsigned long)key)
		if (e->rm && e->key == key)
			carry_del(e);
	mutex_unlock(&carry.lock);
}

/*
 * Lets go of each file held for a reservation that no process holds any more (only our
 * reference left: nobody can take the file again): our fput releases it, from the
 * workqueue (the worker is a kernel thread), and nvidia-uvm frees what it mapped. Looks
 * again while files are held.
 */
static void carry_let_go_work(struct work_struct *w)
{
	struct carry_file *e;
	bool held = false;
	int bkt;

	mutex_lock(&carry.lock);
	hash_for_each(carry.files, bkt, e, node) {
		struct file *f = e->pin;
		struct carry_file *o;

		if (!f)
			continue;
		if (file_count(f) > carry_pins(f)) {
			held = true;
			continue;
		}
		/* Only our pins left: every entry of the file lets go. */
		hash_for_each_possible(carry.files, o, node, (unsigned long)f)
			if (o->pin == f) {
				o->pin = NULL;
				o->let_go_at = carry.reclaims;
				fput(f);
			}
	}
	if (held && carry.on)
		queue_delayed_work(system_wq, &carry.let_go, msecs_to_jiffies(CARRY_LET_GO_MS));
	mutex_unlock(&carry.lock);
}

/*
 * cgpu.driver_files->let_go, at each reclaim before its looks: an entry let go of
 * before the last reclaim goes, so its reservation is released a whole reclaim period
 * after the file's release was set off. Whether entries that hold or let go of a file
 * remain.
 */
static bool carry_let_go(void)
{
	struct hlist_node *tmp;
	struct carry_file *e;
	bool more = false;
	int bkt;

	mutex_lock(&carry.lock);
	carry.reclaims++;
	hash_for_each_safe(carry.files, bkt, tmp, e, node) {
		if (e->rm)
			continue;
		if (!e->pin && e->let_go_at + 1 < carry.reclaims) {
			carry_del(e);
			continue;
		}
		more = true;
	}
	mutex_unlock(&carry.lock);
	return more;
}

static const struct cgpu_driver_files carry_driver_files = {
	.holds = carry_holds,
	.let_go = carry_let_go,
	.holder = carry_holder,
};

void cgpu_carry_init(void)
{
	hash_init(carry.files);
	hash_init(carry.procs);
	INIT_DELAYED_WORK(&carry.let_go, carry_let_go_work);
}

/*
 * nvhook.c has attached; close is the driver's release, which RM files' releases
 * pass. What it publishes as cgpu.driver_files.
 */
const struct cgpu_driver_files *cgpu_carry_start(unsigned long close)
{
	mutex_lock(&carry.lock);
	carry.close = close;
	carry.on = true;
	mutex_unlock(&carry.lock);
	return &carry_driver_files;
}

/* nvhook.c detaches, every wrapper done: every file let go of, every entry forgotten. */
void cgpu_carry_stop(void)
{
	struct carry_proc *c;
	struct hlist_node *tmp;
	struct carry_file *e;
	int bkt;

	mutex_lock(&carry.lock);
	carry.on = false;
	hash_for_each_safe(carry.files, bkt, tmp, e, node) {
		if (e->pin)
			fput(e->pin);
		carry_del(e);
	}
	/* The full ones, which their last entry did not take. */
	hash_for_each_safe(carry.procs, bkt, tmp, c, node) {
		hash_del(&c->node);
		cgpu_free(c);
	}
	carry.nfull = 0;
	mutex_unlock(&carry.lock);
	/* It queues itself again only while on: not any more. */
	cancel_delayed_work_sync(&carry.let_go);
}

/* The enforcement page's lines. */
void cgpu_carry_show(struct seq_file *m)
{
	mutex_lock(&carry.lock);
	seq_printf(m, "files kept for reservations: %u\nprocesses past %u: %u\n", carry.nfiles,
		   CARRY_FILES, carry.nfull);
	mutex_unlock(&carry.lock);
}
