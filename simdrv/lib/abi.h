/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The subset of NVIDIA's kernel driver ABI the stand-in serves, written from NVIDIA's
 * public headers (open-gpu-kernel-modules: nv-ioctl-numbers.h, nv-ioctl.h, nv_escape.h,
 * nvos.h, class/cl0000.h cl0040.h cl0080.h cl2080.h, nvstatuscodes.h) in our own names.
 * Every number, size and offset here is compiled against NVIDIA's own headers of
 * 535.261.03 and 550.163.01 by conformance/check.c: change one and CI fails.
 * Fixed-width members only, so the layout is the same in the kernel and in user space.
 */
#ifndef SIMDRV_ABI_H
#define SIMDRV_ABI_H

#include "types.h"

/* Escapes: the ioctl's _IOC_NR; the driver ignores _IOC_TYPE and _IOC_DIR. */
#define SD_IOCTL_MAGIC		'F'
#define SD_ESC_RM_ALLOC_MEMORY	0x27	/* not served */
#define SD_ESC_RM_ALLOC_OBJECT	0x28	/* not served */
#define SD_ESC_RM_FREE		0x29
#define SD_ESC_RM_CONTROL	0x2A	/* not served: RM's unknown-escape answer */
#define SD_ESC_RM_ALLOC		0x2B
#define SD_ESC_RM_DUP_OBJECT	0x34
#define SD_ESC_RM_VID_HEAP_CONTROL 0x4A	/* not served either */
#define SD_ESC_RM_MAP_MEMORY_DMA 0x57	/* not served: test/gpu/rmtrace.c reads them */
#define SD_ESC_RM_UNMAP_MEMORY_DMA 0x58
#define SD_ESC_CARD_INFO	200
#define SD_ESC_REGISTER_FD	201
#define SD_ESC_CHECK_VERSION_STR 210
#define SD_ESC_IOCTL_XFER_CMD	211
#define SD_ESC_ATTACH_GPUS_TO_FD 212
#define SD_ESC_EXPORT_TO_DMABUF_FD 217
/* Largest parameter block NV_ESC_IOCTL_XFER_CMD carries (NV_ABSOLUTE_MAX_IOCTL_SIZE). */
#define SD_MAX_IOCTL_SIZE	16384

#define SD_MAJOR		195
#define SD_CTL_MINOR		255
#define SD_MAX_DEVICES		32	/* NV_MAX_DEVICES */

/* Classes */
#define SD_NV01_ROOT		0x0
#define SD_NV01_ROOT_NON_PRIV	0x1
#define SD_NV01_ROOT_CLIENT	0x41
#define SD_NV01_MEMORY_SYSTEM	0x3e
#define SD_NV01_MEMORY_LOCAL_USER 0x40
#define SD_NV01_DEVICE_0	0x80
#define SD_NV20_SUBDEVICE_0	0x2080
/* Not served by the stand-in (NV_ERR_INVALID_CLASS); cgpu_km refuses them in containers. */
#define SD_NV_MEMORY_EXTENDED_USER	0x42
#define SD_NV01_MEMORY_LOCAL_PHYSICAL	0xc2
#define SD_NV_MEMORY_FABRIC		0xf8
#define SD_NV_MEMORY_MULTICAST_FABRIC	0xfd
#define SD_NV_MEMORY_EXPORT		0xe0	/* after 535 */

/* Status codes (the params' status; the ioctl returns 0 when one is set) */
#define SD_NV_OK			0x00
#define SD_NV_ERR_INSERT_DUPLICATE_NAME	0x19
#define SD_NV_ERR_INSUFFICIENT_RESOURCES	0x1A
#define SD_NV_ERR_INSUFFICIENT_PERMISSIONS 0x1B
#define SD_NV_ERR_INVALID_ADDRESS	0x1E
#define SD_NV_ERR_INVALID_ARGUMENT	0x1F
#define SD_NV_ERR_INVALID_CLASS		0x22
#define SD_NV_ERR_INVALID_CLIENT	0x23
#define SD_NV_ERR_INVALID_OBJECT_HANDLE	0x33
#define SD_NV_ERR_INVALID_OBJECT_PARENT	0x36
#define SD_NV_ERR_INVALID_OWNER		0x39
#define SD_NV_ERR_NO_MEMORY		0x51
#define SD_NV_ERR_NO_FREE_FIFOS		0x4F
#define SD_NV_ERR_NOT_SUPPORTED		0x56
#define SD_NV_ERR_OBJECT_NOT_FOUND	0x57
#define SD_NV_ERR_INVALID_OBJECT	0x31
#define SD_NV_ERR_IN_USE		0x17
#define SD_NV_ERR_OPERATING_SYSTEM	0x59
#define SD_NV_ERR_INVALID_PARAM_STRUCT	0x3A
#define SD_NV_ERR_INVALID_DEVICE	0x26
#define SD_NV_ERR_OUT_OF_RANGE		0x5B
#define SD_NV_ERR_GENERIC		0xFFFF

