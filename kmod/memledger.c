// SPDX-License-Identifier: GPL-2.0
/*
 * The memory ledger of one instance: its limit, its total, what each process holds and
 * what each attached file holds. The checks are lib/rules.c's; here they run under the
 * instance's lock. Every count a show prints is kept as it changes, so no show or dump
 * walks more than one entry per process, and the number of processes and files is
 * capped (CGPU_INST_FILES_MAX).
 */
#include <linux/seq_file.h>
#include "cgpu.h"
#include "lib/rules.h"
#include "lib/upgradecmd.h"

/*
 * Video memory a hot update's reservation counts, named by one or more objects (the
 * state's `obj` lines, `same=1` for the second and later): once the driver has freed
 * every one, its bytes come back (cgpu_ledger_give_back). Only memory every handle of
 * which the old module followed is carried (nvhook.c's dump), and after the update
 * cgpu_km refuses every duplicate, map or export of video memory it did not see made,
 * so no other handle comes to hold it. Memory made by an import stays open until the
 * commit: a line freed before the memory's last line came in gives nothing back yet.
 * A line past CGPU_INST_RESOBJS_MAX is not kept (phantom): its memory's bytes stay
 * reserved. inst->lock.
 */
struct cgpu_resmem {
	struct list_head link;		/* proc->resmems, or a list of memory done */
	struct cgpu_proc *proc;
	u64 bytes;
	unsigned int live, phantom;	/* its lines kept and not freed; its lines not kept */
	bool open;			/* imported, not yet committed */
};

/* One handle of it: RM's (client, handle, parent, grand), or nvidia-uvm's (client 0). */
struct cgpu_resobj {
	struct hlist_node node;		/* inst->resobjs, by client */
	struct list_head link;		/* proc->resobjs, a memory's lines one after another */
	struct cgpu_resmem *mem;
	u32 client, handle, parent, grand;
};

/*
 * Objects kept for one instance's reservations: each costs kernel memory and the
 * frees that look for them. Past it an object is not kept: its bytes stay reserved
 * until its process holds no driver file (too much, never too little).
 */
#define CGPU_INST_RESOBJS_MAX	CGPU_FILE_OBJS_MAX

void cgpu_ledger_init(struct cgpu_inst *inst)
{
	mutex_init(&inst->lock);
	INIT_LIST_HEAD(&inst->procs);
	hash_init(inst->proc_hash);
	hash_init(inst->resobjs);
}

/*
 * The process (pid, start); start 0 is a process imported from a state that had no
 * start times, which the first process of that pid to attach is taken for.
 */
static struct cgpu_proc *cgpu_proc_find(struct cgpu_inst *inst, pid_t pid, u64 start)
{
	struct cgpu_proc *p;

	hash_for_each_possible(inst->proc_hash, p, hnode, pid)
		if (p->pid == pid && (p->start == start || !p->start))
			return p;
	return NULL;
}

/* A new process from *spare (which is used up); the cap checked by the caller. */
static struct cgpu_proc *cgpu_proc_new(struct cgpu_inst *inst, pid_t pid, u64 start,
				       struct cgpu_proc **spare)
{
	struct cgpu_proc *p = *spare;

	*spare = NULL;
	p->pid = pid;
	p->start = start;
	INIT_LIST_HEAD(&p->resobjs);
	INIT_LIST_HEAD(&p->resmems);
	list_add_tail(&p->link, &inst->procs);
	hash_add(inst->proc_hash, &p->hnode, pid);
	inst->nprocs++;
	return p;
}

/* Whether a hot update holds something for p (bytes, channels or both). */
static bool cgpu_proc_reserves(const struct cgpu_proc *p)
{
	return p->reserved || p->reserved_chan;
}

/* Object o is gone from the ledger (off the hash already): counted out. */
static void cgpu_resobj_free(struct cgpu_inst *inst, struct cgpu_resobj *o)
{
	list_del(&o->link);
	inst->nresobjs--;
	atomic_dec(&cgpu.resobjs);
	cgpu_free(o);
}

