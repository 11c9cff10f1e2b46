/* SPDX-License-Identifier: MIT */
/*
 * Device memory held by the stand-in kernel driver (simdrv/) where it is loaded: the
 * simulator's physical takes and gives become NVIDIA RM objects on /dev/nvidiactl, so
 * the kernel knows who holds how much (docs/sim.md, "Memory in the stand-in driver").
 */
#ifndef SIM_RMCLIENT_H
#define SIM_RMCLIENT_H

#include <stdint.h>

#include "engine.h"

/* Whether this process's memory goes through the stand-in driver; decided once per
 * process, on first call. */
int sim_rm_loaded(void);
/* The driver's GPUs and their memory; only when loaded. */
int sim_rm_gpus(void);
uint64_t sim_rm_total(int phys);
uint64_t sim_rm_used(int phys);
/* The driver's clients holding memory on GPU phys, at most max: their creators'
 * pids as this process's pid namespace numbers them, and bytes. Returns how many
 * were read. */
int sim_rm_clients(int phys, uint32_t *pid, uint64_t *bytes, int max);
/* 0, -ENOMEM when the driver says NV_ERR_NO_MEMORY, or another -errno. */
int sim_rm_take(int phys, uint64_t bytes);
void sim_rm_give(int phys, uint64_t bytes);
/* GPU phys's engine page, mapped from its /dev/nvidiaN on first use and kept for the
 * process's life (a fork child shares it); NULL, said on stderr, when the node cannot
 * be opened or mapped. */
struct sd_engine *sim_rm_engine(int phys);

#endif
