/* SPDX-License-Identifier: MIT */
/*
 * The budget each of the container's GPUs has, and what is charged against
 * it. Kernel mode: the cgpu_km ledger behind /dev/cgpu, shared by every
 * process of the container and released by the kernel when a process dies.
 * Local mode (no module, or this container not registered but the
 * environment sets a budget): each process enforces the whole budget on its
 * own. Off: nothing is limited.
 *
 * A slot is one of the container's GPUs: the kernel's query slot, or in
 * local mode one entry per GPU UUID seen.
 */
#ifndef CGPU_BUDGET_H
#define CGPU_BUDGET_H

#include <stdint.h>

#include "track.h"

enum cgpu_mode { CGPU_OFF, CGPU_KERNEL, CGPU_LOCAL };

extern int cgpu_mode;	/* set by cgpu_setup() */

void ledger_init(void);
/* fork: the child's ledger starts empty, its parent's charges stay the
 * parent's (pthread_atfork, real.c). */
void ledger_fork(enum track_fork_phase phase);

/* The slot of the GPU with this UUID; order is its index in CUDA's or
 * NVML's enumeration, used when the module has no UUIDs; pos(arg) gives its
 * position in the container's GPU list where budgets differ by position.
 * -1: not one of the container's GPUs. */
int ledger_slot(const unsigned char uuid[16], int order,
		int (*pos)(void *arg), void *arg);

/* 0, or -ENOMEM when the budget would be exceeded (nothing charged). */
int ledger_charge(int slot, uint64_t bytes);
void ledger_uncharge(int slot, uint64_t bytes);
/* The budget and what the whole container holds (local: this process). */
int ledger_view(int slot, uint64_t *budget, uint64_t *used);

#endif