/* NVOS21_PARAMETERS: NV_ESC_RM_ALLOC of 32 bytes */
struct sd_nvos21 {
	sd_u32 hRoot;
	sd_u32 hObjectParent;
	sd_u32 hObjectNew;
	sd_u32 hClass;
	sd_u64 pAllocParms;
	sd_u32 paramsSize;
	sd_u32 status;
};

/* NVOS64_PARAMETERS: NV_ESC_RM_ALLOC of 48 bytes (with rights) */
struct sd_nvos64 {
	sd_u32 hRoot;
	sd_u32 hObjectParent;
	sd_u32 hObjectNew;
	sd_u32 hClass;
	sd_u64 pAllocParms;
	sd_u64 pRightsRequested;
	sd_u32 paramsSize;
	sd_u32 flags;
	sd_u32 status;
	sd_u32 pad;
};

/* NVOS00_PARAMETERS: NV_ESC_RM_FREE */
struct sd_nvos00 {
	sd_u32 hRoot;
	sd_u32 hObjectParent;
	sd_u32 hObjectOld;
	sd_u32 status;
};

/* NVOS02_PARAMETERS in nv_ioctl_nvos02_parameters_with_fd (NV_ESC_RM_ALLOC_MEMORY) */
struct sd_nvos02 {
	sd_u32 hRoot;
	sd_u32 hObjectParent;
	sd_u32 hObjectNew;
	sd_u32 hClass;
	sd_u32 flags;
	sd_u32 pad0;
	sd_u64 pMemory;
	sd_u64 limit;
	sd_u32 status;
	sd_u32 pad1;
};
struct sd_nvos02_with_fd {
	struct sd_nvos02 params;
	sd_s32 fd;
	sd_u32 pad;
};

/*
 * NVOS46_PARAMETERS (NV_ESC_RM_MAP_MEMORY_DMA): hMemory's offset..offset+length mapped
 * into the GPU VA range hDma, at dmaOffset; RM makes the page tables the mapping needs.
 * NVOS47_PARAMETERS (NV_ESC_RM_UNMAP_MEMORY_DMA) takes it away.
 */
struct sd_nvos46 {
	sd_u32 hClient;
	sd_u32 hDevice;
	sd_u32 hDma;
	sd_u32 hMemory;
	sd_u64 offset;
	sd_u64 length;
	sd_u32 flags;
	sd_u32 pad0;
	sd_u64 dmaOffset;
	sd_u32 status;
	sd_u32 pad1;
};
struct sd_nvos47 {
	sd_u32 hClient;
	sd_u32 hDevice;
	sd_u32 hDma;
	sd_u32 hMemory;
	sd_u32 flags;
	sd_u32 pad0;
	sd_u64 dmaOffset;
	sd_u32 status;
	sd_u32 pad1;
};

/* nv_ioctl_register_fd_t (NV_ESC_REGISTER_FD): the control file this file acts as */
struct sd_register_fd {
	sd_s32 ctl_fd;
};

/*
 * nv_ioctl_export_to_dma_buf_fd_t (NV_ESC_EXPORT_TO_DMABUF_FD, on a GPU's node): memory
 * objects of hClient, or ranges of them, to one dma-buf; fd -1 makes it, else adds to it.
 */
#define SD_DMABUF_EXPORT_MAX_HANDLES 128
struct sd_export_dmabuf {
	sd_s32 fd;
	sd_u32 hClient;
	sd_u32 totalObjects;
	sd_u32 numObjects;
	sd_u32 index;
	sd_u32 pad0;
	sd_u64 totalSize;
	sd_u32 handles[SD_DMABUF_EXPORT_MAX_HANDLES];
	sd_u64 offsets[SD_DMABUF_EXPORT_MAX_HANDLES];
	sd_u64 sizes[SD_DMABUF_EXPORT_MAX_HANDLES];
	sd_u32 status;
	sd_u32 pad1;
};

