/* SPDX-License-Identifier: MIT */
/*
 * Which simulated GPUs a process sees, and their identities
 * (docs/contracts.md section 4).
 */
#ifndef SIM_DEVICES_H
#define SIM_DEVICES_H

#include <stddef.h>

#include "state.h"

#define SIM_GPU_NAME "Tesla T4"
#define SIM_UUID_LEN 41	/* "GPU-" + 36 + NUL */

struct sim_view {
	/* NVML's devices: what NVIDIA_VISIBLE_DEVICES gives the container,
	 * in physical order as the container toolkit exposes them. */
	int n_container;
	int container[SIM_MAX_GPUS];
	/* CUDA's devices after CUDA_VISIBLE_DEVICES: ordinal -> physical. */
	int n_cuda;
	int cuda[SIM_MAX_GPUS];
};

/* Reads NVIDIA_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES for `ngpus` GPUs. */
void sim_view_load(struct sim_view *v, int ngpus);

void sim_gpu_uuid(int phys, char out[SIM_UUID_LEN]);
void sim_gpu_uuid_bytes(int phys, unsigned char out[16]);
/* "00000000:10:00.0" (NVML) or "0000:10:00.0" (CUDA). */
void sim_gpu_busid(int phys, int domain_digits, char *out, size_t len);
int sim_gpu_bus(int phys);

#endif