/* p's reservation is over: counted out; its objects, memory and keep go with it. */
static void cgpu_proc_reservation_over(struct cgpu_inst *inst, struct cgpu_proc *p)
{
	struct cgpu_resmem *mem, *mn;
	struct cgpu_resobj *o, *n;

	inst->nreserved--;
	p->keep = false;
	list_for_each_entry_safe(o, n, &p->resobjs, link) {
		hash_del(&o->node);
		cgpu_resobj_free(inst, o);
	}
	list_for_each_entry_safe(mem, mn, &p->resmems, link) {
		list_del(&mem->link);
		cgpu_free(mem);
	}
	p->resobj_bytes = 0;
	p->last_mem = NULL;
	p->last_bytes = 0;
}

/*
 * p's reservation is gone (taken back or released): counted out. Its channels are
 * released either way: only enforcement counts them, and it takes no reservation back
 * (cgpu_attach), so one taken back was never counted against a cap.
 */
static void cgpu_proc_unreserve(struct cgpu_inst *inst, struct cgpu_proc *p)
{
	cgpu_proc_reservation_over(inst, p);
	inst->reserved -= p->reserved;
	p->reserved = 0;
	inst->nchan -= p->reserved_chan;
	inst->reserved_chan -= p->reserved_chan;
	p->nchan -= p->reserved_chan;
	p->reserved_chan = 0;
}

/* p has no file and no reservation left: unlinked, for the caller to free. */
static struct cgpu_proc *cgpu_proc_drop(struct cgpu_inst *inst, struct cgpu_proc *p)
{
	if (p->nfiles || cgpu_proc_reserves(p))
		return NULL;
	list_del(&p->link);
	hash_del(&p->hnode);
	inst->nprocs--;
	return p;
}

/*
 * s->inst's ledger gets the file s, of process (pid, start). A process attaching again
 * after a hot update takes back what it held (take_reserved): its reservation becomes
 * this file's holding, so nothing is charged twice. EMFILE past the cap.
 */
int cgpu_ledger_link(struct cgpu_slot *s, pid_t pid, u64 start, struct cgpu_proc **spare,
		     bool take_reserved)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_proc *p;
	int err = 0;

	mutex_lock(&inst->lock);
	p = cgpu_proc_find(inst, pid, start);
	if (inst->nfiles >= CGPU_INST_FILES_MAX ||
	    (!p && inst->nprocs >= CGPU_INST_FILES_MAX)) {
		err = -EMFILE;
		goto out;
	}
	if (!p)
		p = cgpu_proc_new(inst, pid, start, spare);
	p->start = start;
	s->proc = p;
	s->bytes = take_reserved ? p->reserved : 0;
	if (take_reserved && cgpu_proc_reserves(p))
		cgpu_proc_unreserve(inst, p);
	p->nfiles++;
	inst->nfiles++;
out:
	mutex_unlock(&inst->lock);
	return err;
}

/* Releases everything s holds: the file is closing. */
void cgpu_ledger_unlink(struct cgpu_slot *s)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_proc *p = s->proc, *gone;

	mutex_lock(&inst->lock);
	/* used and p->bytes are sums that include s->bytes, so neither can wrap. */
	inst->used -= s->bytes;
	p->bytes -= s->bytes;
	s->bytes = 0;
	p->nfiles--;
	inst->nfiles--;
	gone = cgpu_proc_drop(inst, p);
	mutex_unlock(&inst->lock);
	cgpu_free(gone);
}

/*
 * A charge (or uncharge) on the file's holding. A frozen module changes no ledger:
 * EAGAIN, the caller retries on the module that comes next.
 */