/*
 * nv_state_t's head (nv.h), as rm_ioctl's nv argument points to it: flags tell the
 * control device (NV_FLAG_CONTROL) from a GPU's.
 */
struct sd_nv_state_head {
	void *priv;
	void *os_state;
	int flags;
};
#define SD_NV_FLAG_CONTROL	0x0004

/* NVOS05_PARAMETERS (NV_ESC_RM_ALLOC_OBJECT) */
struct sd_nvos05 {
	sd_u32 hRoot;
	sd_u32 hObjectParent;
	sd_u32 hObjectNew;
	sd_u32 hClass;
	sd_u32 status;
};

/* A client's import of objects from a file descriptor (ctrl0000unix.h) */
#define SD_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD	0x3d06
#define SD_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD	0x3d0c
#define SD_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD		0x3d05
#define SD_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD		0x3d0b

/* NVOS55_PARAMETERS: NV_ESC_RM_DUP_OBJECT */
struct sd_nvos55 {
	sd_u32 hClient;
	sd_u32 hParent;
	sd_u32 hObject;
	sd_u32 hClientSrc;
	sd_u32 hObjectSrc;
	sd_u32 flags;
	sd_u32 status;
};

/* NVOS32_PARAMETERS (NV_ESC_RM_VID_HEAP_CONTROL): the head; the function's union follows */
struct sd_nvos32_head {
	sd_u32 hRoot;
	sd_u32 hObjectParent;
	sd_u32 function;
	sd_u32 hVASpace;
	sd_s16 ivcHeapNumber;
	sd_u32 status;
	sd_u64 total;
	sd_u64 free;
};
#define SD_NVOS32_SIZE			184
#define SD_NVOS32_FUNCTION_ALLOC_SIZE	2
#define SD_NVOS32_FUNCTION_INFO		5

/* nv_ioctl_xfer_t */
struct sd_xfer {
	sd_u32 cmd;
	sd_u32 size;
	sd_u64 ptr;
};

/* nv_ioctl_card_info_t (with nv_pci_info_t inline) */
struct sd_card_info {
	sd_u8 valid;
	sd_u8 pad0[3];
	sd_u32 domain;
	sd_u8 bus;
	sd_u8 slot;
	sd_u8 function;
	sd_u8 pad1;
	sd_u16 vendor_id;
	sd_u16 device_id;
	sd_u32 gpu_id;
	sd_u16 interrupt_line;
	sd_u8 pad2[2];
	sd_u64 reg_address;
	sd_u64 reg_size;
	sd_u64 fb_address;
	sd_u64 fb_size;
	sd_u32 minor_number;
	sd_u8 dev_name[10];
	sd_u8 pad3[2];
};

/* nv_ioctl_rm_api_version_t: NV_ESC_CHECK_VERSION_STR */
#define SD_VERSION_STRING_LENGTH	64
#define SD_VERSION_CMD_STRICT		0
#define SD_VERSION_CMD_RELAXED		'1'
#define SD_VERSION_CMD_QUERY		'2'
#define SD_VERSION_REPLY_RECOGNIZED	1
struct sd_rm_api_version {
	sd_u32 cmd;
	sd_u32 reply;
	char versionString[SD_VERSION_STRING_LENGTH];
};

/* NV0080_ALLOC_PARAMETERS */
struct sd_nv0080_alloc {
	sd_u32 deviceId;
	sd_u32 hClientShare;
	sd_u32 hTargetClient;
	sd_u32 hTargetDevice;
	sd_u32 flags;
	sd_u32 pad;
	sd_u64 vaSpaceSize;
	sd_u64 vaStartInternal;
	sd_u64 vaLimitInternal;
	sd_u32 vaMode;
	sd_u32 pad2;
};

/* NV0080_ALLOC_PARAMETERS.vaMode: the device has no VA space of its own (cl0080.h). */
#define SD_DEVICE_VAMODE_MULTIPLE_VASPACES	2

/* NV2080_ALLOC_PARAMETERS */
struct sd_nv2080_alloc {
	sd_u32 subDeviceId;
};

/*
 * A GPU virtual address space (cl90f1.h), under a device or subdevice: the driver holds
 * its page directory in video memory of its own (lib/rm.h, SD_VASPACE_HELD).
 * NV_VASPACE_ALLOCATION_PARAMETERS (nvos.h): the stand-in reads none of it.
 */
