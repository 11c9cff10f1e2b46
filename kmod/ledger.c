// SPDX-License-Identifier: GPL-2.0
/*
 * The memory ledger of one instance: its limit, its total and what each attached file
 * holds. The checks are lib/rules.c's; here they run under the instance's lock.
 */
#include <linux/seq_file.h>
#include "cgpu.h"
#include "lib/rules.h"

void cgpu_ledger_link(struct cgpu_inst *inst, struct cgpu_holding *h)
{
	spin_lock(&inst->lock);
	list_add_tail(&h->link, &inst->holdings);
	spin_unlock(&inst->lock);
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

int cgpu_ledger_charge(struct cgpu_inst *inst, struct cgpu_holding *h, u64 bytes,
		       u64 *used, u64 *memsize)
{
	enum cgpu_rc rc;

	spin_lock(&inst->lock);
	rc = cgpu_check_charge(inst->used, inst->memsize, bytes);
	if (rc == CGPU_OK) {
		inst->used += bytes;
		h->bytes += bytes;
	}
	*used = inst->used;
	*memsize = inst->memsize;
	spin_unlock(&inst->lock);
	return cgpu_errno(rc);
}

int cgpu_ledger_uncharge(struct cgpu_inst *inst, struct cgpu_holding *h, u64 bytes,
			 u64 *used, u64 *memsize)
{
	enum cgpu_rc rc;

	spin_lock(&inst->lock);
	rc = cgpu_check_uncharge(h->bytes, bytes);
	if (rc == CGPU_OK) {
		inst->used -= bytes;
		h->bytes -= bytes;
	}
	*used = inst->used;
	*memsize = inst->memsize;
	spin_unlock(&inst->lock);
	return cgpu_errno(rc);
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
 * meminfo: "Free: N", then one "PID: P Mem: M" line per process holding memory, the
 * files a process opened merged into one line. Quadratic in the files attached to
 * one container, which are a handful per process.
 */
void cgpu_ledger_show(struct seq_file *m, struct cgpu_inst *inst)
{
	struct cgpu_holding *h, *o;

	spin_lock(&inst->lock);
	seq_printf(m, "Free: %llu\n", inst->memsize - inst->used);
	list_for_each_entry(h, &inst->holdings, link) {
		u64 sum = 0;

		if (!h->bytes || cgpu_pid_shown_before(inst, h))
			continue;
		o = h;
		list_for_each_entry_from(o, &inst->holdings, link)
			if (o->pid == h->pid)
				sum += o->bytes;
		seq_printf(m, "PID: %d Mem: %llu\n", h->pid, sum);
	}
	spin_unlock(&inst->lock);
}
