/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few numbers and layouts of NVIDIA's driver ABI that enforce=1 reads (nvhook.c).
 * DKMS builds this directory alone, so kmod cannot include simdrv/lib/abi.h, which
 * declares the same numbers for the stand-in driver: simdrv/conformance/check.c compiles
 * both files against NVIDIA's own headers (535.261.03, 550.163.01), so neither can be
 * wrong, or differ from the other, without failing the build.
 */
#ifndef CGPU_NVABI_H
#define CGPU_NVABI_H

#include <linux/types.h>

#define NVA_ESC_RM_ALLOC_MEMORY	0x27
#define NVA_ESC_RM_ALLOC_OBJECT	0x28
#define NVA_ESC_RM_FREE		0x29
#define NVA_ESC_RM_CONTROL	0x2A
#define NVA_ESC_RM_ALLOC	0x2B
#define NVA_ESC_RM_DUP_OBJECT	0x34
#define NVA_ESC_RM_MAP_MEMORY_DMA 0x57
#define NVA_ESC_RM_VID_HEAP_CONTROL 0x4A
#define NVA_ESC_REGISTER_FD	201
#define NVA_ESC_IOCTL_XFER_CMD	211
/* /dev/nvidiactl's minor: the node RM's escapes go to. */
#define NVA_CTL_MINOR		255

/*
 * The head of nv_state_t (nv.h), which rm_ioctl's nv points to: its flags tell the
 * control device from a GPU (simdrv/conformance/run.sh checks the head in both releases).
 */
struct nva_nv_state_head {
	void *priv;
	void *os_state;
	int flags;
};
#define NVA_NV_FLAG_CONTROL	0x0004

#define NVA_NV01_MEMORY_SYSTEM	0x3e
#define NVA_NV01_MEMORY_LOCAL_USER 0x40
#define NVA_NV01_MEMORY_SYSTEM_OS_DESCRIPTOR 0x71
#define NVA_NV01_DEVICE_0	0x80
#define NVA_NV20_SUBDEVICE_0	0x2080
/*
 * Classes that take or map video memory and are not charged: refused in a container.
 * EXTENDED_USER is EGM (memory beside the GPU on Grace systems), FABRIC is memory for
 * export over NVLink fabric, LOCAL_PHYSICAL a view of all of the GPU's memory (RM gives
 * it to administrators only; a privileged container would read every other one's).
 */
#define NVA_NV_MEMORY_EXTENDED_USER	0x42
#define NVA_NV01_MEMORY_LOCAL_PHYSICAL	0xc2
#define NVA_NV_MEMORY_FABRIC		0xf8
/*
 * Objects that keep a client's video memory in RM's own client past the client's handles:
 * a multicast object that fabric memory is attached to (cl00fd.h), and an export object
 * (cl00e0.h: in releases after 535, whose attached memory RM duplicates; the number is
 * checked where the release's headers have it).
 */
#define NVA_NV_MEMORY_MULTICAST_FABRIC	0xfd
#define NVA_NV_MEMORY_EXPORT		0xe0
/*
 * GPU VA ranges. NV50_MEMORY_VIRTUAL reserves a range of a VA space, whose page tables RM
 * may hold at once or as memory is mapped into it: charged at the most they can take
 * (cgpu_range_tables). NV01_MEMORY_VIRTUAL spans a whole VA space and takes VA and page
 * tables at each mapping into it (virt_mem_range.c): refused in a container.
 */
#define NVA_NV50_MEMORY_VIRTUAL		0x50a0
#define NVA_NV01_MEMORY_VIRTUAL		0x70
/*
 * A range RM's figure of size (NV0041's PHYS_SIZE: 32 bits of 4 KiB pages) cannot say:
 * 16 TiB or more.
 */
#define NVA_RANGE_SIZE_MAX		(0x100000000ULL << 12)
/*
 * A mapper (cl00fe.h): maps memory into VA ranges from a worker of RM's own, of sizes
 * no ioctl shows: refused in a container.
 */
#define NVA_NV_MEMORY_MAPPER		0xfe
/*
 * Channel groups (TSGs) and channels: each makes the driver hold video memory that no
 * figure it gives reports (GR context buffers, instance blocks), so a container's are
 * counted and capped (max_channels, nvhook.c). The GPFIFO classes are every one RM's
 * resource list (resource_list.h: internal class KernelChannel) lets a client allocate
 * in 535 and 550; a class the release does not know, RM refuses.
 */