#define SD_FERMI_VASPACE_A	0x90f1
/* nvidia-uvm's: RM refuses VA ranges in it (gvaspaceAlloc: NV_ERR_NOT_SUPPORTED). */
#define SD_VASPACE_FLAGS_IS_EXTERNALLY_OWNED 0x00000008u
struct sd_vaspace_alloc {
	sd_u32 index;
	sd_u32 flags;
	sd_u64 vaSize;
	sd_u64 vaStartInternal;
	sd_u64 vaLimitInternal;
	sd_u32 bigPageSize;
	sd_u32 pad;
	sd_u64 vaBase;
};

/*
 * Channels (cla06c.h, clc46f.h): a channel group under a device, and the simulated T4's
 * channel class under a group or a device. Each makes the driver hold video memory of
 * its own (lib/rm.h, SD_GROUP_HELD and SD_CHANNEL_HELD).
 */
#define SD_KEPLER_CHANNEL_GROUP_A	0xa06c
#define SD_TURING_CHANNEL_GPFIFO_A	0xc46f

/* NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS (nvos.h) */
struct sd_channel_group_alloc {
	sd_u32 hObjectError;
	sd_u32 hObjectEccError;
	sd_u32 hVASpace;
	sd_u32 engineType;
	sd_u8 bIsCallingContextVgpuPlugin;
	sd_u8 pad[3];
};

/*
 * NV_CHANNEL_ALLOC_PARAMS (alloc_channel.h), of which the stand-in reads the first field
 * only: the rest (GPFIFO, USERD, memory descriptors, confidential-computing IVs) grows
 * by release and places nothing the stand-in models.
 */
struct sd_channel_alloc_head {
	sd_u32 hObjectError;
};

/*
 * NV_MEMORY_ALLOCATION_PARAMS. 545.23.06 appended numaNode: the driver copies
 * SD_MEMPARAMS_SIZE_OLD bytes before it and SD_MEMPARAMS_SIZE_NEW from it.
 */
#define SD_MEMPARAMS_SIZE_OLD	120
#define SD_MEMPARAMS_SIZE_NEW	128
struct sd_memory_alloc {
	sd_u32 owner;
	sd_u32 type;
	sd_u32 flags;
	sd_u32 width;
	sd_u32 height;
	sd_s32 pitch;
	sd_u32 attr;
	sd_u32 attr2;
	sd_u32 format;
	sd_u32 comprCovg;
	sd_u32 zcullCovg;
	sd_u32 pad0;
	sd_u64 rangeLo;
	sd_u64 rangeHi;
	sd_u64 size;
	sd_u64 alignment;
	sd_u64 offset;
	sd_u64 limit;
	sd_u64 address;
	sd_u32 ctagOffset;
	sd_u32 hVASpace;
	sd_u32 internalflags;
	sd_u32 tag;
	sd_s32 numaNode;	/* 545.23.06 on */
	sd_u32 pad1;
};

/* NVOS32 attribute fields (DRF ranges hi:lo) the memory class reads */
#define SD_ATTR_PAGE_SIZE_SHIFT		23	/* NVOS32_ATTR_PAGE_SIZE 24:23 */
#define SD_ATTR_PAGE_SIZE_MASK		0x3u
#define SD_ATTR_PAGE_SIZE_DEFAULT	0
#define SD_ATTR_PAGE_SIZE_4KB		1
#define SD_ATTR_PAGE_SIZE_BIG		2
#define SD_ATTR_PAGE_SIZE_HUGE		3
#define SD_ATTR_LOCATION_SHIFT		25	/* NVOS32_ATTR_LOCATION 26:25 */
#define SD_ATTR_LOCATION_MASK		0x3u
#define SD_ATTR_LOCATION_VIDMEM		0
#define SD_ATTR_LOCATION_PCI		1
#define SD_ATTR2_PAGE_SIZE_HUGE_SHIFT	20	/* NVOS32_ATTR2_PAGE_SIZE_HUGE 21:20 */
#define SD_ATTR2_PAGE_SIZE_HUGE_MASK	0x3u
#define SD_ATTR2_PAGE_SIZE_HUGE_512MB	2
#define SD_ALLOC_FLAGS_USE_BEGIN_END	0x00020000u
#define SD_ALLOC_FLAGS_VIRTUAL		0x00080000u
/*
 * A VA range (NV50_MEMORY_VIRTUAL, NV_MEMORY_ALLOCATION_PARAMS with VIRTUAL set): RM pins
 * page tables for its whole size at once when neither LAZY nor EXTERNALLY_MANAGED is set
 * (virtmemConstruct's page-table reservation, gvaspaceAlloc's pinning), and sparsifies a
 * SPARSE one when it makes it, LAZY or not; test/gpu/rmtrace.c reports them. A range
 * spanning a whole VA space (NV01_MEMORY_VIRTUAL), which takes VA and page tables at each
 * mapping into it, is not served.
 */
