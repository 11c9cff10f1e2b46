/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The checks behind every write to the control tree and every ledger change (the
 * table in docs/contracts.md). Each is a pure function of the values it is given, so
 * the callers hold whatever lock makes those values current.
 */
#ifndef CGPU_LIB_RULES_H
#define CGPU_LIB_RULES_H
#include "types.h"

/* A charge of bytes on a ledger holding used of memsize. */
enum cgpu_rc cgpu_check_charge(cgpu_u64 used, cgpu_u64 memsize, cgpu_u64 bytes);
/* An uncharge of bytes from one file that holds held. */
enum cgpu_rc cgpu_check_uncharge(cgpu_u64 held, cgpu_u64 bytes);
/* A new memsize for an instance whose processes hold used. */
enum cgpu_rc cgpu_check_memsize(cgpu_u64 memsize, cgpu_u64 used);
enum cgpu_rc cgpu_check_default_memsize(cgpu_u64 v);

/* A GPU whose instances number ninst and whose weights sum to weight_used. */
enum cgpu_rc cgpu_check_max_inst(cgpu_u64 v, cgpu_u32 ninst, cgpu_u32 weight_used);
enum cgpu_rc cgpu_check_policy(cgpu_u64 v);
enum cgpu_rc cgpu_check_prio_ratio(cgpu_u64 v);
/* 0 or 1: highprio and upgrade. */
enum cgpu_rc cgpu_check_flag(cgpu_u64 v);
/* Changing one instance's weight from old to v. */
enum cgpu_rc cgpu_check_weight(cgpu_u64 v, cgpu_u32 old, cgpu_u32 weight_used, cgpu_u32 max_inst);
/* Adding one more instance of the given weight. */
enum cgpu_rc cgpu_check_add(cgpu_u64 weight, cgpu_u32 ninst, cgpu_u32 weight_used,
			    cgpu_u32 max_inst);
/*
 * The weight of an instance added without one: 1, or 0 when no weight is free (SPEC:
 * "when 0, a new container gets weight 0 and no compute").
 */
cgpu_u32 cgpu_default_weight(cgpu_u32 weight_used, cgpu_u32 max_inst);

/*
 * What a container is charged for a GPU VA range of size bytes it reserves through RM
 * (NV50_MEMORY_VIRTUAL): the most page tables RM can hold for it, whatever its flags
 * (docs/kmod.md, "VA ranges"). Per level of the MMU format of Pascal on (and Hopper's
 * one more), the tables a range of that size can touch placed anywhere (its size over
 * what one table covers, and one more at each edge), at the level's table size: 4 KiB
 * for the 4 KiB-page tables (2 MiB each), 256 bytes for the 64 KiB-page tables (2 MiB
 * each), 4 KiB for each directory (512 MiB, 256 GiB, 128 TiB, 64 PiB); rounded up to the
 * 64 KiB chunks RM's page-table pool takes from the GPU (pool_alloc.c).
 */
cgpu_u64 cgpu_range_tables(cgpu_u64 size);

/*
 * What a container is charged for each mapping nvidia-uvm makes of its memory of size
 * bytes (UVM_MAP_EXTERNAL_ALLOCATION, followed as a duplicate of the memory), and for a
 * dynamic parallelism region or each of a semaphore pool's mappings of size bytes: the
 * most page tables nvidia-uvm can make for it (docs/kmod.md, "nvidia-uvm's page tables").
 * The mapping is at most the memory's size, placed anywhere, at any page size the
 * caller's alignment picks (535's uvm_map_external.c goes down to 4 KiB pages): per
 * level, as for a range, 4 KiB for each table of 4 KiB pages (2 MiB each), the biggest
 * of the leaf tables, and 4 KiB for each directory (512 MiB, 256 GiB, 128 TiB, 64 PiB);
 * not rounded: nvidia-uvm takes them in pieces of its own chunks (uvm_mmu.c).
 */
cgpu_u64 cgpu_map_tables(cgpu_u64 size);

/*
 * What a container is charged for a sparse mapping nvidia-uvm makes of length bytes of
 * an external range (UVM_MAP_EXTERNAL_SPARSE): the page tables of 64 KiB pages over all
 * of it, which nvidia-uvm makes at once (535's uvm_map_external_sparse_on_gpu), counted
 * as cgpu_map_tables counts: 256 bytes for each table of 64 KiB pages (2 MiB each),
 * 4 KiB for each directory, one more of each at each edge.
 */
cgpu_u64 cgpu_sparse_tables(cgpu_u64 length);

#endif