static int cgpu_ledger_move(struct cgpu_slot *s, u64 bytes, bool charge, u64 *used,
			    u64 *memsize)
{
	struct cgpu_inst *inst = s->inst;
	enum cgpu_rc rc;
	int err;

	mutex_lock(&inst->lock);
	if (READ_ONCE(cgpu.state) != CGPU_RUNNING) {
		err = -EAGAIN;
	} else {
		rc = charge ? cgpu_check_charge(inst->used, inst->memsize, bytes) :
			      cgpu_check_uncharge(s->bytes, bytes);
		if (rc == CGPU_OK && charge) {
			inst->used += bytes;
			s->bytes += bytes;
			s->proc->bytes += bytes;
		} else if (rc == CGPU_OK) {
			inst->used -= bytes;
			s->bytes -= bytes;
			s->proc->bytes -= bytes;
		}
		err = cgpu_errno(rc);
	}
	*used = inst->used;
	*memsize = inst->memsize;
	mutex_unlock(&inst->lock);
	return err;
}

int cgpu_ledger_charge(struct cgpu_slot *s, u64 bytes, u64 *used, u64 *memsize)
{
	return cgpu_ledger_move(s, bytes, true, used, memsize);
}

int cgpu_ledger_uncharge(struct cgpu_slot *s, u64 bytes, u64 *used, u64 *memsize)
{
	return cgpu_ledger_move(s, bytes, false, used, memsize);
}

/*
 * Moves bytes of s's holding to t's, two files on one instance (memory the first held
 * stays held through the second): the instance's total does not change, so no rule is
 * checked, and a frozen module moves it too. A HANDOVER may have put part of s's
 * holding into its process's reservation: only what s still holds moves, the rest
 * stays reserved (too much, never too little).
 */
void cgpu_ledger_transfer(struct cgpu_slot *s, struct cgpu_slot *t, u64 bytes)
{
	struct cgpu_inst *inst = s->inst;

	mutex_lock(&inst->lock);
	bytes = min(bytes, s->bytes);
	s->bytes -= bytes;
	s->proc->bytes -= bytes;
	t->bytes += bytes;
	t->proc->bytes += bytes;
	mutex_unlock(&inst->lock);
}

/*
 * Takes back a charge whose caller could not be told of it, whatever the state: a
 * HANDOVER by another thread may have moved it into the process's reservation
 * meanwhile, and then it is taken from there, so the caller's EFAULT is true.
 */
void cgpu_ledger_undo_charge(struct cgpu_slot *s, u64 bytes)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_proc *p = s->proc;
	u64 from_file;

	mutex_lock(&inst->lock);
	from_file = min(bytes, s->bytes);
	s->bytes -= from_file;
	bytes -= from_file;
	bytes = min(bytes, p->reserved);	/* all of it: it was moved, not spent */
	p->reserved -= bytes;
	inst->reserved -= bytes;
	if (bytes && !cgpu_proc_reserves(p))
		cgpu_proc_reservation_over(inst, p);
	p->bytes -= from_file + bytes;
	inst->used -= from_file + bytes;
	mutex_unlock(&inst->lock);
}

/*
 * HANDOVER: what the file holds becomes its process's reservation (with what its other
 * files left there), and the file goes on holding nothing.
 */
void cgpu_ledger_reserve(struct cgpu_slot *s)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_proc *p = s->proc;

	mutex_lock(&inst->lock);
	if (s->bytes) {
		if (!cgpu_proc_reserves(p))
			inst->nreserved++;
		p->reserved += s->bytes;
		inst->reserved += s->bytes;
		s->bytes = 0;
	}
	mutex_unlock(&inst->lock);
}

/*
 * A `charge` line of an import: bytes and channels held by process (pid, start), a
 * reservation until it attaches. Merged into the process's reservation if it has one;
 * else *spare is used and set to NULL. ENOMEM past memsize, EMFILE past the caps;
 * nothing changed then. The channels are counted past max_channels if need be: the
 * driver holds them (new ones are refused until enough go). keep: the old module could
 * not say which process holds what the reservation counts: it stays until the instance
 * is deleted.
 */