#define SD_NV50_MEMORY_VIRTUAL		0x50a0
#define SD_NV01_MEMORY_VIRTUAL		0x70
/* A mapper of memory into ranges from RM's own worker: not served; refused in containers. */
#define SD_NV_MEMORY_MAPPER		0xfe
#define SD_ALLOC_FLAGS_LAZY		0x00000400u
#define SD_ALLOC_FLAGS_EXTERNALLY_MANAGED 0x00400000u
#define SD_ALLOC_FLAGS_SPARSE		0x04000000u

/*
 * nvidia-uvm's device (kernel-open/nvidia-uvm): a character region named "nvidia-uvm"
 * of a major the kernel picks, minor 0 /dev/nvidia-uvm, minor 1 /dev/nvidia-uvm-tools
 * (uvm_common.h); its commands are plain numbers, not _IOC ones (uvm_linux_ioctl.h).
 * UVM_INITIALIZE must come first on a file; again with other flags it is
 * NV_ERR_INVALID_ARGUMENT.
 */
#define SD_UVM_DEVICE_NAME	"nvidia-uvm"
#define SD_UVM_MINOR		0
#define SD_UVM_TOOLS_MINOR	1
#define SD_UVM_MINORS		2
#define SD_UVM_INITIALIZE	0x30000001
#define SD_UVM_DEINITIALIZE	0x30000002
struct sd_uvm_initialize {
	sd_u64 flags;
	sd_u32 rmStatus;
	sd_u32 pad;
};
/*
 * UVM_INITIALIZE's flags (uvm_types.h): DISABLE_HMM keeps the va_space from reaching
 * the process's pageable memory through HMM; any bit outside the mask is
 * NV_ERR_INVALID_ARGUMENT (uvm_va_space_create).
 */
#define SD_UVM_INIT_FLAGS_DISABLE_HMM	0x1ULL
#define SD_UVM_INIT_FLAGS_MASK		0x3ULL


/*
 * nvidia-uvm's external allocations (uvm_ioctl.h), the path libcuda maps RM video
 * memory into a process's unified address space by: register a GPU with the va_space,
 * make an external range of addresses, map an RM memory object of the caller's into it
 * (nvidia-uvm duplicates the object into RM's client of its own through
 * nvUvmInterfaceDupMemory, so the memory stays until the mapping goes), and free the
 * range (nvUvmInterfaceFreeDupedHandle). Plain command numbers (UVM_IOCTL_BASE(i) is i
 * on Linux); the map's block has one attribute per GPU up to UVM_MAX_GPUS, 32 in
 * 535.261.03 and UVM_MAX_GPUS_V2, 256, in 550.163.01, so its size is the release's.
 */
