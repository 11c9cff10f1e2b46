/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The stand-in driver's pure logic: the ioctl entry from the escape number on, the RM
 * object tree (clients, devices, subdevices, video memory), handle rules and the
 * physical memory of each GPU. It touches user memory, the lock and the caller's open
 * files only through struct sd_env, so the kernel glue (main.c), the unit test and the
 * fuzz target run the very same code.
 */
#ifndef SIMDRV_RM_H
#define SIMDRV_RM_H

#include "abi.h"

#define SD_MAX_GPUS		16	/* docs/contracts.md section 4 */
#define SD_PAGE_4K		0x1000ULL
#define SD_PAGE_BIG		0x10000ULL	/* 64 KiB, the big page of Turing on */
#define SD_PAGE_HUGE		0x200000ULL
#define SD_PMA_GRANULE		SD_PAGE_BIG	/* RM's physical allocator's least page */
#define SD_PAGE_512M		0x20000000ULL
/* Handle generators of RM's resource server. */
#define SD_CLIENT_HANDLE_BASE	0xc1d00000u
#define SD_CLIENT_HANDLE_RANGE	0x00100000u
#define SD_CLIENT_INTERNAL_HANDLE_BASE 0xc1e00000u	/* the driver's own clients */
#define SD_OBJ_HANDLE_BASE	0xcaf00000u
#define SD_OBJ_HANDLE_RANGE	0x00080000u

/* What an entry call returns, mapped to errno by the caller. */
enum sd_rc {
	SD_OK = 0,
	SD_RC_INVAL,	/* the real driver's -EINVAL: bad size, wrong node, unknown escape */
	SD_RC_NOMEM,	/* no kernel memory for the parameter copy */
	SD_RC_FAULT,	/* a parameter block that cannot be read or written */
};

struct sd_file;

struct sd_env {
	void *ctx;
	/* Nonzero when the user range cannot be read/written. */
	int (*copy_in)(void *ctx, void *dst, sd_u64 uaddr, sd_u32 len);
	int (*copy_out)(void *ctx, sd_u64 uaddr, const void *src, sd_u32 len);
	/* Whether the calling process holds /dev/nvidia<gpu> open. */
	int (*gpu_open)(void *ctx, sd_u32 gpu);
	/* The calling process's id in the node's own namespace (RM's osGetCurrentProcess). */
	sd_u32 (*caller)(void *ctx);
	/*
	 * The node's control file open as the caller's descriptor fd, a reference taken in
	 * *ref (the glue lets it go when the registering file is released); NULL if fd is
	 * none. ctl_put lets go of one not kept.
	 */
	struct sd_file *(*ctl_get)(void *ctx, int fd, void **ref);
	void (*ctl_put)(void *ctx, void *ref);
	/* The node's one lock; never held across copy_in/copy_out. */
	void (*lock)(void *ctx);
	void (*unlock)(void *ctx);
	/*
	 * The RM escapes, on the kernel's copy of their block: sd_rm_ioctl, called through
	 * the module's function named as NVIDIA's (rm_ioctl), which cgpu_km hooks.
	 */
	enum sd_rc (*rm_ioctl)(void *ctx, struct sd_file *f, sd_u32 nr, void *arg, sd_u32 size);
	/*
	 * NV_ESC_EXPORT_TO_DMABUF_FD on GPU file f, its block checked for size: the status,
	 * and p->fd the new dma-buf's descriptor. The module's nv_dma_buf_export (NVIDIA's
	 * name, which cgpu_km hooks) makes the dma-buf around sd_dmabuf_dup's hold. Called
	 * without the node's lock.
	 */
	sd_u32 (*dmabuf_export)(void *ctx, struct sd_file *f, struct sd_export_dmabuf *p);
};

/* Provided by the build: kzalloc(GFP_KERNEL_ACCOUNT) in the module, calloc in tests. */
void *sd_zalloc(unsigned long size);
void sd_free(void *p);

/*
 * Physical memory on one GPU, named by the object that allocated it and by its
 * duplicates (RM's memory descriptor with its DupCount): the GPU gets it back with the
 * last of them.
 */
struct sd_mem {
	sd_u32 refs;
	sd_u32 gpu;
	sd_u64 bytes;		/* whole pages: the memory descriptor's size, what RM reports */
	/*
	 * What the GPU holds for it: RM's physical allocator (PMA) takes no less than
	 * 64 KiB pages, so memory of 4 KiB pages takes bytes rounded up to 64 KiB
	 * (_vidmemPmaAllocate, video_mem.c: "Minimum granularity of PMA is 64K"), while
	 * the descriptor, and every figure RM gives of the object, keeps bytes.
	 */
	sd_u64 held;
	sd_u64 page;		/* the page size RM took */
	/*
	 * The object its bytes are listed under per process: the one that allocated it,
	 * then, once that is freed, one still naming it. Each memory is listed once, so
	 * the processes' figures add up to the GPU's, less the driver's own.
	 */
	const struct sd_obj *listed;
	/*
	 * The driver's own memory for a channel group or channel, named by it (and a group's
	 * duplicates): in the GPU's used figure, in no process's, and no memory object.
	 */
	int internal;
	/*
	 * System memory (NV01_MEMORY_SYSTEM) allocated under a device of gpu: host pages, in
	 * no GPU's used figure and no process's, that nvidia-uvm can map (its page tables
	 * are the mapping GPU's).
	 */
	int sysmem;
};

