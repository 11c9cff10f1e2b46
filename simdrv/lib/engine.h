/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The simulated GPU's engine, *ours* and not NVIDIA's ABI (docs/sim.md, "Device
 * timeline"): one page per GPU that the stand-in driver gives to whoever maps its
 * /dev/nvidiaN (offset 0, one page, shared), as a real libcuda maps a GPU's doorbells
 * from the same node. Every process holding that GPU's node shares it, and nothing else
 * can reach it: a container given GPU 1 only queues its work on GPU 1's engine.
 */
#ifndef SIMDRV_ENGINE_H
#define SIMDRV_ENGINE_H

#include "types.h"

struct sd_engine {
	/* CLOCK_MONOTONIC ns at which the work queued on the GPU ends; a launch moves it
	 * on by one compare-and-swap (sim/src/cuda_exec.c). */
	sd_u64 busy_until;
};

#endif