#define SD_UVM_MAP_EXTERNAL_ALLOCATION	33
#define SD_UVM_FREE			34
#define SD_UVM_REGISTER_GPU		37
#define SD_UVM_UNREGISTER_GPU		38
#define SD_UVM_CREATE_EXTERNAL_RANGE	73
#define SD_UVM_MAP_EXTERNAL_SPARSE	74
#define SD_UVM_MAX_GPUS_535		32	/* UVM_MAX_GPUS: NV_MAX_DEVICES */
#define SD_UVM_MAX_GPUS_550		256	/* UVM_MAX_GPUS_V2: NV_MAX_DEVICES * NV_MAX_SUBDEVICES */
#define SD_UUID_LEN			16	/* NvProcessorUuid */
#define SD_NV_ERR_GPU_UUID_NOT_FOUND	0x12
#define SD_NV_ERR_ILLEGAL_ACTION	0x16	/* a command before UVM_INITIALIZE */
#define SD_NV_ERR_INVALID_DEVICE	0x26
#define SD_NV_ERR_INVALID_OFFSET	0x37
#define SD_NV_ERR_UVM_ADDRESS_IN_USE	0x68
struct sd_uvm_register_gpu {
	sd_u8 gpu_uuid[SD_UUID_LEN];
	sd_u8 numaEnabled;
	sd_u8 pad[3];
	sd_s32 numaNodeId;
	sd_s32 rmCtrlFd;
	sd_u32 hClient;
	sd_u32 hSmcPartRef;
	sd_u32 rmStatus;
};
struct sd_uvm_unregister_gpu {
	sd_u8 gpu_uuid[SD_UUID_LEN];
	sd_u32 rmStatus;
};
struct sd_uvm_create_external_range {
	sd_u64 base;
	sd_u64 length;
	sd_u32 rmStatus;
	sd_u32 pad;
};
struct sd_uvm_map_external_sparse {
	sd_u64 base;
	sd_u64 length;
	sd_u8 gpuUuid[SD_UUID_LEN];
	sd_u32 rmStatus;
	sd_u32 pad;
};
struct sd_uvm_free {
	sd_u64 base;
	sd_u64 length;
	sd_u32 rmStatus;
	sd_u32 pad;
};
/*
 * Two more ranges nvidia-uvm makes page tables for on the GPU itself, from no RM call
 * (535's uvm_va_range.c), both freed by UVM_FREE: a dynamic parallelism region (a "SKED
 * reflected" range: one GPU page, its length a page size the GPU takes, at an address
 * aligned to it, mapped on the GPU of gpuUuid, which needs a GPU VA space), and a
 * semaphore pool (system memory nvidia-uvm allocates, of the caller's length, mapped on
 * every registered GPU's kernel VA and on every GPU VA space, then and later). The
 * pool's block is this head, perGpuAttributes[UVM_MAX_GPUS] (the release's), the tail.
 */
#define SD_UVM_MAP_DYNAMIC_PARALLELISM_REGION	65
#define SD_UVM_ALLOC_SEMAPHORE_POOL		68
struct sd_uvm_map_dp_region {
	sd_u64 base;
	sd_u64 length;
	sd_u8 gpuUuid[SD_UUID_LEN];
	sd_u32 rmStatus;
	sd_u32 pad;
};
struct sd_uvm_pool_head {
	sd_u64 base;
	sd_u64 length;
};
struct sd_uvm_pool_tail {
	sd_u64 gpuAttributesCount;
	sd_u32 rmStatus;
	sd_u32 pad;
};
/*
 * Managed memory (uvm.c, uvm_migrate.c): a mmap of /dev/nvidia-uvm, shared and
 * read-write, at the offset equal to its address, makes a managed range
 * (uvm_va_range_create_mmap), memory nvidia-uvm owns and moves between the CPU and the
 * GPUs, taking the GPUs' pages from RM's allocator itself. UVM_MIGRATE moves [base,
 * base + length) of managed ranges, or of the process's pageable memory where HMM is
 * on, to the processor of destinationUuid (a registered GPU, or the CPU: all zeros).
 * UVM_PAGEABLE_MEM_ACCESS says whether HMM (or ATS) is on for the va_space.
 */
#define SD_UVM_PAGEABLE_MEM_ACCESS	39
#define SD_UVM_MIGRATE			51
struct sd_uvm_pageable_mem_access {
	sd_u8 pageableMemAccess;
	sd_u8 pad[3];
	sd_u32 rmStatus;
};
struct sd_uvm_migrate {
	sd_u64 base;
	sd_u64 length;
	sd_u8 destinationUuid[SD_UUID_LEN];
	sd_u32 flags;
	sd_u32 pad;
	sd_u64 semaphoreAddress;
	sd_u32 semaphorePayload;
	sd_s32 cpuNumaNode;
	sd_u64 userSpaceStart;
	sd_u64 userSpaceLength;
	sd_u32 rmStatus;
	sd_u32 pad2;
};
/* UvmGpuMappingAttributes (uvm_types.h) */
struct sd_uvm_gpu_mapping {
	sd_u8 gpuUuid[SD_UUID_LEN];
	sd_u32 gpuMappingType;		/* UvmGpuMappingType: 0 default .. 3 */
	sd_u32 gpuCachingType;		/* UvmGpuCachingType: 0 default .. 2 */
	sd_u32 gpuFormatType;		/* UvmGpuFormatType: 0 default */
	sd_u32 gpuElementBits;		/* UvmGpuFormatElementBits: 0 default */
	sd_u32 gpuCompressionType;	/* UvmGpuCompressionType: 0 default */
};
#define SD_UVM_MAPPING_TYPE_MAX		3	/* UvmGpuMappingTypeReadOnly */
#define SD_UVM_CACHING_TYPE_MAX		2	/* UvmGpuCachingTypeForceCached */
/* UVM_MAP_EXTERNAL_ALLOCATION_PARAMS: this head, perGpuAttributes[max], the tail. */
struct sd_uvm_map_head {
	sd_u64 base;
	sd_u64 length;
	sd_u64 offset;
};
struct sd_uvm_map_tail {
	sd_u64 gpuAttributesCount;
	sd_s32 rmCtrlFd;
	sd_u32 hClient;
	sd_u32 hMemory;
	sd_u32 rmStatus;
};
#define SD_UVM_MAP_SIZE(max)	(sizeof(struct sd_uvm_map_head) + \
				 (max) * sizeof(struct sd_uvm_gpu_mapping) + sizeof(struct sd_uvm_map_tail))
