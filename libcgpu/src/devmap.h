/* SPDX-License-Identifier: MIT */
/* Which of the container's GPUs (ledger slot) a CUDA device or an NVML
 * handle is, matched by UUID; cached, so later calls cost one load. */
#ifndef CGPU_DEVMAP_H
#define CGPU_DEVMAP_H

#include "hook.h"
#include "track.h"

/* -1: not one of the container's GPUs (or not limited). */
int devmap_cuda(CUdevice dev);
int devmap_nvml(nvmlDevice_t d);
void devmap_fork(enum track_fork_phase phase);

#endif
