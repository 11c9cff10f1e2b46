/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef SIMDRV_UVM_H
#define SIMDRV_UVM_H

#include <linux/types.h>

struct class;

/*
 * The stand-in's two modules, as NVIDIA's driver has them: nvidia.ko (main.c) and
 * nvidia-uvm.ko (uvm.c), which uses nvidia.ko's exports below and so cannot be loaded
 * without it, nor nvidia.ko unloaded under it.
 */

/*
 * What nvidia-uvm learns from nvidia.ko at its load (the real one asks nvidia.ko's
 * interface for each GPU's info): the class its nodes are made in (nvidia.ko's, which
 * outlives them), the GPUs, and the release's layouts: the UVM_MAP_EXTERNAL_ALLOCATION
 * block holds max_gpus attributes and UvmGpuMemoryInfo has deviceDescendant at
 * devdesc_off.
 */
struct simdrv_uvm_node {
	struct class *cls;
	u32 ngpus, max_gpus, devdesc_off;
};
void simdrv_uvm_node(struct simdrv_uvm_node *n);

/*
 * GPU memory for nvidia-uvm's page tables, taken (take: RM's status) or given back
 * (sd_uvm_tables): the stand-in's own call, where the real nvidia-uvm takes root chunks
 * through nvUvmInterfacePmaAllocPages and packs its tables in them.
 */
u32 simdrv_uvm_tables(u32 gpu, u64 bytes, bool take);
/* and for managed or pageable memory nvidia-uvm moves to the GPU */
u32 simdrv_uvm_pages(u32 gpu, u64 bytes, bool take);

/*
 * nvidia-uvm's own handlers, by NVIDIA's names and arguments (uvm_api.h: the kernel copy
 * of the parameters and the file), not exported: found by kallsyms, as cgpu_km finds
 * NVIDIA's.
 */
struct file;
struct sd_uvm_map_external_sparse;
struct sd_uvm_free;
u32 uvm_api_map_external_sparse(struct sd_uvm_map_external_sparse *params, struct file *filp);
u32 uvm_api_free(struct sd_uvm_free *params, struct file *filp);
struct sd_uvm_map_dp_region;
struct sd_uvm_pool_head;
u32 uvm_api_map_dynamic_parallelism_region(struct sd_uvm_map_dp_region *params, struct file *filp);
u32 uvm_api_alloc_semaphore_pool(struct sd_uvm_pool_head *params, struct file *filp);
struct address_space;
struct mm_struct;
struct vm_area_struct;
struct sd_va_space;
u32 uvm_va_space_create(struct address_space *mapping, struct sd_va_space **va_space_ptr, u64 flags);
u32 uvm_va_range_create_mmap(struct sd_va_space *va_space, struct mm_struct *mm,
			     struct vm_area_struct *vma, void **out);

/* nvidia.ko's half, by NVIDIA's names (nv_uvm_interface.h). */
void *simdrv_uvm_device(u32 gpu);
u32 nvUvmInterfaceDupMemory(void *device, u32 hClient, u32 hPhysMemory, u32 *hDupMemory, void *pGpuMemoryInfo);
u32 nvUvmInterfaceFreeDupedHandle(void *device, u32 hPhysHandle);
u32 nvUvmInterfaceRetainChannel(void *vaSpace, u32 hClient, u32 hChannel, void **retainedChannel, void *channelInstanceInfo);
void nvUvmInterfaceReleaseChannel(void *retainedChannel);
u32 nvUvmInterfaceDupAddressSpace(void *device, u32 hUserClient, u32 hUserVASpace, void **vaSpace, void *vaSpaceInfo);
void nvUvmInterfaceAddressSpaceDestroy(void *vaSpace);

#endif
