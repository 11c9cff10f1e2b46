/* SPDX-License-Identifier: MIT */
/*
 * The simulated node without the stand-in driver: one file, mmap'd MAP_SHARED by every
 * process that uses the simulated driver, so processes in different containers (with
 * private /dev/shm) share the same GPUs when the file is bind-mounted into them. Where
 * the stand-in driver is loaded it holds all of this (memory, processes, each GPU's
 * engine) and no file is used.
 */
#ifndef SIM_STATE_H
#define SIM_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "engine.h"
#include "memsize.h"

#define SIM_MAX_GPUS 16
#define SIM_MAX_SLOTS 1024
#define SIM_DEFAULT_GPUS 4
#define SIM_DEFAULT_MEM_MIB 15109
#define SIM_DEFAULT_STATE "/run/cgpu-sim/state"
/*
 * What a context takes in the driver (*ours*; docs/sim.md): with the stand-in driver,
 * creating a context allocates this much video memory as an RM object of the process,
 * as libcuda does for its own buffers; CGPU_SIM_CTX_RESERVE_MIB overrides.
 */
#define SIM_CTX_RESERVE_MIB 64

struct sim_gpu {
	uint64_t total;		/* bytes */
	uint64_t used;		/* bytes held by live processes */
	struct sd_engine engine;	/* updated by compare-and-swap, without the lock */
};

/* One per process using the simulator; its liveness is an OFD lock. */
struct sim_slot {
	int32_t pid;		/* for display only: PIDs differ across namespaces */
	uint32_t in_use;
	uint64_t used[SIM_MAX_GPUS];
};

struct sim_state {
	uint64_t magic;
	uint32_t version;
	uint32_t ngpus;
	struct sim_gpu gpu[SIM_MAX_GPUS];
	struct sim_slot slot[SIM_MAX_SLOTS];
};

/* Maps the state, creating it on first use; nothing where the stand-in driver is
 * loaded. Returns 0 or -errno; idempotent, and redone in a fork child, which must not
 * use its parent's slot. */
int sim_state_open(void);
struct sim_state *sim_state(void);
/* Excludes every other thread of every process using the file. */
void sim_state_lock(void);
void sim_state_unlock(void);

/* The node's GPUs, and the memory of GPU `phys`: total and what all processes
 * hold. */
int sim_gpu_count(void);
void sim_phys_info(int phys, uint64_t *total, uint64_t *used);
/* The processes holding memory on GPU `phys`, at most max: pids (the driver's
 * clients, as this process's pid namespace sees them; else the state file's
 * slots, each as its own namespace numbers it) and bytes. Returns how many. */
int sim_phys_users(int phys, uint32_t *pid, uint64_t *bytes, int max);
/* Physical memory of GPU `phys`: objects of the stand-in driver where it is
 * loaded (rmclient.c); else the state file's ledger, charged to this process's
 * slot (taken on first use). */
int sim_phys_reserve(int phys, uint64_t bytes);	/* 0 or -ENOMEM */
/* Bytes a context takes on creation: SIM_CTX_RESERVE_MIB with the stand-in driver, else 0. */
uint64_t sim_ctx_reserve(void);
void sim_phys_release(int phys, uint64_t bytes);
/* Frees what processes that died still held; call with the lock held. */
void sim_reap_dead_locked(void);

/* GPU phys's engine: the driver's page where it is loaded, else the state file's; NULL
 * (said on stderr) when the driver's cannot be mapped. */
struct sd_engine *sim_engine(int phys);

uint64_t sim_now_ns(void);

#endif