int cgpu_ledger_import(struct cgpu_inst *inst, pid_t pid, u64 start, u64 bytes,
		       unsigned int channels, bool keep, struct cgpu_proc **spare)
{
	struct cgpu_proc *p;
	int err = 0;

	mutex_lock(&inst->lock);
	if (bytes)
		err = cgpu_errno(cgpu_check_charge(inst->used, inst->memsize, bytes));
	p = cgpu_proc_find(inst, pid, start);
	if (!err && ((!p && inst->nprocs >= CGPU_INST_FILES_MAX) ||
		     channels > CGPU_CHANNELS_MAX - min_t(unsigned int, inst->nchan,
							  CGPU_CHANNELS_MAX)))
		err = -EMFILE;
	if (!err) {
		if (!p)
			p = cgpu_proc_new(inst, pid, start, spare);
		if (!cgpu_proc_reserves(p))
			inst->nreserved++;
		p->reserved += bytes;
		p->bytes += bytes;
		inst->reserved += bytes;
		inst->used += bytes;
		p->reserved_chan += channels;
		p->nchan += channels;
		inst->nchan += channels;
		inst->reserved_chan += channels;
		p->keep |= keep;
	}
	mutex_unlock(&inst->lock);
	return err;
}

/*
 * An `obj` line of an import: an object of process (pid, start)'s reservation, whose
 * `charge` line came first and holds it, naming new memory, or with same=1 the memory
 * of the process's obj line before, of the same bytes (EINVAL otherwise: the state does
 * not add up). Past CGPU_INST_RESOBJS_MAX, or with named false (nvhook.c cannot follow
 * what it names), it is not kept: its memory's bytes stay reserved.
 */
int cgpu_ledger_import_obj(struct cgpu_inst *inst, const struct cgpu_upd *u, bool named)
{
	struct cgpu_resobj *o = cgpu_zalloc(sizeof(*o));
	struct cgpu_resmem *mem = cgpu_zalloc(sizeof(*mem));
	struct cgpu_proc *p;
	bool capped;
	int err = 0;

	if (!o || !mem) {
		cgpu_free(o);
		cgpu_free(mem);
		return -ENOMEM;
	}
	mutex_lock(&inst->lock);
	capped = inst->nresobjs >= CGPU_INST_RESOBJS_MAX;
	p = cgpu_proc_find(inst, (pid_t)u->pid, u->start);
	if (!p || (u->same ? u->bytes != p->last_bytes :
		   p->resobj_bytes > p->reserved || u->bytes > p->reserved - p->resobj_bytes)) {
		err = -EINVAL;
		goto out;
	}
	if (!u->same) {
		/* Kept if its first line is: the bytes count once, whatever lines follow. */
		p->last_bytes = u->bytes;
		p->last_mem = NULL;
		if (named && !capped) {
			*mem = (struct cgpu_resmem){ .proc = p, .bytes = u->bytes, .open = true };
			list_add_tail(&mem->link, &p->resmems);
			p->resobj_bytes += u->bytes;
			p->last_mem = mem;
			mem = NULL;
		}
	}
	/* A line of memory not kept is not either: nothing of it gives back. */
	if (p->last_mem && (!named || capped)) {
		p->last_mem->phantom++;
	} else if (p->last_mem) {
		*o = (struct cgpu_resobj){ .mem = p->last_mem, .client = (u32)u->client,
			.handle = (u32)(u->map ?: u->handle), .parent = (u32)u->parent,
			.grand = (u32)u->grand };
		hash_add(inst->resobjs, &o->node, o->client);
		list_add_tail(&o->link, &p->resobjs);
		p->last_mem->live++;
		inst->nresobjs++;
		atomic_inc(&cgpu.resobjs);
		o = NULL;
	}
	if (capped)
		pr_warn_ratelimited("cgpu_km: hot update: instance %s on GPU %u: more than %u objects of reservations; the rest give nothing back until their processes hold no driver file\n",
				    inst->id, inst->gpu->index, CGPU_INST_RESOBJS_MAX);
out:
	mutex_unlock(&inst->lock);
	cgpu_free(o);
	cgpu_free(mem);
	return err;
}