#define SD_UVM_POOL_SIZE(max)	(sizeof(struct sd_uvm_pool_head) + \
				 (max) * sizeof(struct sd_uvm_gpu_mapping) + sizeof(struct sd_uvm_pool_tail))
/*
 * A GPU VA space registered with nvidia-uvm (UVM_REGISTER_GPU_VASPACE, uvm_va_space.c),
 * one per GPU of a va_space: nvidia-uvm duplicates it into its RM client through
 * nvUvmInterfaceDupAddressSpace (nv_gpu_ops.c), keeping its page directory past the
 * process's free, until UVM_UNREGISTER_GPU_VASPACE, the GPU's unregistering or the
 * va_space's end (nvUvmInterfaceAddressSpaceDestroy).
 *
 * A channel registered with nvidia-uvm (uvm_user_channel.c), which libcuda does for its
 * channels so that nvidia-uvm can tell which one faulted: nvidia-uvm retains it through
 * nvUvmInterfaceRetainChannel, which duplicates the channel's group into nvidia-uvm's
 * RM client and makes a UVM_CHANNEL_RETAINER under it that keeps the channel's instance
 * (nv_gpu_ops.c), until the channel is unregistered, its GPU is, or the va_space ends
 * (nvUvmInterfaceReleaseChannel). base and length place the channel's resources in the
 * va_space; a channel with none (the stand-in's, as RM's copy-engine ones) ignores them.
 */
#define SD_UVM_REGISTER_GPU_VASPACE	25
#define SD_UVM_UNREGISTER_GPU_VASPACE	26
#define SD_UVM_REGISTER_CHANNEL		27
#define SD_UVM_UNREGISTER_CHANNEL	28
#define SD_UVM_CHANNEL_RETAINER		0xc574
#define SD_NV_ERR_INVALID_CHANNEL	0x21
#define SD_NV_ERR_OTHER_DEVICE_FOUND	0x5A
struct sd_uvm_register_gpu_vaspace {
	sd_u8 gpuUuid[SD_UUID_LEN];
	sd_s32 rmCtrlFd;
	sd_u32 hClient;
	sd_u32 hVaSpace;
	sd_u32 rmStatus;
};
struct sd_uvm_unregister_gpu_vaspace {
	sd_u8 gpuUuid[SD_UUID_LEN];
	sd_u32 rmStatus;
};
struct sd_uvm_register_channel {
	sd_u8 gpuUuid[SD_UUID_LEN];
	sd_s32 rmCtrlFd;
	sd_u32 hClient;
	sd_u32 hChannel;
	sd_u32 pad;
	sd_u64 base;
	sd_u64 length;
	sd_u32 rmStatus;
	sd_u32 pad2;
};
struct sd_uvm_unregister_channel {
	sd_u8 gpuUuid[SD_UUID_LEN];
	sd_u32 hClient;
	sd_u32 hChannel;
	sd_u32 rmStatus;
};
/*
 * UvmGpuMemoryInfo (nv_uvm_types.h), what nvUvmInterfaceDupMemory tells of the memory
 * it duplicated: 550.163.01 added egm after sysmem, which moves deviceDescendant; the
 * offsets below pageSize are the same in both.
 */
#define SD_UVM_MEMINFO_SYSMEM_OFF	4
#define SD_UVM_MEMINFO_DEVDESC_OFF_535	5
#define SD_UVM_MEMINFO_DEVDESC_OFF_550	6
#define SD_UVM_MEMINFO_PAGESIZE_OFF	8
#define SD_UVM_MEMINFO_SIZE_OFF		32
#define SD_UVM_MEMINFO_UUID_OFF		40
#define SD_UVM_MEMINFO_SIZE		56

