// SPDX-License-Identifier: GPL-2.0
/*
 * The memory ledger of one instance: its limit, its total and what each attached file
 * holds. The checks are lib/rules.c's; here they run under the instance's lock.
 */
#include <linux/seq_file.h>
#include "cgpu.h"
#include "lib/rules.h"

/*
 * A process attaching again after a hot update takes back what it held: its
 * reservation becomes this file's holding, so nothing is charged twice.
 */
void cgpu_ledger_link(struct cgpu_inst *inst, struct cgpu_holding *h)
{
	struct cgpu_holding *r, *mine = NULL;

	spin_lock(&inst->lock);
	list_for_each_entry(r, &inst->holdings, link) {
		if (r->reserved && r->pid == h->pid) {
			mine = r;
			break;
		}
	}
	if (mine) {
		h->bytes = mine->bytes;
		list_replace(&mine->link, &h->link);
	} else {
		list_add_tail(&h->link, &inst->holdings);
	}
	spin_unlock(&inst->lock);
	cgpu_free(mine);
}

/* Releases everything h holds: the file is closing. */
void cgpu_ledger_unlink(struct cgpu_inst *inst, struct cgpu_holding *h)
{
	spin_lock(&inst->lock);
	/* used is the sum of the holdings, so this cannot wrap. */
	inst->used -= h->bytes;
	h->bytes = 0;
	list_del(&h->link);
	spin_unlock(&inst->lock);
}

/*
 * A charge (or uncharge) on the file's holding, read under the lock because HANDOVER
 * replaces it. A frozen module changes no ledger: EAGAIN, the caller retries on the
 * module that comes next.
 */