#define NVA_KEPLER_CHANNEL_GROUP_A	0xa06c
#define NVA_GF100_CHANNEL_GPFIFO	0x906f
#define NVA_KEPLER_CHANNEL_GPFIFO_A	0xa06f
#define NVA_KEPLER_CHANNEL_GPFIFO_B	0xa16f
#define NVA_MAXWELL_CHANNEL_GPFIFO_A	0xb06f
#define NVA_PASCAL_CHANNEL_GPFIFO_A	0xc06f
#define NVA_VOLTA_CHANNEL_GPFIFO_A	0xc36f
#define NVA_TURING_CHANNEL_GPFIFO_A	0xc46f
#define NVA_AMPERE_CHANNEL_GPFIFO_A	0xc56f
#define NVA_HOPPER_CHANNEL_GPFIFO_A	0xc86f
/*
 * A context share (subcontext) lives in a channel group; RM lets a client duplicate it
 * (kctxshareapiCanCopy) as it does the group itself (kchangrpapiCanCopy), and a duplicate
 * keeps the group's memory after the group's own handle is freed.
 */
#define NVA_FERMI_CONTEXT_SHARE_A	0x9067
/*
 * A GPU virtual address space, under a device or subdevice: the driver holds its page
 * directory, reported nowhere, so a container's are counted with its channels; RM lets
 * a client duplicate it (vaspaceapiCanCopy), which keeps it after its own handle's free.
 */
#define NVA_FERMI_VASPACE_A		0x90f1

#define NVA_NV_OK			0x00
#define NVA_ERR_INVALID_ADDRESS		0x1E
#define NVA_ERR_INSUFFICIENT_PERMISSIONS 0x1B
#define NVA_ERR_INSUFFICIENT_RESOURCES	0x1A
#define NVA_ERR_INVALID_ARGUMENT	0x1F
#define NVA_ERR_NO_MEMORY		0x51
#define NVA_ERR_NO_FREE_FIFOS		0x4F
#define NVA_ERR_NOT_SUPPORTED		0x56
#define NVA_ERR_INVALID_LIMIT		0x2E
#define NVA_ERR_INVALID_CLIENT		0x23

/*
 * UvmGpuMemoryInfo (nv_uvm_types.h), what nvUvmInterfaceDupMemory says of what it
 * duplicated: the places of sysmem and of size (the memory's bytes, which bound a
 * mapping of it), the same in 535 and 550.
 */
#define NVA_UVM_MEMINFO_SYSMEM_OFF	4
#define NVA_UVM_MEMINFO_SIZE_OFF	32
#define NVA_UVM_MEMINFO_SIZE		56

/*
 * UVM_MAP_EXTERNAL_SPARSE_PARAMS, UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS,
 * UVM_ALLOC_SEMAPHORE_POOL_PARAMS and UVM_FREE_PARAMS (uvm_ioctl.h), as nvidia-uvm's
 * handlers get them (their kernel copy): the span of VA, base then length, first; the
 * GPU UUID of a sparse mapping or a dynamic parallelism region after them. The same in
 * 535 and 550.
 */
#define NVA_UVM_SPAN_BASE_OFF		0
#define NVA_UVM_SPAN_LENGTH_OFF		8
#define NVA_UVM_SPAN_UUID_OFF		16

/*
 * Managed memory's ways in (uvm.c): uvm_va_space_create's flags, where DISABLE_HMM keeps
 * a va_space from the process's pageable memory, and uvm_va_range_create_mmap's answer
 * to a mmap over a range that exists, with which uvm_mmap still maps a semaphore pool's
 * (uvm_types.h, nvstatuscodes.h; the same in 535 and 550).
 */
#define NVA_UVM_INIT_FLAGS_DISABLE_HMM	0x1ULL
#define NVA_ERR_UVM_ADDRESS_IN_USE	0x68

/* NVOS21_PARAMETERS (32 bytes) and NVOS64_PARAMETERS (48): the same first 24 bytes. */
struct nva_nvos21 {
	u32 hRoot;
	u32 hObjectParent;
	u32 hObjectNew;
	u32 hClass;
	u64 pAllocParms;
	u32 paramsSize;
	u32 status;
};

struct nva_nvos64 {
	u32 hRoot;
	u32 hObjectParent;
	u32 hObjectNew;
	u32 hClass;
	u64 pAllocParms;
	u64 pRightsRequested;
	u32 paramsSize;
	u32 flags;
	u32 status;
	u32 pad;
};

/* NVOS00_PARAMETERS: NV_ESC_RM_FREE */
struct nva_nvos00 {
	u32 hRoot;
	u32 hObjectParent;
	u32 hObjectOld;
	u32 status;
};

