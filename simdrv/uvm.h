/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef SIMDRV_UVM_H
#define SIMDRV_UVM_H

#include <linux/types.h>

struct class;

/*
 * nvidia-uvm's region and nodes, made in cls (which outlives them), for ngpus GPUs:
 * the release's UVM_MAP_EXTERNAL_ALLOCATION block holds max_gpus attributes and its
 * UvmGpuMemoryInfo has deviceDescendant at devdesc_off. 0 or -errno.
 */
int simdrv_uvm_init(struct class *cls, u32 ngpus, u32 max_gpus, u32 devdesc_off);
void simdrv_uvm_exit(void);

/* main.c: nvidia.ko's half, by NVIDIA's names (nv_uvm_interface.h). */
void *simdrv_uvm_device(u32 gpu);
u32 nvUvmInterfaceDupMemory(void *device, u32 hClient, u32 hPhysMemory, u32 *hDupMemory, void *pGpuMemoryInfo);
u32 nvUvmInterfaceFreeDupedHandle(void *device, u32 hPhysHandle);

#endif