/*
 * Memory whose lines are all freed, on done: its bytes come back (those of one with a
 * line not kept stay), and a reservation left with nothing is over; its process, if
 * that leaves it nothing, goes on gone, for the caller to free. A process ended by an
 * earlier memory waits on gone too: 0 bytes left to give.
 */
static void cgpu_resmems_done(struct cgpu_inst *inst, struct list_head *done,
			      struct list_head *gone)
{
	struct cgpu_resmem *mem, *n;
	struct cgpu_proc *p;
	u64 bytes;

	list_for_each_entry_safe(mem, n, done, link) {
		p = mem->proc;
		bytes = mem->phantom ? 0 : min(mem->bytes, p->reserved);
		p->reserved -= bytes;
		inst->reserved -= bytes;
		p->bytes -= bytes;
		inst->used -= bytes;
		p->resobj_bytes -= min(mem->bytes, p->resobj_bytes);
		list_del(&mem->link);
		cgpu_free(mem);
		if (bytes && !cgpu_proc_reserves(p)) {
			cgpu_proc_reservation_over(inst, p);
			if (cgpu_proc_drop(inst, p))
				list_add(&p->link, gone);
		}
	}
}

static void cgpu_procs_free(struct list_head *gone)
{
	struct cgpu_proc *p, *n;

	list_for_each_entry_safe(p, n, gone, link)
		cgpu_free(p);
}

/*
 * The driver has freed handle of client (handle == client: the client; client 0:
 * nvidia-uvm's duplicate handle): every object of a reservation it named, or that lay
 * under it, is gone, and memory with no line left gives its bytes back. A handle comes
 * again only once what it named is gone, so whatever handle a successful free names
 * now, an object recorded under it (or under its parent) is gone from the driver.
 */
void cgpu_ledger_give_back(struct cgpu_inst *inst, u32 client, u32 handle)
{
	struct cgpu_resobj *o;
	struct hlist_node *tmp;
	LIST_HEAD(done);
	LIST_HEAD(gone);

	mutex_lock(&inst->lock);
	/* Memory done is taken off first: a reservation ended by one frees the rest of it. */
	hash_for_each_possible_safe(inst->resobjs, o, tmp, node, client)
		if (o->client == client && (handle == client || handle == o->handle ||
					    handle == o->parent || handle == o->grand)) {
			hash_del(&o->node);
			if (!--o->mem->live && !o->mem->open)
				list_move(&o->mem->link, &done);
			cgpu_resobj_free(inst, o);
		}
	cgpu_resmems_done(inst, &done, &gone);
	mutex_unlock(&inst->lock);
	cgpu_procs_free(&gone);
}

/* The import is committed: memory whose lines were all freed meanwhile gives back now. */
void cgpu_ledger_seal(struct cgpu_inst *inst)
{
	struct cgpu_resmem *mem, *mn;
	struct cgpu_proc *p;
	LIST_HEAD(done);
	LIST_HEAD(gone);

	mutex_lock(&inst->lock);
	list_for_each_entry(p, &inst->procs, link) {
		p->last_mem = NULL;
		p->last_bytes = 0;
		list_for_each_entry_safe(mem, mn, &p->resmems, link) {
			mem->open = false;
			if (!mem->live)
				list_move(&mem->link, &done);
		}
	}
	cgpu_resmems_done(inst, &done, &gone);
	mutex_unlock(&inst->lock);
	cgpu_procs_free(&gone);
}

/* Calls look for the process of every reservation on inst (nvcarry.c remembers its files). */
void cgpu_ledger_look(struct cgpu_inst *inst, bool (*look)(pid_t pid, u64 start))
{
	struct cgpu_proc *p;

	mutex_lock(&inst->lock);
	list_for_each_entry(p, &inst->procs, link)
		if (cgpu_proc_reserves(p))
			look(p->pid, p->start);
	mutex_unlock(&inst->lock);
}