/*
 * NVOS02_PARAMETERS, NV_ESC_RM_ALLOC_MEMORY's block inside nv_ioctl_nvos02_parameters_with_fd
 * (with the fd of a mapping after it): RM's deprecated allocation API, whose classes
 * include video-memory ones (rmapi_deprecated_allocmemory.c).
 */
struct nva_nvos02 {
	u32 hRoot;
	u32 hObjectParent;
	u32 hObjectNew;
	u32 hClass;
	u32 flags;
	u32 pad0;
	u64 pMemory;
	u64 limit;
	u32 status;
	u32 pad1;
};
#define NVA_NVOS02_WITH_FD_SIZE	56

/* NVOS05_PARAMETERS: NV_ESC_RM_ALLOC_OBJECT, an object of a class without parameters */
struct nva_nvos05 {
	u32 hRoot;
	u32 hObjectParent;
	u32 hObjectNew;
	u32 hClass;
	u32 status;
};

/*
 * RM_CONTROLs on a client that bring another process's object into the caller's
 * client through a file descriptor (ctrl0000unix.h): an import is a duplicate.
 */
#define NVA_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD	0x3d06
#define NVA_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD	0x3d0c
/* ... and exports to one: RM keeps the object in its export client until the fd closes. */
#define NVA_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD		0x3d05
#define NVA_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD	0x3d0b

/*
 * NVOS46_PARAMETERS: NV_ESC_RM_MAP_MEMORY_DMA, hMemory's offset..offset+length mapped
 * into hDma (a VA range). RM reserves page-table memory for length before it checks it
 * against the range (serverInterMap_Prologue).
 */
struct nva_nvos46 {
	u32 hClient;
	u32 hDevice;
	u32 hDma;
	u32 hMemory;
	u64 offset;
	u64 length;
	u32 flags;
	u32 pad0;
	u64 dmaOffset;
	u32 status;
	u32 pad1;
};

/* NVOS55_PARAMETERS: NV_ESC_RM_DUP_OBJECT */
struct nva_nvos55 {
	u32 hClient;
	u32 hParent;
	u32 hObject;
	u32 hClientSrc;
	u32 hObjectSrc;
	u32 flags;
	u32 status;
};

/*
 * NVOS32_PARAMETERS (NV_ESC_RM_VID_HEAP_CONTROL, 184 bytes): the head, before the
 * function's union. The functions that neither allocate nor are unknown; every other
 * one (ALLOC_SIZE, ALLOC_SIZE_RANGE, ALLOC_TILED_PITCH_HEIGHT, HW_ALLOC, and any added
 * later) can make video memory outside RM_ALLOC.
 */
struct nva_nvos32_head {
	u32 hRoot;
	u32 hObjectParent;
	u32 function;
	u32 hVASpace;
	s16 ivcHeapNumber;
	u32 status;
	u64 total;
	u64 free;
};
#define NVA_NVOS32_SIZE			184
#define NVA_NVOS32_FUNCTION_FREE	3
#define NVA_NVOS32_FUNCTION_INFO	5
#define NVA_NVOS32_FUNCTION_DUMP	11
#define NVA_NVOS32_FUNCTION_REACQUIRE_COMPR 15
#define NVA_NVOS32_FUNCTION_RELEASE_COMPR 16
#define NVA_NVOS32_FUNCTION_GET_MEM_ALIGNMENT 18
#define NVA_NVOS32_FUNCTION_HW_FREE	20
#define NVA_NVOS32_FUNCTION_ALLOC_OS_DESCRIPTOR 27

/* nv_ioctl_xfer_t: NV_ESC_IOCTL_XFER_CMD's block, naming the real one */
struct nva_xfer {
	u32 cmd;
	u32 size;
	u64 ptr;
};

/*
 * NV_MEMORY_ALLOCATION_PARAMS grew from 120 bytes to 128 in 545.23.06; its size field
 * stayed at 64, the one field read here.
 */
#define NVA_MEMPARAMS_SIZE_OFF	64

/*
 * The RM API NVIDIA's driver gives kernel clients: nvidia_get_rm_ops() (exported; the
 * caller's version_string must be the driver's own) fills nvidia_modeset_rm_ops_t,
 * whose op (rm_kernel_rmapi_op) runs one nvidia_kernel_rmapi_ops_t with kernel
 * privilege and parameters in kernel memory (nv-kernel-rmapi-ops.h).
 */