static int cgpu_ledger_move(struct cgpu_slot *s, u64 bytes, bool charge, u64 *used,
			    u64 *memsize)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_holding *h;
	enum cgpu_rc rc;
	int err;

	spin_lock(&inst->lock);
	h = s->h;
	if (READ_ONCE(cgpu.state) != CGPU_RUNNING) {
		err = -EAGAIN;
	} else {
		rc = charge ? cgpu_check_charge(inst->used, inst->memsize, bytes) :
			      cgpu_check_uncharge(h->bytes, bytes);
		if (rc == CGPU_OK && charge) {
			inst->used += bytes;
			h->bytes += bytes;
		} else if (rc == CGPU_OK) {
			inst->used -= bytes;
			h->bytes -= bytes;
		}
		err = cgpu_errno(rc);
	}
	*used = inst->used;
	*memsize = inst->memsize;
	spin_unlock(&inst->lock);
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
 * HANDOVER: what the file holds stays on the instance as its process's reservation
 * (merged with one the process's other files left), and the file goes on with fresh,
 * an empty holding. False when it held nothing (fresh is not used).
 */
bool cgpu_ledger_reserve(struct cgpu_slot *s, struct cgpu_holding *fresh)
{
	struct cgpu_inst *inst = s->inst;
	struct cgpu_holding *h = s->h, *r, *mine = NULL;

	spin_lock(&inst->lock);
	if (!h->bytes) {
		spin_unlock(&inst->lock);
		return false;
	}
	list_for_each_entry(r, &inst->holdings, link) {
		if (r->reserved && r->pid == h->pid) {
			mine = r;
			break;
		}
	}
	fresh->pid = h->pid;
	list_add_tail(&fresh->link, &inst->holdings);
	s->h = fresh;
	if (mine) {
		mine->bytes += h->bytes;
		list_del(&h->link);
		cgpu_free(h);
	} else {
		h->reserved = true;
	}
	spin_unlock(&inst->lock);
	return true;
}

/*
 * A `charge` line of an import: bytes held by pid, a reservation until the process
 * attaches. Merged into the pid's reservation if it has one; else *spare is used and
 * set to NULL. ENOMEM past memsize, nothing changed.
 */
int cgpu_ledger_import(struct cgpu_inst *inst, pid_t pid, u64 bytes,
		       struct cgpu_holding **spare)
{
	struct cgpu_holding *r, *mine = NULL;
	enum cgpu_rc rc;

	spin_lock(&inst->lock);
	rc = cgpu_check_charge(inst->used, inst->memsize, bytes);
	if (rc == CGPU_OK) {
		list_for_each_entry(r, &inst->holdings, link) {
			if (r->reserved && r->pid == pid) {
				mine = r;
				break;
			}
		}
		if (!mine) {
			mine = *spare;
			*spare = NULL;
			mine->pid = pid;
			mine->reserved = true;
			list_add_tail(&mine->link, &inst->holdings);
		}
		mine->bytes += bytes;
		inst->used += bytes;
	}
	spin_unlock(&inst->lock);
	return cgpu_errno(rc);
}

/* Releases every reservation (their processes did not come back); how many. */
unsigned int cgpu_ledger_reclaim(struct cgpu_inst *inst)
{
	struct cgpu_holding *h, *n;
	unsigned int count = 0;

	spin_lock(&inst->lock);
	list_for_each_entry_safe(h, n, &inst->holdings, link) {
		if (!h->reserved)
			continue;
		inst->used -= h->bytes;
		list_del(&h->link);
		cgpu_free(h);
		count++;
	}
	spin_unlock(&inst->lock);
	return count;
}

void cgpu_ledger_reserved(struct cgpu_inst *inst, unsigned int *n, u64 *bytes)
{
	struct cgpu_holding *h;

	spin_lock(&inst->lock);
	list_for_each_entry(h, &inst->holdings, link) {
		if (h->reserved) {
			(*n)++;
			*bytes += h->bytes;
		}
	}
	spin_unlock(&inst->lock);
}

void cgpu_ledger_read(struct cgpu_inst *inst, u64 *used, u64 *memsize)
{
	spin_lock(&inst->lock);
	*used = inst->used;
	*memsize = inst->memsize;
	spin_unlock(&inst->lock);
}

int cgpu_ledger_set_memsize(struct cgpu_inst *inst, u64 memsize)
{
	enum cgpu_rc rc;

	spin_lock(&inst->lock);
	rc = cgpu_check_memsize(memsize, inst->used);
	if (rc == CGPU_OK)
		inst->memsize = memsize;
	spin_unlock(&inst->lock);
	return cgpu_errno(rc);
}

/* An earlier file of h's process holds memory: its line covers h too. */
static bool cgpu_pid_shown_before(struct cgpu_inst *inst, struct cgpu_holding *h)
{
	struct cgpu_holding *o;

	list_for_each_entry(o, &inst->holdings, link) {
		if (o == h)
			return false;
		if (o->pid == h->pid && o->bytes)
			return true;
	}
	return false;
}

/*
 * One line per process holding memory, its files (and reservation) merged: meminfo's
 * "PID: P Mem: M" or the hot update's "charge GPU ID P M". Quadratic in the files
 * attached to one container, which are a handful per process. inst->lock held.
 */
static void cgpu_ledger_per_pid(struct seq_file *m, struct cgpu_inst *inst, bool dump)
{
	struct cgpu_holding *h, *o;

	list_for_each_entry(h, &inst->holdings, link) {
		u64 sum = 0;

		if (!h->bytes || cgpu_pid_shown_before(inst, h))
			continue;
		o = h;
		list_for_each_entry_from(o, &inst->holdings, link)
			if (o->pid == h->pid)
				sum += o->bytes;
		if (dump)
			seq_printf(m, "charge %u %s %d %llu\n", inst->gpu->index, inst->id, h->pid,
				   sum);
		else
			seq_printf(m, "PID: %d Mem: %llu\n", h->pid, sum);
	}
}

/* meminfo: "Free: N", then a line per process holding memory. */
void cgpu_ledger_show(struct seq_file *m, struct cgpu_inst *inst)
{
	spin_lock(&inst->lock);
	seq_printf(m, "Free: %llu\n", inst->memsize - inst->used);
	cgpu_ledger_per_pid(m, inst, false);
	spin_unlock(&inst->lock);
}

void cgpu_ledger_dump(struct seq_file *m, struct cgpu_inst *inst)
{
	spin_lock(&inst->lock);
	cgpu_ledger_per_pid(m, inst, true);
	spin_unlock(&inst->lock);
}