/*
 * The RM API NVIDIA's driver gives kernel clients (nvidia-modeset):
 * nvidia_kernel_rmapi_ops_t, handed to rm_kernel_rmapi_op() (nv-kernel-rmapi-ops.h).
 * Kernel privilege, parameters in kernel memory: RM checks neither the client's owner
 * nor copies from user space. The stand-in serves the two operations cgpu_km makes.
 */
#define SD_NV01_FREE			0x00
#define SD_NV04_CONTROL			0x36

/* NVOS54_PARAMETERS: NV04_CONTROL (and NV_ESC_RM_CONTROL) */
struct sd_nvos54 {
	sd_u32 hClient;
	sd_u32 hObject;
	sd_u32 cmd;
	sd_u32 flags;
	sd_u64 params;
	sd_u32 paramsSize;
	sd_u32 status;
};

/* The head of nvidia_kernel_rmapi_ops_t: op, then the union of every operation's block. */
#define SD_RMAPI_OPS_PARAMS_OFF		8
struct sd_rmapi_ops {
	sd_u32 op;
	sd_u32 pad;
	union {
		struct sd_nvos00 free;
		struct sd_nvos54 control;
	} params;
};

/*
 * nvidia_modeset_rm_ops_t, what the exported nvidia_get_rm_ops() fills in when the
 * caller's version_string is the driver's own (nv-modeset-interface.h); on another it
 * writes the driver's there and answers NV_ERR_GENERIC. The stand-in fills
 * version_string, alloc_stack, free_stack and op; the display members stay NULL.
 */
struct sd_rm_ops {
	const char *version_string;
	struct {
		sd_u8 allow_write_combining;
	} system_info;
	int (*alloc_stack)(void **sp);
	void (*free_stack)(void *sp);
	sd_u32 (*enumerate_gpus)(void *gpu_info);
	int (*open_gpu)(sd_u32 gpu_id, void *sp);
	void (*close_gpu)(sd_u32 gpu_id, void *sp);
	void (*op)(void *sp, void *ops_cmd);
	int (*set_callbacks)(const void *cb);
};

/* NV0041_CTRL_CMD_GET_SURFACE_INFO on a memory object (ctrl0041.h) */
#define SD_NV0041_CTRL_CMD_GET_SURFACE_INFO	0x410110
#define SD_NV0041_SURFACE_INFO_INDEX_PHYS_SIZE	7
#define SD_NV0041_SURFACE_INFO_INDEX_ADDR_SPACE_TYPE 9
#define SD_NV0041_SURFACE_INFO_PHYS_SIZE_SCALE	0x1000
#define SD_ADDR_SPACE_TYPE_VIDMEM		2	/* NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE_VIDMEM */
#define SD_ADDR_SPACE_TYPE_INVALID		0	/* ..._INVALID: a VA range's */
struct sd_nv0041_surface_info {
	sd_u32 index;
	sd_u32 data;
};
struct sd_nv0041_get_surface_info {
	sd_u32 surfaceInfoListSize;
	sd_u32 pad;
	sd_u64 surfaceInfoList;
};

/*
 * Which GPU a device or subdevice is on, asked by handle: a device's subdevice
 * (ctrl0080gpu.h), a subdevice's GPU id (ctrl2080gpu.h), and that id's device instance
 * (ctrl0000gpu.h, on a client), the number NV0080_ALLOC_PARAMETERS.deviceId names.
 */
#define SD_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE	0x800293
struct sd_nv0080_find_subdevice {
	sd_u32 subDeviceInst;
	sd_u32 hSubDevice;
};
#define SD_NV2080_CTRL_CMD_GPU_GET_ID			0x20800142
struct sd_nv2080_get_id {
	sd_u32 gpuId;
};
#define SD_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2		0x205
struct sd_nv0000_get_id_info_v2 {
	sd_u32 gpuId;
	sd_u32 gpuFlags;
	sd_u32 deviceInstance;
	sd_u32 subDeviceInstance;
	sd_u32 sliStatus;
	sd_u32 boardId;
	sd_u32 gpuInstance;
	sd_s32 numaId;
};

/* NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO on a client (ctrl0000client.h): an object's class or parent. */
#define SD_NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO	0xd02
#define SD_GET_HANDLE_INFO_INDEX_PARENT		1
#define SD_GET_HANDLE_INFO_INDEX_CLASSID		2
struct sd_nv0000_get_handle_info {
	sd_u32 hObject;
	sd_u32 index;
	sd_u64 data;
};

#endif