/*
 * What the driver holds for itself per channel group and per channel (*ours*: GR context
 * buffers, instance block and RAMFC on a real GPU, sizes the driver reports nowhere):
 * an internal sd_mem of the object's.
 */
#define SD_GROUP_HELD	(2ULL << 20)
#define SD_CHANNEL_HELD	(64ULL << 10)
/* ... and per GPU VA space: its page directory (*ours*; RM sizes it by the space's size). */
#define SD_VASPACE_HELD	(256ULL << 10)
/* A VA range's size is taken in whole big pages (*ours*: RM aligns it to its VA space's). */
#define SD_RANGE_ALIGN	SD_PAGE_BIG
/*
 * The page tables RM pins for a VA range of size bytes made neither LAZY nor EXTERNALLY_
 * MANAGED, placed at a 2 MiB boundary: per 2 MiB a 4 KiB table of 4 KiB pages and one of
 * 256 bytes of 64 KiB pages, and a 4 KiB directory per 512 MiB, 256 GiB and 128 TiB
 * (Pascal's MMU format on: pool_alloc.c's sizes). Not modelled: Hopper's fifth level,
 * the pool's 64 KiB chunks (one per GPU, shared by every VA space), what mappings into a
 * LAZY range make.
 */
sd_u64 sd_range_tables(sd_u64 size);

struct sd_obj {
	struct sd_obj *next;	/* the client's objects */
	struct sd_obj *parent;	/* NULL: a child of the client itself */
	sd_u32 handle;
	sd_u32 cls;
	sd_u32 gpu;		/* of its device */
	int doomed;		/* marked for a subtree free */
	struct sd_mem *mem;	/* video memory: what it names; NULL otherwise */
	/*
	 * A device's NV0080_ALLOC_PARAMETERS.hClientShare and vaMode, and the VA space of
	 * its own RM gives it on first use (rm.c, device_vas): NULL until then.
	 */
	sd_u32 share, vamode;
	struct sd_mem *vas;
	/*
	 * A VA range's (NV50_MEMORY_VIRTUAL) VA space object, when it names one (NULL: its
	 * device's): RM frees the range with it (refAddDependant in virtmemConstruct).
	 */
	const struct sd_obj *space;
};

struct sd_client {
	struct sd_client *next;	/* the node's clients */
	const struct sd_file *file;	/* the file that made it: only it may use it */
	sd_u32 handle;
	/*
	 * The process that made it: RM's ProcID, which its default share rule compares.
	 * 0, with file NULL: a client of the driver's own (a dma-buf's), no process's.
	 */
	sd_u32 pid;
	struct sd_obj *objs;
};

struct sd_node {
	sd_u32 ngpus;
	sd_u64 total[SD_MAX_GPUS];
	sd_u64 used[SD_MAX_GPUS];
	char version[SD_VERSION_STRING_LENGTH];
	sd_u32 memparams_size;	/* NV_MEMORY_ALLOCATION_PARAMS of this version */
	struct sd_client *clients;
	sd_u32 client_seq;
	sd_u32 internal_seq;
	sd_u32 obj_seq;
	sd_u32 uvm_session;	/* nvidia-uvm's one client, for every GPU; 0: none yet */
	sd_u64 uvm_tables[SD_MAX_GPUS];	/* nvidia-uvm's page tables (sd_uvm_tables), in used */
	sd_u64 uvm_pages[SD_MAX_GPUS];	/* managed and pageable memory on the GPU (sd_uvm_pages), in used */
};

struct sd_file {
	struct sd_node *node;
	sd_u32 minor;		/* SD_CTL_MINOR or a GPU index */
	sd_u32 *attached;	/* NV_ESC_ATTACH_GPUS_TO_FD */
	sd_u32 nattached;
	/*
	 * NV_ESC_REGISTER_FD: the control file this one acts as in RM (RmIoctl's
	 * clientOSInfo), and the reference that keeps it open; set once.
	 */
	struct sd_file *ctl;
	void *ctl_ref;
};

/* ngpus 1..SD_MAX_GPUS, mem_bytes per GPU, version "MAJOR.MINOR[.PATCH]". */
enum sd_rc sd_node_init(struct sd_node *n, sd_u32 ngpus, sd_u64 mem_bytes, const char *version);
void sd_file_init(struct sd_file *f, struct sd_node *n, sd_u32 minor);
/*
 * Frees every client the file made; the caller holds the node's lock, and lets go of
 * f->ctl_ref after dropping it.
 */
void sd_file_release(struct sd_file *f);
/*
 * One ioctl: nr and size from the command, uarg the user's argument. Statuses of RM
 * calls go into the parameter block, which is copied back as the real driver does.
 */
