/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The stand-in's nvidia-uvm va_space, the part libcuda maps RM video memory through:
 * registered GPUs, external ranges of addresses and, in them, per GPU, mappings of RM
 * memory objects, each holding a duplicate of the object in RM's client of nvidia-uvm's
 * own (nvUvmInterfaceDupMemory), given back when the last piece of its mapping goes
 * (nvUvmInterfaceFreeDupedHandle); the GPU VA spaces registered with it, each
 * duplicated (nvUvmInterfaceDupAddressSpace) until it goes
 * (nvUvmInterfaceAddressSpaceDestroy); and the channels registered with it, each
 * retained (nvUvmInterfaceRetainChannel) until it goes (nvUvmInterfaceReleaseChannel). Pure: RM is reached through struct sd_va_env, so the
 * module (uvm.c), the unit test and the fuzz target run the same code. One caller at a
 * time per va_space (the module holds the file's lock).
 */
#ifndef SIMDRV_VASPACE_H
#define SIMDRV_VASPACE_H

#include "abi.h"

/* What nvUvmInterfaceDupMemory tells of the memory it duplicated (UvmGpuMemoryInfo). */
struct sd_dup_info {
	sd_u8 sysmem;
	sd_u8 device_descendant;
	sd_u64 page_size;
	sd_u64 size;
	sd_u32 gpu;		/* the GPU its uuid names (device descendants) */
};

struct sd_va_env {
	void *ctx;
	sd_u32 ngpus;
	/* nvUvmInterfaceDupMemory with gpu's device: RM's status; *hdup and *info on NV_OK. */
	sd_u32 (*dup)(void *ctx, sd_u32 gpu, sd_u32 hClient, sd_u32 hMemory, sd_u32 *hdup,
		      struct sd_dup_info *info);
	/* nvUvmInterfaceFreeDupedHandle */
	void (*free_dup)(void *ctx, sd_u32 gpu, sd_u32 hdup);
	/* nvUvmInterfaceRetainChannel with gpu's va_space: RM's status; *token on NV_OK. */
	sd_u32 (*retain)(void *ctx, sd_u32 gpu, sd_u32 hClient, sd_u32 hChannel, void **token);
	/* nvUvmInterfaceReleaseChannel */
	void (*release)(void *ctx, void *token);
	/* nvUvmInterfaceDupAddressSpace with gpu's device: RM's status; *token on NV_OK. */
	sd_u32 (*dup_vaspace)(void *ctx, sd_u32 gpu, sd_u32 hClient, sd_u32 hVaSpace, void **token);
	/* nvUvmInterfaceAddressSpaceDestroy */
	void (*destroy_vaspace)(void *ctx, void *token);
	/* GPU memory for page tables taken (take: RM's status) or given back (sd_uvm_tables). */
	sd_u32 (*tables)(void *ctx, sd_u32 gpu, sd_u64 bytes, int take);
	/* and for managed or pageable memory moved to the GPU (sd_uvm_pages) */
	sd_u32 (*pages)(void *ctx, sd_u32 gpu, sd_u64 bytes, int take);
};

/*
 * A span of addresses [start, end] nvidia-uvm owns: a managed range, or memory resident
 * on GPU gpu (managed or, with HMM, the process's pageable memory).
 */
struct sd_va_span {
	struct sd_va_span *next;
	sd_u64 start, end;
	sd_u32 gpu;
};

/*
 * One page table or directory of a GPU's page tree in the va_space (uvm_page_tree_t):
 * level (SD_VA_PD2 .. SD_VA_PT64K) and index (the address over what one covers), made
 * by the first mapping that needs it, freed with the last.
 */
struct sd_va_table {
	struct sd_va_table *next;
	sd_u64 index;
	sd_u32 gpu, level, refs;
};

#define SD_VA_TABLE_BUCKETS	256

/* The levels of Pascal's page tree on (49 bits; the root is not modelled). */
enum { SD_VA_PD2, SD_VA_PD1, SD_VA_PD0, SD_VA_PT4K, SD_VA_PT64K, SD_VA_LEVELS };

/* A channel registered with the va_space, retained until it goes. */
struct sd_va_channel {
	struct sd_va_channel *next;
	sd_u32 gpu, hClient, hChannel;
	void *token;
};

/* One duplicate, shared by the pieces a partial unmap leaves of its mapping. */
struct sd_va_dup {
	sd_u32 refs;
	sd_u32 gpu;
	sd_u32 hdup;
};

struct sd_va_map {
	struct sd_va_map *next;
	sd_u64 start, end;	/* inclusive */
	sd_u64 page;		/* its page size: which tables it needs */
	sd_u32 gpu;
	struct sd_va_dup *dup;
};

/*
 * What a range is (uvm_va_range_type_t): an external range, which RM memory is mapped
 * into; a dynamic parallelism region (SKED reflected); a semaphore pool. The last two
 * map no RM memory: their maps are their page tables on each GPU.
 */
enum { SD_VA_EXTERNAL, SD_VA_SKED, SD_VA_POOL };

struct sd_va_range {
	struct sd_va_range *next;
	sd_u64 start, end;	/* inclusive */
	sd_u32 kind;
	struct sd_va_map *maps;
};

struct sd_va_space {
	sd_u64 flags;		/* UVM_INITIALIZE's, as uvm_va_space_create kept them */
	sd_u32 registered;	/* a bit per GPU index */
	struct sd_va_span *managed;	/* managed ranges, apart from each other and from ranges */
	struct sd_va_span *resident;	/* what of them (or of pageable memory) a GPU holds */
	struct sd_va_range *ranges;
	struct sd_va_channel *channels;
	void *gpu_va_space[32];	/* by GPU index, as registered: a duplicate, or NULL */
	struct sd_va_table *tables[SD_VA_TABLE_BUCKETS];	/* every GPU's page trees */
};

/* UVM_REGISTER_GPU, UVM_UNREGISTER_GPU (which unmaps what the GPU has): NV status. */
sd_u32 sd_va_register_gpu(struct sd_va_space *s, const struct sd_va_env *env, const sd_u8 *uuid);
sd_u32 sd_va_unregister_gpu(struct sd_va_space *s, const struct sd_va_env *env, const sd_u8 *uuid);
/*
 * UVM_REGISTER_GPU_VASPACE (the VA space duplicated), UVM_UNREGISTER_GPU_VASPACE (its
 * channels released first): NV status. UVM_UNREGISTER_GPU and the va_space's end
 * destroy it too.
 */
sd_u32 sd_va_register_gpu_vaspace(struct sd_va_space *s, const struct sd_va_env *env,
				  const struct sd_uvm_register_gpu_vaspace *p);
sd_u32 sd_va_unregister_gpu_vaspace(struct sd_va_space *s, const struct sd_va_env *env,
				    const struct sd_uvm_unregister_gpu_vaspace *p);
/*
 * UVM_REGISTER_CHANNEL (the channel retained; one registered already under its handles
 * is released again and refused, uvm_register_channel's order), UVM_UNREGISTER_CHANNEL
 * (by the handles alone): NV status. UVM_UNREGISTER_GPU and the va_space's end release its channels too.
 */
sd_u32 sd_va_register_channel(struct sd_va_space *s, const struct sd_va_env *env,
			      const struct sd_uvm_register_channel *p);
sd_u32 sd_va_unregister_channel(struct sd_va_space *s, const struct sd_va_env *env,
				const struct sd_uvm_unregister_channel *p);
/* UVM_CREATE_EXTERNAL_RANGE */
sd_u32 sd_va_create_range(struct sd_va_space *s, sd_u64 base, sd_u64 length);
/* UVM_MAP_EXTERNAL_ALLOCATION: attrs[count] of the block's perGpuAttributes[max]. */
sd_u32 sd_va_map(struct sd_va_space *s, const struct sd_va_env *env,
		 const struct sd_uvm_map_head *h, const struct sd_uvm_gpu_mapping *attrs,
		 sd_u32 max, const struct sd_uvm_map_tail *t);
/* UVM_MAP_EXTERNAL_SPARSE: a mapping of no memory, its tables at 64 KiB pages. */
sd_u32 sd_va_map_sparse(struct sd_va_space *s, const struct sd_va_env *env,
			const struct sd_uvm_map_external_sparse *p);
/*
 * UVM_MAP_DYNAMIC_PARALLELISM_REGION: a range of one GPU page on a GPU with a GPU VA
 * space, its tables at that page size. UVM_ALLOC_SEMAPHORE_POOL: a range mapped at 4 KiB
 * pages on every GPU with a GPU VA space, then and as one is registered later
 * (attrs[count] of the block's perGpuAttributes[max]; nvidia-uvm's mapping of it in
 * its own kernel VA on every registered GPU is not modelled).
 */
sd_u32 sd_va_map_dp_region(struct sd_va_space *s, const struct sd_va_env *env,
			   const struct sd_uvm_map_dp_region *p);
sd_u32 sd_va_alloc_pool(struct sd_va_space *s, const struct sd_va_env *env,
			const struct sd_uvm_pool_head *h, const struct sd_uvm_gpu_mapping *attrs,
			sd_u32 max, const struct sd_uvm_pool_tail *t);
/* UVM_FREE of a whole range of any kind: its mappings go. */
sd_u32 sd_va_free(struct sd_va_space *s, const struct sd_va_env *env, sd_u64 base, sd_u64 length);
/*
 * uvm_va_range_create_mmap: a managed range of [base, base + length) (a mmap of the
 * file; NV_ERR_UVM_ADDRESS_IN_USE over any range); sd_va_unmap_managed: what of managed
 * ranges [base, base + length) covers goes, with what a GPU held of it (the mapping's
 * end, or a part of it unmapped).
 */
sd_u32 sd_va_create_managed(struct sd_va_space *s, const struct sd_va_env *env, sd_u64 base,
			    sd_u64 length);
void sd_va_unmap_managed(struct sd_va_space *s, const struct sd_va_env *env, sd_u64 base,
			 sd_u64 length);
/* UVM_MIGRATE, served at once (no flags): NV status. */
sd_u32 sd_va_migrate(struct sd_va_space *s, const struct sd_va_env *env,
		     const struct sd_uvm_migrate *p);
/* UVM_PAGEABLE_MEM_ACCESS: HMM is on unless UVM_INITIALIZE's flags turned it off. */
static inline int sd_va_pageable(const struct sd_va_space *s)
{
	return !(s->flags & SD_UVM_INIT_FLAGS_DISABLE_HMM);
}
/* The va_space's end (its file released): every range and mapping goes. */
void sd_va_destroy(struct sd_va_space *s, const struct sd_va_env *env);
/*
 * GPU gpu's UUID (docs/contracts.md section 4: GPU-c6a1d000-0000-4000-8000-%012d, the
 * index's decimal digits read as hex ones), binary as NvProcessorUuid.
 */
static inline void sd_gpu_uuid(sd_u32 gpu, sd_u8 *uuid)
{
	static const sd_u8 head[10] = { 0xc6, 0xa1, 0xd0, 0x00, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00 };
	sd_u32 i;

	for (i = 0; i < sizeof(head); i++)
		uuid[i] = head[i];
	for (i = SD_UUID_LEN; i > sizeof(head); i--) {
		uuid[i - 1] = (sd_u8)((((gpu / 10) % 10) << 4) | (gpu % 10));
		gpu /= 100;
	}
}

/* The GPU of a UUID, -1: none of ngpus. */
int sd_gpu_of_uuid(const sd_u8 *uuid, sd_u32 ngpus);

#endif
