// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "budget.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"
#include "config.h"
#include "gate.h"
#include "link.h"

int cgpu_mode = CGPU_OFF;

static struct cgpu_config cfg;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Local mode. */
static struct local_slot {
	unsigned char uuid[16];
	uint64_t budget;
	uint64_t used;		/* atomic */
} local[CGPU_MAX_GPUS];
static int nlocal;

static int said_local, said_error, said_attach, said_ioctl, said_disable;

/*
 * Kernel mode with cgpu_km charging at the NVIDIA driver's boundary (enforce=1): the
 * driver's allocations are charged there, so this process charges nothing (else
 * every byte would count twice) and keeps the view and the gate. Decided at the
 * first attach and kept for the process's life: a charge and its uncharge are then
 * always made the same way, whatever a later hot update brings.
 */
static int driver_charged;

static const char *get_env(const char *name)
{
	return getenv(name);
}

void ledger_init(void)
{
	int err;

	cgpu_config_parse(&cfg, get_env);
	/*
	 * A registered container's limits are what the runtime registered, never a
	 * variable its processes can set (docker exec -e): once attached,
	 * CGPU_DISABLE is not looked at.
	 */
	err = link_attach();
	if (err == 0) {
		if (cfg.disabled)
			cgpu_say_once(&said_disable,
				      "cgpu: CGPU_DISABLE is ignored: this container's limits are cgpu_km's, set when it started");
		cgpu_mode = CGPU_KERNEL;
		driver_charged = link_slots() &&
				 (link_query(0)->flags & CGPU_QUERY_DRIVER_CHARGED);
		return;
	}
	if (cfg.disabled) {
		cgpu_mode = CGPU_OFF;
		return;
	}
	if (err != -ENOENT && err != -ENXIO && err != -ENODEV)
		cgpu_say_once(&said_attach, "cgpu: %s: attach failed: %s",
			      CGPU_DEVICE_PATH, strerror(-err));
	if (cfg.error[0])
		cgpu_say_once(&said_error,
			      "cgpu: %s; refusing all GPU memory until it is fixed",
			      cfg.error);
	if (!cfg.n && !cfg.error[0]) {
		cgpu_mode = CGPU_OFF;
		return;
	}
	cgpu_mode = CGPU_LOCAL;
	cgpu_say_once(&said_local,
		      "cgpu: %s unavailable; enforcing the GPU memory budget from the environment in this process only",
		      CGPU_DEVICE_PATH);
}

/*
 * The lock is held over fork so that the child's copy of the table it guards
 * is whole: a leaf lock (nothing is taken under it), it comes last in fork's
 * order and cannot deadlock the forking thread.
 */
void ledger_fork(enum track_fork_phase phase)
{
	if (!track_fork_lock(phase, &lock))
		return;
	/* The parent's charges stay on the parent's file. */
	link_after_fork_child();
	gate_after_fork_child();
	for (int i = 0; i < nlocal; i++)
		local[i].used = 0;
}

/* Kernel mode: attached, attaching first in a fork child. */
static int kernel_ready(void)
{
	int err = link_ready();

	if (err)
		cgpu_say_once(&said_attach,
			      "cgpu: %s: re-attach after fork failed; refusing GPU memory",
			      CGPU_DEVICE_PATH);
	return err;
}

static int zero_uuid(const unsigned char *u)
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

static int kernel_slot(const unsigned char uuid[16], int order)
{
	int any_uuid = 0;

	unsigned kn = link_slots();

	for (unsigned i = 0; i < kn; i++) {
		const unsigned char *u = link_query(i)->uuid;

		if (zero_uuid(u))
			continue;
		any_uuid = 1;
		if (!memcmp(u, uuid, 16))
			return (int)i;
	}
	return !any_uuid && order >= 0 && (unsigned)order < kn ? order : -1;
}

/* Callers cache the answer per device, so the position (which may need
 * NVML, called with no lock held) is looked up about once per GPU. */
static int local_slot(const unsigned char uuid[16], int (*pos)(void *arg),
		      void *arg)
{
	int i, p = cgpu_config_uniform(&cfg) ? 0 : pos(arg);

	pthread_mutex_lock(&lock);
	for (i = 0; i < nlocal; i++)
		if (!memcmp(local[i].uuid, uuid, 16))
			break;
	if (i == nlocal && nlocal < CGPU_MAX_GPUS) {
		memcpy(local[i].uuid, uuid, 16);
		local[i].budget = p < 0 ? 0 : cgpu_config_budget(&cfg, p);
		nlocal++;
	}
	pthread_mutex_unlock(&lock);
	return i < CGPU_MAX_GPUS ? i : -1;
}

int ledger_slot(const unsigned char uuid[16], int order,
		int (*pos)(void *arg), void *arg)
{
	switch (cgpu_mode) {
	case CGPU_KERNEL:
		return kernel_slot(uuid, order);
	case CGPU_LOCAL:
		return local_slot(uuid, pos, arg);
	}
	return -1;
}

static int kernel_charge(unsigned long req, int slot, uint64_t bytes)
{
	struct cgpu_charge c = { .abi_version = CGPU_ABI_VERSION,
				 .gpu = link_query((unsigned)slot)->gpu, .bytes = bytes };
	int err;

	if (kernel_ready())
		return -ENOMEM;
	err = req == CGPU_IOC_CHARGE ? link_call(req, &c) : link_uncharge((unsigned)slot, bytes);
	if (err && err != -ENOMEM)
		cgpu_say_once(&said_ioctl, "cgpu: %s: %s: %s", CGPU_DEVICE_PATH,
			      req == CGPU_IOC_CHARGE ? "charge" : "uncharge",
			      strerror(-err));
	return err;
}

int ledger_charge(int slot, uint64_t bytes)
{
	struct local_slot *s;
	uint64_t used;

	/* The module refuses 0 bytes; there is nothing to charge. */
	if (bytes == 0 || driver_charged)
		return 0;
	if (cgpu_mode == CGPU_KERNEL)
		return kernel_charge(CGPU_IOC_CHARGE, slot, bytes) ? -ENOMEM : 0;
	s = &local[slot];
	used = __atomic_load_n(&s->used, __ATOMIC_RELAXED);
	do {
		if (bytes > s->budget || used > s->budget - bytes)
			return -ENOMEM;
	} while (!__atomic_compare_exchange_n(&s->used, &used, used + bytes, 1,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return 0;
}

void ledger_uncharge(int slot, uint64_t bytes)
{
	if (bytes == 0 || driver_charged)
		return;
	if (cgpu_mode == CGPU_KERNEL)
		kernel_charge(CGPU_IOC_UNCHARGE, slot, bytes);
	else
		__atomic_fetch_sub(&local[slot].used, bytes, __ATOMIC_RELAXED);
}

int ledger_view(int slot, uint64_t *budget, uint64_t *used)
{
	struct cgpu_query q = { .abi_version = CGPU_ABI_VERSION,
				.slot = (unsigned)slot };

	if (cgpu_mode == CGPU_LOCAL) {
		*budget = local[slot].budget;
		*used = __atomic_load_n(&local[slot].used, __ATOMIC_RELAXED);
		return 0;
	}
	if (kernel_ready() || link_call(CGPU_IOC_QUERY, &q))
		return -1;
	*budget = q.memsize;
	*used = q.used;
	return 0;
}