enum sd_rc sd_entry(struct sd_file *f, const struct sd_env *env, sd_u32 nr, sd_u32 size, sd_u64 uarg);
/* RmIoctl: an RM escape (RM_ALLOC, RM_FREE, any other) on the kernel copy arg. */
enum sd_rc sd_rm_ioctl(struct sd_file *f, const struct sd_env *env, sd_u32 nr, void *arg, sd_u32 size);
/*
 * rm_kernel_rmapi_op: one struct sd_rmapi_ops from a kernel client, its blocks and
 * parameters in kernel memory, with kernel privilege (any client, any file). Serves
 * NV01_FREE and NV04_CONTROL's NV0041_CTRL_CMD_GET_SURFACE_INFO; any other operation's
 * block is left alone, as RM leaves an operation it does not know, and any other
 * control gets NV_ERR_NOT_SUPPORTED.
 */
void sd_kernel_op(struct sd_node *n, const struct sd_env *env, struct sd_rmapi_ops *ops);
/*
 * The driver's half of a dma-buf's making on GPU gpu (fd -1; adding to one is
 * NV_ERR_NOT_SUPPORTED): p's objects, memory of that GPU in client p->hClient,
 * duplicated into a new client of the driver's own, *hold its handle, which keeps the
 * memory until sd_dmabuf_release. Takes the node's lock. The status, NV_OK or RM's.
 */
sd_u32 sd_dmabuf_dup(struct sd_node *n, sd_u32 gpu, const struct sd_env *env,
		     const struct sd_export_dmabuf *p, sd_u32 *hold);
/* The dma-buf's release: its client and the memory only it still names go. */
void sd_dmabuf_release(struct sd_node *n, const struct sd_env *env, sd_u32 hold);
struct sd_dup_info;
/*
 * nvidia-uvm's duplicate of memory hMemory of client hClient into its client on gpu
 * (nvUvmInterfaceDupMemory, which the module exports under NVIDIA's name for its
 * nvidia-uvm, and cgpu_km hooks), and the duplicate's free
 * (nvUvmInterfaceFreeDupedHandle). Take the node's lock. RM's status.
 */
sd_u32 sd_uvm_dup(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u32 hClient,
		  sd_u32 hMemory, sd_u32 *hdup, struct sd_dup_info *info);
sd_u32 sd_uvm_free_dup(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u32 hdup);
/*
 * Memory nvidia-uvm takes on GPU gpu for page tables of its own (take) or gives back
 * (sd_uvm_tables), and for managed or pageable memory it moves there (sd_uvm_pages):
 * in the GPU's used figure and in no process's, as the real one's root chunks from
 * RM's physical allocator are (nvUvmInterfacePmaAllocPages). Taking more than the GPU
 * has left is NV_ERR_NO_MEMORY.
 */
sd_u32 sd_uvm_tables(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u64 bytes, int take);
sd_u32 sd_uvm_pages(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u64 bytes, int take);
/*
 * nvidia-uvm's retain of channel hChannel of client hClient on gpu
 * (nvUvmInterfaceRetainChannel), *hold the handle in its client that keeps the channel
 * (its group's duplicate, or the retainer itself for a channel in no group), and its
 * release (nvUvmInterfaceReleaseChannel). Take the node's lock. RM's status.
 */
sd_u32 sd_uvm_retain(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u32 hClient,
		     sd_u32 hChannel, sd_u32 *hold);
/*
 * nvidia-uvm's duplicate of VA space hVaSpace of client hClient, on a device of gpu
 * (nvUvmInterfaceDupAddressSpace), *hold the duplicate's handle in its client.
 */
sd_u32 sd_uvm_dup_vaspace(struct sd_node *n, const struct sd_env *env, sd_u32 gpu, sd_u32 hClient,
			  sd_u32 hVaSpace, sd_u32 *hold);
/* The release of a retained channel or a duplicated VA space: hold and what is under it go. */
void sd_uvm_release(struct sd_node *n, const struct sd_env *env, sd_u32 hold);
/* The module's end: nvidia-uvm's clients go (no nvidia-uvm file is open). */
void sd_uvm_sessions_free(struct sd_node *n);
/*
 * emit(arg, pid, bytes) for each client holding memory on gpu, with the pid env->caller
 * gave when it was made (the module numbers it again for its reader):
 * one line per client (linear in the node's objects; the sim makes one client per
 * process). The caller holds the node's lock.
 */
void sd_gpu_clients(const struct sd_node *n, sd_u32 gpu,
		    void (*emit)(void *arg, sd_u32 pid, sd_u64 bytes), void *arg);
/* The PCI identity of GPU i (docs/contracts.md section 4): bus 0x10 + i. */
sd_u32 sd_gpu_id(sd_u32 gpu);
/* Whether version a is at least b; both "MAJOR.MINOR[.PATCH]". */
int sd_version_at_least(const char *a, sd_u32 major, sd_u32 minor, sd_u32 patch);

#endif