/*
 * Releases every reservation (their processes did not come back) but those of the
 * processes keep (NULL: none) says still hold what was charged, which are counted in
 * *kept; how many were released. One entry per process, under a sleeping lock.
 */
unsigned int cgpu_ledger_reclaim(struct cgpu_inst *inst, bool (*keep)(pid_t pid, u64 start),
				 unsigned int *kept)
{
	struct cgpu_proc *p, *n;
	unsigned int count = 0;
	LIST_HEAD(gone);

	mutex_lock(&inst->lock);
	list_for_each_entry_safe(p, n, &inst->procs, link) {
		if (!cgpu_proc_reserves(p))
			continue;
		if (keep && (p->keep || keep(p->pid, p->start))) {
			(*kept)++;
			continue;
		}
		count++;
		inst->used -= p->reserved;
		p->bytes -= p->reserved;
		cgpu_proc_unreserve(inst, p);
		if (cgpu_proc_drop(inst, p))
			list_add(&p->link, &gone);
	}
	mutex_unlock(&inst->lock);
	list_for_each_entry_safe(p, n, &gone, link)
		cgpu_free(p);
	return count;
}

void cgpu_ledger_reserved(struct cgpu_inst *inst, struct cgpu_reserved *r)
{
	mutex_lock(&inst->lock);
	r->n += inst->nreserved;
	r->bytes += inst->reserved;
	r->channels += inst->reserved_chan;
	mutex_unlock(&inst->lock);
}

/*
 * n more channel groups, channels, VA spaces or device counts held at the driver by s's
 * file, unless its instance would hold more than max then (0: no cap): -ENOSPC. Counted
 * apart from the bytes: the driver says nowhere what memory it holds for them
 * (nvhook.c), so they cannot be charged. Per process too, for a hot update's state: a
 * frozen module counts none (-EAGAIN), as it charges nothing, so none is made that its
 * state does not count.
 */
int cgpu_ledger_chan_take(struct cgpu_slot *s, unsigned int max, unsigned int n)
{
	struct cgpu_inst *inst = s->inst;
	int err = 0;

	mutex_lock(&inst->lock);
	if (READ_ONCE(cgpu.state) != CGPU_RUNNING) {
		err = -EAGAIN;
	} else if (max && inst->nchan + n > max) {
		err = -ENOSPC;
	} else {
		inst->nchan += n;
		s->proc->nchan += n;
	}
	mutex_unlock(&inst->lock);
	return err;
}

void cgpu_ledger_chan_give(struct cgpu_slot *s, unsigned int n)
{
	struct cgpu_inst *inst = s->inst;

	mutex_lock(&inst->lock);
	if (!WARN_ON_ONCE(inst->nchan < n || s->proc->nchan < n)) {
		inst->nchan -= n;
		s->proc->nchan -= n;
	}
	mutex_unlock(&inst->lock);
}

void cgpu_ledger_read(struct cgpu_inst *inst, u64 *used, u64 *memsize)
{
	mutex_lock(&inst->lock);
	*used = inst->used;
	*memsize = inst->memsize;
	mutex_unlock(&inst->lock);
}

int cgpu_ledger_set_memsize(struct cgpu_inst *inst, u64 memsize)
{
	enum cgpu_rc rc;

	mutex_lock(&inst->lock);
	rc = cgpu_check_memsize(memsize, inst->used);
	if (rc == CGPU_OK)
		inst->memsize = memsize;
	mutex_unlock(&inst->lock);
	return cgpu_errno(rc);
}

/* meminfo: "Free: N", then "PID: P Mem: M" per process holding memory. */
void cgpu_ledger_show(struct seq_file *m, struct cgpu_inst *inst)
{
	struct cgpu_proc *p;

	mutex_lock(&inst->lock);
	seq_printf(m, "Free: %llu\n", inst->memsize - inst->used);
	list_for_each_entry(p, &inst->procs, link)
		if (p->bytes)
			seq_printf(m, "PID: %d Mem: %llu\n", p->pid, p->bytes);
	mutex_unlock(&inst->lock);
}