struct nva_rm_ops {
	const char *version_string;
	struct {
		u8 allow_write_combining;
	} system_info;
	int (*alloc_stack)(void **sp);
	void (*free_stack)(void *sp);
	u32 (*enumerate_gpus)(void *gpu_info);
	int (*open_gpu)(u32 gpu_id, void *sp);
	void (*close_gpu)(u32 gpu_id, void *sp);
	void (*op)(void *sp, void *ops_cmd);
	int (*set_callbacks)(const void *cb);
};

#define NVA_NV01_FREE		0x00
#define NVA_NV04_CONTROL	0x36

/* NVOS54_PARAMETERS */
struct nva_nvos54 {
	u32 hClient;
	u32 hObject;
	u32 cmd;
	u32 flags;
	u64 params;
	u32 paramsSize;
	u32 status;
};

/* nvidia_kernel_rmapi_ops_t: op, then the union (of NVIDIA's size) of the blocks. */
#define NVA_RMAPI_OPS_SIZE	64
struct nva_rmapi_ops {
	u32 op;
	u32 pad;
	union {
		struct nva_nvos00 free;
		struct nva_nvos54 control;
		u8 all[NVA_RMAPI_OPS_SIZE - 8];
	} params;
};

/* NV0041_CTRL_CMD_GET_SURFACE_INFO: a memory object's size (4 KiB units) and place. */
#define NVA_NV0041_CTRL_CMD_GET_SURFACE_INFO	0x410110
#define NVA_NV0041_SURFACE_INFO_INDEX_PHYS_SIZE	7
#define NVA_NV0041_SURFACE_INFO_INDEX_ADDR_SPACE_TYPE 9
#define NVA_NV0041_SURFACE_INFO_PHYS_SIZE_SCALE	0x1000
#define NVA_ADDR_SPACE_TYPE_VIDMEM		2
/*
 * What the GPU holds for video memory is that size rounded up to 64 KiB: RM's physical
 * allocator takes memory of 4 KiB pages in 64 KiB pages, while the memory's descriptor,
 * which PHYS_SIZE reports, keeps the 4 KiB-rounded size (video_mem.c,
 * _vidmemPmaAllocate; simdrv/conformance checks it in 535's source).
 */
#define NVA_PMA_GRANULE				0x10000ULL
struct nva_nv0041_surface_info {
	u32 index;
	u32 data;
};
struct nva_nv0041_get_surface_info {
	u32 surfaceInfoListSize;
	u32 pad;
	u64 surfaceInfoList;
};

/* NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO on a client: the class or parent of one of its objects. */
#define NVA_NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO	0xd02
#define NVA_GET_HANDLE_INFO_INDEX_PARENT		1
#define NVA_GET_HANDLE_INFO_INDEX_CLASSID		2
struct nva_nv0000_get_handle_info {
	u32 hObject;
	u32 index;
	u64 data;
};

/*
 * Which GPU a device or subdevice is on, by handle: a device's subdevice 0, a
 * subdevice's GPU id, and that id's device instance (on a client), the number
 * NV0080_ALLOC_PARAMETERS.deviceId names.
 */
#define NVA_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE	0x800293
struct nva_nv0080_find_subdevice {
	u32 subDeviceInst;
	u32 hSubDevice;
};
#define NVA_NV2080_CTRL_CMD_GPU_GET_ID			0x20800142
struct nva_nv2080_get_id {
	u32 gpuId;
};
#define NVA_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2		0x205
struct nva_nv0000_get_id_info_v2 {
	u32 gpuId;
	u32 gpuFlags;
	u32 deviceInstance;
	u32 subDeviceInstance;
	u32 sliStatus;
	u32 boardId;
	u32 gpuInstance;
	s32 numaId;
};

static_assert(sizeof(struct nva_nvos21) == 32);
static_assert(sizeof(struct nva_nvos64) == 48);
static_assert(sizeof(struct nva_nvos00) == 16);
static_assert(sizeof(struct nva_xfer) == 16);
static_assert(sizeof(struct nva_nvos55) == 28);
static_assert(offsetof(struct nva_nvos21, status) == 28);
static_assert(offsetof(struct nva_nvos64, status) == 40);
static_assert(offsetof(struct nva_nvos32_head, status) == 20);
static_assert(sizeof(struct nva_nvos32_head) == 40);
static_assert(sizeof(struct nva_nvos54) == 32);
static_assert(sizeof(struct nva_nvos02) == 48);
static_assert(sizeof(struct nva_nvos05) == 20);
static_assert(sizeof(struct nva_rmapi_ops) == NVA_RMAPI_OPS_SIZE);

#endif