/*
 * The hot update's "obj GPU ID PID BYTES client=C handle=H parent=P grand=G start=NS",
 * or for nvidia-uvm's duplicate (client 0) "obj GPU ID PID BYTES map=H start=NS", then
 * " same=1" if it names the memory of the line before (grand= and start= left out when
 * 0): an object of that process's charge (its line comes first); nvhook.c's and the
 * reservations'.
 */
void cgpu_ledger_dump_obj(struct seq_file *m, const struct cgpu_inst *inst, pid_t pid, u64 start,
			  u64 bytes, u32 client, u32 handle, u32 parent, u32 grand, bool same)
{
	seq_printf(m, "obj %u %s %d %llu", inst->gpu->index, inst->id, pid, bytes);
	if (client)
		seq_printf(m, " client=%u handle=%u parent=%u", client, handle, parent);
	else
		seq_printf(m, " map=%u", handle);
	if (grand)
		seq_printf(m, " grand=%u", grand);
	if (start)
		seq_printf(m, " start=%llu", start);
	if (same)
		seq_puts(m, " same=1");
	seq_putc(m, '\n');
}

/*
 * The hot update's "charge GPU ID PID BYTES start=NS channels=N keep=1", one per process
 * holding memory or channels (start= and channels= left out when 0), each followed by
 * the objects its reservation still counts. Under enforce=1 a process gone whose
 * reservation is kept by driver files it held is named by a live process holding one
 * (a child that inherited it), which the next module, looking by process, can find;
 * where none can be named (or the process is full, nvcarry.c) the reservation is kept
 * until its instance is deleted (keep=1), as is the charge of a process gone whose
 * files attached here are open (a child inherited them; nvhook.c's obj lines name the
 * process the charge is of, so it is not renamed). Lines that name one process are
 * merged at the import.
 */
void cgpu_ledger_dump(struct seq_file *m, struct cgpu_inst *inst)
{
	const struct cgpu_driver_files *df = READ_ONCE(cgpu.driver_files);
	struct cgpu_resmem *prev;
	struct cgpu_resobj *o;
	struct cgpu_proc *p;
	bool keep;
	pid_t pid;
	u64 start;

	mutex_lock(&inst->lock);
	list_for_each_entry(p, &inst->procs, link) {
		if (!p->bytes && !p->nchan)
			continue;
		pid = p->pid;
		start = p->start;
		keep = p->keep;
		/*
		 * Renamed only with no file attached: an attached one's process is the charge's
		 * (nvhook.c's obj lines name it); gone, its files live on elsewhere: kept.
		 */
		if (df && (cgpu_proc_reserves(p) || p->nfiles)) {
			pid_t hpid = pid;
			u64 hstart = start;

			keep |= df->holder(&hpid, &hstart, p->nfiles);
			if (!p->nfiles) {
				pid = hpid;
				start = hstart;
			}
		}
		seq_printf(m, "charge %u %s %d %llu", inst->gpu->index, inst->id, pid, p->bytes);
		if (start)
			seq_printf(m, " start=%llu", start);
		if (p->nchan)
			seq_printf(m, " channels=%u", p->nchan);
		if (keep && (cgpu_proc_reserves(p) || p->nfiles))
			seq_puts(m, " keep=1");
		seq_putc(m, '\n');
		/* Memory with a line not kept stays in the charge alone: its lines are not all here. */
		prev = NULL;
		list_for_each_entry(o, &p->resobjs, link) {
			if (!o->mem->phantom)
				cgpu_ledger_dump_obj(m, inst, pid, start, o->mem->bytes, o->client,
						     o->handle, o->parent, o->grand, o->mem == prev);
			prev = o->mem;
		}
	}
	mutex_unlock(&inst->lock);
}
