// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Compiles only if every number, size and offset of lib/abi.h equals NVIDIA's own, from
 * the headers of one driver release (conformance/run.sh builds it once per release).
 * SD_REF_MAJOR is the release's major version; SD_REF_RM is defined when the RM's
 * headers (nvos.h, nv_escape.h, class headers) are at hand, not only kernel-open's.
 * nvref.h holds the kernel-open numbers that live in kernel-only headers, as run.sh
 * found them there.
 */
#include <stddef.h>
#include "nvtypes.h"
#include "nvstatus.h"
#include "nv-ioctl-numbers.h"
#include "nv-ioctl.h"
#include "nvlimits.h"
#include "nvref.h"
#include "abi.h"
#include "../../kmod/nvabi.h"	/* cgpu_km's own copy (kshim/ stands in for the kernel) */

#define SAME(ours, theirs) _Static_assert((ours) == (theirs), #ours " != " #theirs)
#define SAME_SIZE(ours, theirs) _Static_assert(sizeof(struct ours) == sizeof(theirs), \
	"size of " #ours " != " #theirs)
#define SAME_FIELD(ours, theirs, f) \
	_Static_assert(offsetof(struct ours, f) == offsetof(theirs, f), #ours "." #f " offset"); \
	_Static_assert(sizeof(((struct ours *)0)->f) == sizeof(((theirs *)0)->f), #ours "." #f " size")

/* Device numbers and escapes of kernel-open */
SAME(SD_MAJOR, NVREF_MAJOR);
SAME(SD_CTL_MINOR, NVREF_CTL_MINOR);
SAME(SD_MAX_IOCTL_SIZE, NVREF_MAX_IOCTL_SIZE);
SAME(SD_MAX_DEVICES, NV_MAX_DEVICES);
SAME(SD_IOCTL_MAGIC, NV_IOCTL_MAGIC);
SAME(SD_ESC_CARD_INFO, NV_ESC_CARD_INFO);
SAME(SD_ESC_REGISTER_FD, NV_ESC_REGISTER_FD);
SAME(NVA_ESC_REGISTER_FD, NV_ESC_REGISTER_FD);
SAME_SIZE(sd_register_fd, nv_ioctl_register_fd_t);
SAME_FIELD(sd_register_fd, nv_ioctl_register_fd_t, ctl_fd);
SAME(SD_NV_FLAG_CONTROL, NVREF_FLAG_CONTROL);
SAME(NVA_NV_FLAG_CONTROL, NVREF_FLAG_CONTROL);
_Static_assert(sizeof(struct sd_nv_state_head) == sizeof(struct nva_nv_state_head) &&
	offsetof(struct sd_nv_state_head, flags) == offsetof(struct nva_nv_state_head, flags),
	"the two copies of nv_state_t's head");
SAME(SD_ESC_CHECK_VERSION_STR, NV_ESC_CHECK_VERSION_STR);
SAME(SD_ESC_IOCTL_XFER_CMD, NV_ESC_IOCTL_XFER_CMD);
SAME(SD_ESC_ATTACH_GPUS_TO_FD, NV_ESC_ATTACH_GPUS_TO_FD);
SAME(SD_ESC_EXPORT_TO_DMABUF_FD, NV_ESC_EXPORT_TO_DMABUF_FD);
SAME(SD_DMABUF_EXPORT_MAX_HANDLES, NV_DMABUF_EXPORT_MAX_HANDLES);
SAME_SIZE(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, fd);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, hClient);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, totalObjects);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, numObjects);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, index);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, totalSize);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, handles);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, offsets);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, sizes);
SAME_FIELD(sd_export_dmabuf, nv_ioctl_export_to_dma_buf_fd_t, status);

/* Status codes */
SAME(SD_NV_OK, NV_OK);
SAME(SD_NV_ERR_INSERT_DUPLICATE_NAME, NV_ERR_INSERT_DUPLICATE_NAME);
SAME(SD_NV_ERR_INSUFFICIENT_RESOURCES, NV_ERR_INSUFFICIENT_RESOURCES);
SAME(SD_NV_ERR_INSUFFICIENT_PERMISSIONS, NV_ERR_INSUFFICIENT_PERMISSIONS);
SAME(SD_NV_ERR_INVALID_ADDRESS, NV_ERR_INVALID_ADDRESS);
SAME(SD_NV_ERR_INVALID_ARGUMENT, NV_ERR_INVALID_ARGUMENT);
SAME(SD_NV_ERR_INVALID_CLASS, NV_ERR_INVALID_CLASS);
SAME(SD_NV_ERR_INVALID_CLIENT, NV_ERR_INVALID_CLIENT);
SAME(SD_NV_ERR_INVALID_OBJECT_HANDLE, NV_ERR_INVALID_OBJECT_HANDLE);
SAME(SD_NV_ERR_INVALID_DEVICE, NV_ERR_INVALID_DEVICE);
SAME(SD_NV_ERR_OUT_OF_RANGE, NV_ERR_OUT_OF_RANGE);
SAME(SD_NV_ERR_INVALID_OBJECT_PARENT, NV_ERR_INVALID_OBJECT_PARENT);
SAME(SD_NV_ERR_INVALID_OWNER, NV_ERR_INVALID_OWNER);
SAME(SD_NV_ERR_NO_MEMORY, NV_ERR_NO_MEMORY);
SAME(SD_NV_ERR_NOT_SUPPORTED, NV_ERR_NOT_SUPPORTED);
SAME(SD_NV_ERR_INVALID_OBJECT, NV_ERR_INVALID_OBJECT);
SAME(SD_NV_ERR_IN_USE, NV_ERR_IN_USE);
SAME(SD_NV_ERR_OPERATING_SYSTEM, NV_ERR_OPERATING_SYSTEM);
SAME(SD_NV_ERR_OBJECT_NOT_FOUND, NV_ERR_OBJECT_NOT_FOUND);

/* nv_ioctl_xfer_t */
SAME_SIZE(sd_xfer, nv_ioctl_xfer_t);
SAME_FIELD(sd_xfer, nv_ioctl_xfer_t, cmd);
SAME_FIELD(sd_xfer, nv_ioctl_xfer_t, size);
SAME_FIELD(sd_xfer, nv_ioctl_xfer_t, ptr);
SAME(NVA_ESC_IOCTL_XFER_CMD, NV_ESC_IOCTL_XFER_CMD);
SAME_SIZE(nva_xfer, nv_ioctl_xfer_t);
SAME_FIELD(nva_xfer, nv_ioctl_xfer_t, cmd);
SAME_FIELD(nva_xfer, nv_ioctl_xfer_t, size);
SAME_FIELD(nva_xfer, nv_ioctl_xfer_t, ptr);

/* nv_ioctl_card_info_t, with nv_pci_info_t's fields where ours has them inline */
SAME_SIZE(sd_card_info, nv_ioctl_card_info_t);
SAME_FIELD(sd_card_info, nv_ioctl_card_info_t, valid);
#define PCI(f) _Static_assert(offsetof(struct sd_card_info, f) == \
	offsetof(nv_ioctl_card_info_t, pci_info) + offsetof(nv_pci_info_t, f), "sd_card_info." #f " offset"); \
	_Static_assert(sizeof(((struct sd_card_info *)0)->f) == sizeof(((nv_pci_info_t *)0)->f), "sd_card_info." #f " size")
PCI(domain);
PCI(bus);
PCI(slot);
PCI(function);
PCI(vendor_id);
PCI(device_id);
_Static_assert(offsetof(nv_ioctl_card_info_t, gpu_id) - offsetof(nv_ioctl_card_info_t, pci_info) ==
	sizeof(nv_pci_info_t), "nv_pci_info_t ends where gpu_id starts");
SAME_FIELD(sd_card_info, nv_ioctl_card_info_t, gpu_id);
SAME_FIELD(sd_card_info, nv_ioctl_card_info_t, interrupt_line);
SAME_FIELD(sd_card_info, nv_ioctl_card_info_t, reg_address);
SAME_FIELD(sd_card_info, nv_ioctl_card_info_t, reg_size);
SAME_FIELD(sd_card_info, nv_ioctl_card_info_t, fb_address);
SAME_FIELD(sd_card_info, nv_ioctl_card_info_t, fb_size);
SAME_FIELD(sd_card_info, nv_ioctl_card_info_t, minor_number);
SAME_FIELD(sd_card_info, nv_ioctl_card_info_t, dev_name);

/* nv_ioctl_rm_api_version_t */
SAME_SIZE(sd_rm_api_version, nv_ioctl_rm_api_version_t);
SAME_FIELD(sd_rm_api_version, nv_ioctl_rm_api_version_t, cmd);
SAME_FIELD(sd_rm_api_version, nv_ioctl_rm_api_version_t, reply);
SAME_FIELD(sd_rm_api_version, nv_ioctl_rm_api_version_t, versionString);
SAME(SD_VERSION_STRING_LENGTH, NV_RM_API_VERSION_STRING_LENGTH);
SAME(SD_VERSION_CMD_STRICT, NV_RM_API_VERSION_CMD_STRICT);
SAME(SD_VERSION_CMD_RELAXED, NV_RM_API_VERSION_CMD_RELAXED);
SAME(SD_VERSION_CMD_QUERY, NV_RM_API_VERSION_CMD_QUERY);
SAME(SD_VERSION_REPLY_RECOGNIZED, NV_RM_API_VERSION_REPLY_RECOGNIZED);

#ifdef SD_REF_RM
#include "nvos.h"
#include "nv_escape.h"
#include "class/cl0000.h"
#include "class/cl0001.h"
#include "class/cl0040.h"
#include "class/cl0080.h"
#include "class/cl2080.h"

SAME(SD_ESC_RM_FREE, NV_ESC_RM_FREE);
SAME(SD_ESC_RM_ALLOC, NV_ESC_RM_ALLOC);
SAME(SD_ESC_RM_CONTROL, NV_ESC_RM_CONTROL);
SAME(SD_ESC_RM_DUP_OBJECT, NV_ESC_RM_DUP_OBJECT);
SAME(SD_NV01_ROOT, NV01_ROOT);
SAME(SD_NV01_ROOT_NON_PRIV, NV01_ROOT_NON_PRIV);
SAME(SD_NV01_ROOT_CLIENT, NV01_ROOT_CLIENT);
SAME(SD_NV01_MEMORY_LOCAL_USER, NV01_MEMORY_LOCAL_USER);
SAME(SD_NV01_DEVICE_0, NV01_DEVICE_0);
SAME(SD_NV20_SUBDEVICE_0, NV20_SUBDEVICE_0);

#define ALLOC_FIELDS(ours, theirs) \
	SAME_FIELD(ours, theirs, hRoot); SAME_FIELD(ours, theirs, hObjectParent); \
	SAME_FIELD(ours, theirs, hObjectNew); SAME_FIELD(ours, theirs, hClass); \
	SAME_FIELD(ours, theirs, pAllocParms); SAME_FIELD(ours, theirs, paramsSize); \
	SAME_FIELD(ours, theirs, status)
SAME_SIZE(sd_nvos21, NVOS21_PARAMETERS);
ALLOC_FIELDS(sd_nvos21, NVOS21_PARAMETERS);
SAME_SIZE(sd_nvos64, NVOS64_PARAMETERS);
ALLOC_FIELDS(sd_nvos64, NVOS64_PARAMETERS);
SAME_FIELD(sd_nvos64, NVOS64_PARAMETERS, pRightsRequested);
SAME_FIELD(sd_nvos64, NVOS64_PARAMETERS, flags);

SAME_SIZE(sd_nvos00, NVOS00_PARAMETERS);
SAME_FIELD(sd_nvos00, NVOS00_PARAMETERS, hRoot);
SAME_FIELD(sd_nvos00, NVOS00_PARAMETERS, hObjectParent);
SAME_FIELD(sd_nvos00, NVOS00_PARAMETERS, hObjectOld);
SAME_FIELD(sd_nvos00, NVOS00_PARAMETERS, status);

SAME(SD_ESC_RM_MAP_MEMORY_DMA, NV_ESC_RM_MAP_MEMORY_DMA);
SAME(SD_ESC_RM_UNMAP_MEMORY_DMA, NV_ESC_RM_UNMAP_MEMORY_DMA);
#define DMA_FIELDS(ours, theirs) \
	SAME_FIELD(ours, theirs, hClient); SAME_FIELD(ours, theirs, hDevice); \
	SAME_FIELD(ours, theirs, hDma); SAME_FIELD(ours, theirs, hMemory); \
	SAME_FIELD(ours, theirs, flags); SAME_FIELD(ours, theirs, dmaOffset); \
	SAME_FIELD(ours, theirs, status)
SAME_SIZE(sd_nvos46, NVOS46_PARAMETERS);
DMA_FIELDS(sd_nvos46, NVOS46_PARAMETERS);
SAME_SIZE(nva_nvos46, NVOS46_PARAMETERS);
DMA_FIELDS(nva_nvos46, NVOS46_PARAMETERS);
SAME_FIELD(nva_nvos46, NVOS46_PARAMETERS, length);
SAME(NVA_ESC_RM_MAP_MEMORY_DMA, NV_ESC_RM_MAP_MEMORY_DMA);
SAME_FIELD(sd_nvos46, NVOS46_PARAMETERS, offset);
SAME_FIELD(sd_nvos46, NVOS46_PARAMETERS, length);
SAME_SIZE(sd_nvos47, NVOS47_PARAMETERS);
DMA_FIELDS(sd_nvos47, NVOS47_PARAMETERS);

SAME_SIZE(sd_nvos55, NVOS55_PARAMETERS);
SAME_FIELD(sd_nvos55, NVOS55_PARAMETERS, hClient);
SAME_FIELD(sd_nvos55, NVOS55_PARAMETERS, hParent);
SAME_FIELD(sd_nvos55, NVOS55_PARAMETERS, hObject);
SAME_FIELD(sd_nvos55, NVOS55_PARAMETERS, hClientSrc);
SAME_FIELD(sd_nvos55, NVOS55_PARAMETERS, hObjectSrc);
SAME_FIELD(sd_nvos55, NVOS55_PARAMETERS, flags);
SAME_FIELD(sd_nvos55, NVOS55_PARAMETERS, status);

SAME_SIZE(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS);
SAME_FIELD(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS, deviceId);
SAME_FIELD(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS, hClientShare);
SAME_FIELD(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS, hTargetClient);
SAME_FIELD(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS, hTargetDevice);
SAME_FIELD(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS, flags);
SAME_FIELD(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS, vaSpaceSize);
SAME_FIELD(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS, vaStartInternal);
SAME_FIELD(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS, vaLimitInternal);
SAME_FIELD(sd_nv0080_alloc, NV0080_ALLOC_PARAMETERS, vaMode);
SAME(SD_DEVICE_VAMODE_MULTIPLE_VASPACES, NV_DEVICE_ALLOCATION_VAMODE_MULTIPLE_VASPACES);
SAME_SIZE(sd_nv2080_alloc, NV2080_ALLOC_PARAMETERS);
SAME_FIELD(sd_nv2080_alloc, NV2080_ALLOC_PARAMETERS, subDeviceId);

/* NV_MEMORY_ALLOCATION_PARAMS: ours always has room for numaNode (545.23.06 on). */
#define MEM(f) SAME_FIELD(sd_memory_alloc, NV_MEMORY_ALLOCATION_PARAMS, f)
MEM(owner); MEM(type); MEM(flags); MEM(width); MEM(height); MEM(pitch); MEM(attr);
MEM(attr2); MEM(format); MEM(comprCovg); MEM(zcullCovg); MEM(rangeLo); MEM(rangeHi);
MEM(size); MEM(alignment); MEM(offset); MEM(limit); MEM(address); MEM(ctagOffset);
MEM(hVASpace); MEM(internalflags); MEM(tag);
#if SD_REF_MAJOR >= 545
MEM(numaNode);
SAME(SD_MEMPARAMS_SIZE_NEW, sizeof(NV_MEMORY_ALLOCATION_PARAMS));
#else
SAME(SD_MEMPARAMS_SIZE_OLD, sizeof(NV_MEMORY_ALLOCATION_PARAMS));
#endif
SAME(SD_MEMPARAMS_SIZE_NEW, sizeof(struct sd_memory_alloc));

/* NVOS32 fields: DRF ranges are hi:lo, taken apart with ?: as NVIDIA's DRF macros do. */
#define LO(r) (0 ? r)
#define HI(r) (1 ? r)
SAME(SD_ATTR_PAGE_SIZE_SHIFT, LO(NVOS32_ATTR_PAGE_SIZE));
SAME(SD_ATTR_PAGE_SIZE_MASK, (1u << (HI(NVOS32_ATTR_PAGE_SIZE) - LO(NVOS32_ATTR_PAGE_SIZE) + 1)) - 1);
SAME(SD_ATTR_PAGE_SIZE_DEFAULT, NVOS32_ATTR_PAGE_SIZE_DEFAULT);
SAME(SD_ATTR_PAGE_SIZE_4KB, NVOS32_ATTR_PAGE_SIZE_4KB);
SAME(SD_ATTR_PAGE_SIZE_BIG, NVOS32_ATTR_PAGE_SIZE_BIG);
SAME(SD_ATTR_PAGE_SIZE_HUGE, NVOS32_ATTR_PAGE_SIZE_HUGE);
SAME(SD_ATTR_LOCATION_SHIFT, LO(NVOS32_ATTR_LOCATION));
SAME(SD_ATTR_LOCATION_MASK, (1u << (HI(NVOS32_ATTR_LOCATION) - LO(NVOS32_ATTR_LOCATION) + 1)) - 1);
SAME(SD_ATTR_LOCATION_VIDMEM, NVOS32_ATTR_LOCATION_VIDMEM);
SAME(SD_ATTR_LOCATION_PCI, NVOS32_ATTR_LOCATION_PCI);
SAME(SD_ATTR2_PAGE_SIZE_HUGE_SHIFT, LO(NVOS32_ATTR2_PAGE_SIZE_HUGE));
SAME(SD_ATTR2_PAGE_SIZE_HUGE_MASK,
	(1u << (HI(NVOS32_ATTR2_PAGE_SIZE_HUGE) - LO(NVOS32_ATTR2_PAGE_SIZE_HUGE) + 1)) - 1);
SAME(SD_ATTR2_PAGE_SIZE_HUGE_512MB, NVOS32_ATTR2_PAGE_SIZE_HUGE_512MB);
SAME(SD_ALLOC_FLAGS_USE_BEGIN_END, NVOS32_ALLOC_FLAGS_USE_BEGIN_END);
SAME(SD_ALLOC_FLAGS_VIRTUAL, NVOS32_ALLOC_FLAGS_VIRTUAL);
SAME(SD_ALLOC_FLAGS_LAZY, NVOS32_ALLOC_FLAGS_LAZY);
SAME(SD_ALLOC_FLAGS_EXTERNALLY_MANAGED, NVOS32_ALLOC_FLAGS_EXTERNALLY_MANAGED);
SAME(SD_ALLOC_FLAGS_SPARSE, NVOS32_ALLOC_FLAGS_SPARSE);

#include "class/cl0042.h"
#include "class/cl00c2.h"
#include "class/cl00f8.h"
#include "class/cl00fd.h"
#include "class/cla06c.h"
#include "class/clc574.h"
#include "class/cl90f1.h"
#include "class/cl906f.h"
#include "class/cla06f.h"
#include "class/cla16f.h"
#include "class/clb06f.h"
#include "class/clc06f.h"
#include "class/clc36f.h"
#include "class/clc46f.h"
#include "class/clc56f.h"
#include "class/clc86f.h"
#include "class/cl9067.h"
#include "alloc/alloc_channel.h"
SAME(SD_KEPLER_CHANNEL_GROUP_A, KEPLER_CHANNEL_GROUP_A);
SAME(SD_UVM_CHANNEL_RETAINER, UVM_CHANNEL_RETAINER);
SAME(SD_FERMI_VASPACE_A, FERMI_VASPACE_A);
SAME(SD_VASPACE_FLAGS_IS_EXTERNALLY_OWNED, NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED);
SAME_SIZE(sd_vaspace_alloc, NV_VASPACE_ALLOCATION_PARAMETERS);
SAME_FIELD(sd_vaspace_alloc, NV_VASPACE_ALLOCATION_PARAMETERS, index);
SAME_FIELD(sd_vaspace_alloc, NV_VASPACE_ALLOCATION_PARAMETERS, flags);
SAME_FIELD(sd_vaspace_alloc, NV_VASPACE_ALLOCATION_PARAMETERS, vaSize);
SAME_FIELD(sd_vaspace_alloc, NV_VASPACE_ALLOCATION_PARAMETERS, vaStartInternal);
SAME_FIELD(sd_vaspace_alloc, NV_VASPACE_ALLOCATION_PARAMETERS, vaLimitInternal);
SAME_FIELD(sd_vaspace_alloc, NV_VASPACE_ALLOCATION_PARAMETERS, bigPageSize);
SAME_FIELD(sd_vaspace_alloc, NV_VASPACE_ALLOCATION_PARAMETERS, vaBase);
SAME(SD_TURING_CHANNEL_GPFIFO_A, TURING_CHANNEL_GPFIFO_A);
SAME(SD_NV_ERR_NO_FREE_FIFOS, NV_ERR_NO_FREE_FIFOS);
SAME_SIZE(sd_channel_group_alloc, NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS);
SAME_FIELD(sd_channel_group_alloc, NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, hObjectError);
SAME_FIELD(sd_channel_group_alloc, NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, hObjectEccError);
SAME_FIELD(sd_channel_group_alloc, NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, hVASpace);
SAME_FIELD(sd_channel_group_alloc, NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, engineType);
SAME_FIELD(sd_channel_group_alloc, NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, bIsCallingContextVgpuPlugin);
SAME_FIELD(sd_channel_alloc_head, NV_CHANNEL_ALLOC_PARAMS, hObjectError);
SAME(SD_ESC_RM_VID_HEAP_CONTROL, NV_ESC_RM_VID_HEAP_CONTROL);
SAME(SD_NV_MEMORY_EXTENDED_USER, NV_MEMORY_EXTENDED_USER);
SAME(SD_NV01_MEMORY_LOCAL_PHYSICAL, NV01_MEMORY_LOCAL_PHYSICAL);
SAME(SD_NV_MEMORY_FABRIC, NV_MEMORY_FABRIC);
SAME(SD_NV_MEMORY_MULTICAST_FABRIC, NV_MEMORY_MULTICAST_FABRIC);
SAME(SD_NVOS32_SIZE, sizeof(NVOS32_PARAMETERS));
SAME(sizeof(struct sd_nvos32_head), offsetof(NVOS32_PARAMETERS, data));
SAME_FIELD(sd_nvos32_head, NVOS32_PARAMETERS, hRoot);
SAME_FIELD(sd_nvos32_head, NVOS32_PARAMETERS, hObjectParent);
SAME_FIELD(sd_nvos32_head, NVOS32_PARAMETERS, function);
SAME_FIELD(sd_nvos32_head, NVOS32_PARAMETERS, hVASpace);
SAME_FIELD(sd_nvos32_head, NVOS32_PARAMETERS, ivcHeapNumber);
SAME_FIELD(sd_nvos32_head, NVOS32_PARAMETERS, status);
SAME_FIELD(sd_nvos32_head, NVOS32_PARAMETERS, total);
SAME_FIELD(sd_nvos32_head, NVOS32_PARAMETERS, free);
SAME(SD_NVOS32_FUNCTION_ALLOC_SIZE, NVOS32_FUNCTION_ALLOC_SIZE);
SAME(SD_NVOS32_FUNCTION_INFO, NVOS32_FUNCTION_INFO);

/* kmod/nvabi.h: what cgpu_km's enforce=1 reads of the real driver's calls */
SAME(NVA_CTL_MINOR, NVREF_CTL_MINOR);
/* RM_PAGE_SIZE_64K of _vidmemPmaAllocate (run.sh checks the function), in both models. */
#include "rm.h"
SAME(NVA_PMA_GRANULE, 0x10000ULL);
SAME(SD_PMA_GRANULE, NVA_PMA_GRANULE);
SAME(NVA_ESC_RM_FREE, NV_ESC_RM_FREE);
SAME(NVA_ESC_RM_ALLOC, NV_ESC_RM_ALLOC);
SAME(NVA_ESC_RM_DUP_OBJECT, NV_ESC_RM_DUP_OBJECT);
SAME(NVA_ESC_RM_VID_HEAP_CONTROL, NV_ESC_RM_VID_HEAP_CONTROL);
SAME(NVA_NV01_MEMORY_LOCAL_USER, NV01_MEMORY_LOCAL_USER);
SAME(NVA_NV01_DEVICE_0, NV01_DEVICE_0);
SAME(NVA_NV20_SUBDEVICE_0, NV20_SUBDEVICE_0);
SAME(NVA_NV_MEMORY_EXTENDED_USER, NV_MEMORY_EXTENDED_USER);
SAME(NVA_NV01_MEMORY_LOCAL_PHYSICAL, NV01_MEMORY_LOCAL_PHYSICAL);
SAME(NVA_NV_MEMORY_FABRIC, NV_MEMORY_FABRIC);
SAME(NVA_NV_MEMORY_MULTICAST_FABRIC, NV_MEMORY_MULTICAST_FABRIC);
#if __has_include("class/cl00e0.h")
#include "class/cl00e0.h"
SAME(NVA_NV_MEMORY_EXPORT, NV_MEMORY_EXPORT);
SAME(SD_NV_MEMORY_EXPORT, NV_MEMORY_EXPORT);
#endif
SAME(NVA_KEPLER_CHANNEL_GROUP_A, KEPLER_CHANNEL_GROUP_A);
SAME(NVA_GF100_CHANNEL_GPFIFO, GF100_CHANNEL_GPFIFO);
SAME(NVA_KEPLER_CHANNEL_GPFIFO_A, KEPLER_CHANNEL_GPFIFO_A);
SAME(NVA_KEPLER_CHANNEL_GPFIFO_B, KEPLER_CHANNEL_GPFIFO_B);
SAME(NVA_MAXWELL_CHANNEL_GPFIFO_A, MAXWELL_CHANNEL_GPFIFO_A);
SAME(NVA_PASCAL_CHANNEL_GPFIFO_A, PASCAL_CHANNEL_GPFIFO_A);
SAME(NVA_VOLTA_CHANNEL_GPFIFO_A, VOLTA_CHANNEL_GPFIFO_A);
SAME(NVA_TURING_CHANNEL_GPFIFO_A, TURING_CHANNEL_GPFIFO_A);
SAME(NVA_AMPERE_CHANNEL_GPFIFO_A, AMPERE_CHANNEL_GPFIFO_A);
SAME(NVA_HOPPER_CHANNEL_GPFIFO_A, HOPPER_CHANNEL_GPFIFO_A);
SAME(NVA_FERMI_CONTEXT_SHARE_A, FERMI_CONTEXT_SHARE_A);
SAME(NVA_FERMI_VASPACE_A, FERMI_VASPACE_A);
SAME(NVA_NV_OK, NV_OK);
SAME(NVA_ERR_INVALID_ADDRESS, NV_ERR_INVALID_ADDRESS);
SAME(NVA_ERR_INSUFFICIENT_PERMISSIONS, NV_ERR_INSUFFICIENT_PERMISSIONS);
SAME(NVA_ERR_INSUFFICIENT_RESOURCES, NV_ERR_INSUFFICIENT_RESOURCES);
SAME(NVA_ERR_INVALID_ARGUMENT, NV_ERR_INVALID_ARGUMENT);
SAME(NVA_ERR_NO_MEMORY, NV_ERR_NO_MEMORY);
SAME(NVA_ERR_NO_FREE_FIFOS, NV_ERR_NO_FREE_FIFOS);
SAME(NVA_ERR_NOT_SUPPORTED, NV_ERR_NOT_SUPPORTED);
SAME(NVA_ERR_INVALID_LIMIT, NV_ERR_INVALID_LIMIT);
SAME(NVA_ERR_INVALID_CLIENT, NV_ERR_INVALID_CLIENT);
SAME_SIZE(nva_nvos21, NVOS21_PARAMETERS);
ALLOC_FIELDS(nva_nvos21, NVOS21_PARAMETERS);
SAME_SIZE(nva_nvos64, NVOS64_PARAMETERS);
ALLOC_FIELDS(nva_nvos64, NVOS64_PARAMETERS);
SAME_FIELD(nva_nvos64, NVOS64_PARAMETERS, pRightsRequested);
SAME_FIELD(nva_nvos64, NVOS64_PARAMETERS, flags);
SAME_SIZE(nva_nvos00, NVOS00_PARAMETERS);
SAME_FIELD(nva_nvos00, NVOS00_PARAMETERS, hRoot);
SAME_FIELD(nva_nvos00, NVOS00_PARAMETERS, hObjectParent);
SAME_FIELD(nva_nvos00, NVOS00_PARAMETERS, hObjectOld);
SAME_FIELD(nva_nvos00, NVOS00_PARAMETERS, status);
SAME_SIZE(nva_nvos55, NVOS55_PARAMETERS);
SAME_FIELD(nva_nvos55, NVOS55_PARAMETERS, hClient);
SAME_FIELD(nva_nvos55, NVOS55_PARAMETERS, hParent);
SAME_FIELD(nva_nvos55, NVOS55_PARAMETERS, hObject);
SAME_FIELD(nva_nvos55, NVOS55_PARAMETERS, hClientSrc);
SAME_FIELD(nva_nvos55, NVOS55_PARAMETERS, hObjectSrc);
SAME_FIELD(nva_nvos55, NVOS55_PARAMETERS, flags);
SAME_FIELD(nva_nvos55, NVOS55_PARAMETERS, status);
SAME(NVA_NVOS32_SIZE, sizeof(NVOS32_PARAMETERS));
SAME(sizeof(struct nva_nvos32_head), offsetof(NVOS32_PARAMETERS, data));
SAME_FIELD(nva_nvos32_head, NVOS32_PARAMETERS, hRoot);
SAME_FIELD(nva_nvos32_head, NVOS32_PARAMETERS, hObjectParent);
SAME_FIELD(nva_nvos32_head, NVOS32_PARAMETERS, function);
SAME_FIELD(nva_nvos32_head, NVOS32_PARAMETERS, hVASpace);
SAME_FIELD(nva_nvos32_head, NVOS32_PARAMETERS, ivcHeapNumber);
SAME_FIELD(nva_nvos32_head, NVOS32_PARAMETERS, status);
SAME_FIELD(nva_nvos32_head, NVOS32_PARAMETERS, total);
SAME_FIELD(nva_nvos32_head, NVOS32_PARAMETERS, free);
SAME(NVA_NVOS32_FUNCTION_FREE, NVOS32_FUNCTION_FREE);
SAME(NVA_NVOS32_FUNCTION_INFO, NVOS32_FUNCTION_INFO);
SAME(NVA_NVOS32_FUNCTION_DUMP, NVOS32_FUNCTION_DUMP);
SAME(NVA_NVOS32_FUNCTION_REACQUIRE_COMPR, NVOS32_FUNCTION_REACQUIRE_COMPR);
SAME(NVA_NVOS32_FUNCTION_RELEASE_COMPR, NVOS32_FUNCTION_RELEASE_COMPR);
SAME(NVA_NVOS32_FUNCTION_GET_MEM_ALIGNMENT, NVOS32_FUNCTION_GET_MEM_ALIGNMENT);
SAME(NVA_NVOS32_FUNCTION_HW_FREE, NVOS32_FUNCTION_HW_FREE);
SAME(NVA_NVOS32_FUNCTION_ALLOC_OS_DESCRIPTOR, NVOS32_FUNCTION_ALLOC_OS_DESCRIPTOR);
/* Every function NVIDIA defines is either passed or known to allocate. */
SAME(NVOS32_FUNCTION_ALLOC_SIZE, 2);
SAME(NVOS32_FUNCTION_ALLOC_TILED_PITCH_HEIGHT, 6);
SAME(NVOS32_FUNCTION_ALLOC_SIZE_RANGE, 14);
SAME(NVOS32_FUNCTION_HW_ALLOC, 19);
SAME(NVA_MEMPARAMS_SIZE_OFF, offsetof(NV_MEMORY_ALLOCATION_PARAMS, size));
/* RM's deprecated allocation calls and the imports from a file descriptor. */
#include "nv-unix-nvos-params-wrappers.h"
#include "ctrl/ctrl0000/ctrl0000unix.h"
#include "class/cl003e.h"
#include "class/cl0071.h"
#include "class/cl50a0.h"
SAME(SD_ESC_RM_ALLOC_MEMORY, NV_ESC_RM_ALLOC_MEMORY);
SAME(SD_ESC_RM_ALLOC_OBJECT, NV_ESC_RM_ALLOC_OBJECT);
SAME(SD_NV01_MEMORY_SYSTEM, NV01_MEMORY_SYSTEM);
SAME(SD_NV50_MEMORY_VIRTUAL, NV50_MEMORY_VIRTUAL);
SAME(NVA_NV50_MEMORY_VIRTUAL, NV50_MEMORY_VIRTUAL);
#include "class/cl0070.h"
#include "class/cl00fe.h"
SAME(NVA_NV_MEMORY_MAPPER, NV_MEMORY_MAPPER);
SAME(SD_NV_MEMORY_MAPPER, NV_MEMORY_MAPPER);
SAME(SD_NV01_MEMORY_VIRTUAL, NV01_MEMORY_VIRTUAL);
SAME(NVA_NV01_MEMORY_VIRTUAL, NV01_MEMORY_VIRTUAL);
#define OS02(ours) SAME_FIELD(ours, NVOS02_PARAMETERS, hRoot); \
	SAME_FIELD(ours, NVOS02_PARAMETERS, hObjectParent); SAME_FIELD(ours, NVOS02_PARAMETERS, hObjectNew); \
	SAME_FIELD(ours, NVOS02_PARAMETERS, hClass); SAME_FIELD(ours, NVOS02_PARAMETERS, flags); \
	SAME_FIELD(ours, NVOS02_PARAMETERS, pMemory); SAME_FIELD(ours, NVOS02_PARAMETERS, limit); \
	SAME_FIELD(ours, NVOS02_PARAMETERS, status); SAME_SIZE(ours, NVOS02_PARAMETERS)
OS02(sd_nvos02);
OS02(nva_nvos02);
SAME_SIZE(sd_nvos02_with_fd, nv_ioctl_nvos02_parameters_with_fd);
SAME_FIELD(sd_nvos02_with_fd, nv_ioctl_nvos02_parameters_with_fd, params);
SAME_FIELD(sd_nvos02_with_fd, nv_ioctl_nvos02_parameters_with_fd, fd);
SAME(NVA_NVOS02_WITH_FD_SIZE, sizeof(nv_ioctl_nvos02_parameters_with_fd));
#define OS05(ours) SAME_FIELD(ours, NVOS05_PARAMETERS, hRoot); \
	SAME_FIELD(ours, NVOS05_PARAMETERS, hObjectParent); SAME_FIELD(ours, NVOS05_PARAMETERS, hObjectNew); \
	SAME_FIELD(ours, NVOS05_PARAMETERS, hClass); SAME_FIELD(ours, NVOS05_PARAMETERS, status); \
	SAME_SIZE(ours, NVOS05_PARAMETERS)
OS05(sd_nvos05);
OS05(nva_nvos05);
SAME(SD_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD, NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD);
SAME(SD_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD, NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD);
SAME(NVA_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD, NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD);
SAME(NVA_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD, NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD);
SAME(SD_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD, NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD);
SAME(SD_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD, NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD);
SAME(NVA_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD, NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD);
SAME(NVA_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD, NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD);
SAME(NVA_ESC_RM_ALLOC_MEMORY, NV_ESC_RM_ALLOC_MEMORY);
SAME(NVA_ESC_RM_ALLOC_OBJECT, NV_ESC_RM_ALLOC_OBJECT);
SAME(NVA_ESC_RM_CONTROL, NV_ESC_RM_CONTROL);
SAME(NVA_NV01_MEMORY_SYSTEM, NV01_MEMORY_SYSTEM);
SAME(NVA_NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR);

/* The kernel client's RM API (rm_kernel_rmapi_op), which cgpu_km asks by handle. */
#include "nv-kernel-rmapi-ops.h"
#include "ctrl/ctrl0041.h"
#include "ctrl/ctrl0000/ctrl0000client.h"
SAME(SD_NV01_FREE, NV01_FREE);
SAME(SD_NV04_CONTROL, NV04_CONTROL);
SAME(SD_NV_ERR_INVALID_PARAM_STRUCT, NV_ERR_INVALID_PARAM_STRUCT);
SAME(SD_NV_ERR_GENERIC, NV_ERR_GENERIC);
#define OS54(ours) SAME_SIZE(ours, NVOS54_PARAMETERS); \
	SAME_FIELD(ours, NVOS54_PARAMETERS, hClient); SAME_FIELD(ours, NVOS54_PARAMETERS, hObject); \
	SAME_FIELD(ours, NVOS54_PARAMETERS, cmd); SAME_FIELD(ours, NVOS54_PARAMETERS, flags); \
	SAME_FIELD(ours, NVOS54_PARAMETERS, params); SAME_FIELD(ours, NVOS54_PARAMETERS, paramsSize); \
	SAME_FIELD(ours, NVOS54_PARAMETERS, status)
OS54(sd_nvos54);
OS54(nva_nvos54);
SAME(SD_RMAPI_OPS_PARAMS_OFF, offsetof(nvidia_kernel_rmapi_ops_t, params));
SAME(offsetof(struct sd_rmapi_ops, params), offsetof(nvidia_kernel_rmapi_ops_t, params));
SAME_FIELD(sd_rmapi_ops, nvidia_kernel_rmapi_ops_t, op);
/* NV0041's surface query, in both copies (PRE: SD or NVA, pre: sd or nva). */
#define SURFACE_INFO(PRE, pre) \
	SAME(PRE##_NV0041_CTRL_CMD_GET_SURFACE_INFO, NV0041_CTRL_CMD_GET_SURFACE_INFO); \
	SAME(PRE##_NV0041_SURFACE_INFO_INDEX_PHYS_SIZE, NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE); \
	SAME(PRE##_NV0041_SURFACE_INFO_INDEX_ADDR_SPACE_TYPE, NV0041_CTRL_SURFACE_INFO_INDEX_ADDR_SPACE_TYPE); \
	SAME(PRE##_NV0041_SURFACE_INFO_PHYS_SIZE_SCALE, NV0041_CTRL_SURFACE_INFO_PHYS_SIZE_SCALE_FACTOR); \
	SAME(PRE##_ADDR_SPACE_TYPE_VIDMEM, NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE_VIDMEM); \
	SAME_SIZE(pre##_nv0041_surface_info, NV0041_CTRL_SURFACE_INFO); \
	SAME_FIELD(pre##_nv0041_surface_info, NV0041_CTRL_SURFACE_INFO, index); \
	SAME_FIELD(pre##_nv0041_surface_info, NV0041_CTRL_SURFACE_INFO, data); \
	SAME_SIZE(pre##_nv0041_get_surface_info, NV0041_CTRL_GET_SURFACE_INFO_PARAMS); \
	SAME_FIELD(pre##_nv0041_get_surface_info, NV0041_CTRL_GET_SURFACE_INFO_PARAMS, surfaceInfoListSize); \
	SAME_FIELD(pre##_nv0041_get_surface_info, NV0041_CTRL_GET_SURFACE_INFO_PARAMS, surfaceInfoList)
SURFACE_INFO(SD, sd);
SURFACE_INFO(NVA, nva);
SAME(SD_ADDR_SPACE_TYPE_INVALID, NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE_INVALID);
/* The handle query, in both copies. */
#define HANDLE_INFO(PRE, pre) \
	SAME(PRE##_NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO, NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO); \
	SAME(PRE##_GET_HANDLE_INFO_INDEX_CLASSID, NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO_INDEX_CLASSID); \
	SAME_SIZE(pre##_nv0000_get_handle_info, NV0000_CTRL_CLIENT_GET_HANDLE_INFO_PARAMS); \
	SAME_FIELD(pre##_nv0000_get_handle_info, NV0000_CTRL_CLIENT_GET_HANDLE_INFO_PARAMS, hObject); \
	SAME_FIELD(pre##_nv0000_get_handle_info, NV0000_CTRL_CLIENT_GET_HANDLE_INFO_PARAMS, index); \
	SAME(offsetof(struct pre##_nv0000_get_handle_info, data), \
	     offsetof(NV0000_CTRL_CLIENT_GET_HANDLE_INFO_PARAMS, data.iResult))
HANDLE_INFO(SD, sd);
HANDLE_INFO(NVA, nva);
/* A device's GPU, by handle, in both copies. */
#include "ctrl/ctrl0080/ctrl0080gpu.h"
#include "ctrl/ctrl2080/ctrl2080gpu.h"
#include "ctrl/ctrl0000/ctrl0000gpu.h"
#define GPU_OF(PRE, pre) \
	SAME(PRE##_GET_HANDLE_INFO_INDEX_PARENT, NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO_INDEX_PARENT); \
	SAME(offsetof(struct pre##_nv0000_get_handle_info, data), \
	     offsetof(NV0000_CTRL_CLIENT_GET_HANDLE_INFO_PARAMS, data.hResult)); \
	SAME(PRE##_NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE, NV0080_CTRL_CMD_GPU_FIND_SUBDEVICE_HANDLE); \
	SAME_SIZE(pre##_nv0080_find_subdevice, NV0080_CTRL_GPU_FIND_SUBDEVICE_HANDLE_PARAM); \
	SAME_FIELD(pre##_nv0080_find_subdevice, NV0080_CTRL_GPU_FIND_SUBDEVICE_HANDLE_PARAM, subDeviceInst); \
	SAME_FIELD(pre##_nv0080_find_subdevice, NV0080_CTRL_GPU_FIND_SUBDEVICE_HANDLE_PARAM, hSubDevice); \
	SAME(PRE##_NV2080_CTRL_CMD_GPU_GET_ID, NV2080_CTRL_CMD_GPU_GET_ID); \
	SAME_SIZE(pre##_nv2080_get_id, NV2080_CTRL_GPU_GET_ID_PARAMS); \
	SAME_FIELD(pre##_nv2080_get_id, NV2080_CTRL_GPU_GET_ID_PARAMS, gpuId); \
	SAME(PRE##_NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2); \
	SAME_SIZE(pre##_nv0000_get_id_info_v2, NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS); \
	SAME_FIELD(pre##_nv0000_get_id_info_v2, NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, gpuId); \
	SAME_FIELD(pre##_nv0000_get_id_info_v2, NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, gpuFlags); \
	SAME_FIELD(pre##_nv0000_get_id_info_v2, NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, deviceInstance); \
	SAME_FIELD(pre##_nv0000_get_id_info_v2, NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, subDeviceInstance); \
	SAME_FIELD(pre##_nv0000_get_id_info_v2, NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, sliStatus); \
	SAME_FIELD(pre##_nv0000_get_id_info_v2, NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, boardId); \
	SAME_FIELD(pre##_nv0000_get_id_info_v2, NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, gpuInstance); \
	SAME_FIELD(pre##_nv0000_get_id_info_v2, NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, numaId)
GPU_OF(SD, sd);
GPU_OF(NVA, nva);
SAME(NVA_NV01_FREE, NV01_FREE);
SAME(NVA_NV04_CONTROL, NV04_CONTROL);
SAME_SIZE(nva_rmapi_ops, nvidia_kernel_rmapi_ops_t);
SAME_FIELD(nva_rmapi_ops, nvidia_kernel_rmapi_ops_t, op);
SAME(offsetof(struct nva_rmapi_ops, params), offsetof(nvidia_kernel_rmapi_ops_t, params));
SAME(offsetof(struct nva_rmapi_ops, params.free), offsetof(nvidia_kernel_rmapi_ops_t, params.free));
SAME(offsetof(struct nva_rmapi_ops, params.control), offsetof(nvidia_kernel_rmapi_ops_t, params.control));
#endif

/* nvidia_modeset_rm_ops_t (kernel-open, both releases): what nvidia_get_rm_ops fills. */
#include "nv-modeset-interface.h"
#define RMOPS(ours, f) SAME_FIELD(ours, nvidia_modeset_rm_ops_t, f)
SAME_SIZE(sd_rm_ops, nvidia_modeset_rm_ops_t);
RMOPS(sd_rm_ops, version_string); RMOPS(sd_rm_ops, system_info); RMOPS(sd_rm_ops, alloc_stack);
RMOPS(sd_rm_ops, free_stack); RMOPS(sd_rm_ops, enumerate_gpus); RMOPS(sd_rm_ops, open_gpu);
RMOPS(sd_rm_ops, close_gpu); RMOPS(sd_rm_ops, op); RMOPS(sd_rm_ops, set_callbacks);
SAME_SIZE(nva_rm_ops, nvidia_modeset_rm_ops_t);
RMOPS(nva_rm_ops, version_string); RMOPS(nva_rm_ops, alloc_stack); RMOPS(nva_rm_ops, free_stack);
RMOPS(nva_rm_ops, op);

/*
 * nvidia-uvm's external allocations (uvm_ioctl.h, kernel-open in both releases). The
 * map's block holds UvmGpuMappingAttributes[UVM_MAX_GPUS] in 535 and [UVM_MAX_GPUS_V2]
 * in 550, so abi.h has it as a head, the array and a tail: each field's place is checked
 * through the release's count.
 */
#include "uvm_ioctl.h"
#include "nv_uvm_types.h"
SAME(SD_UVM_MAP_EXTERNAL_ALLOCATION, UVM_MAP_EXTERNAL_ALLOCATION);
SAME(SD_UVM_FREE, UVM_FREE);
SAME(SD_UVM_REGISTER_GPU, UVM_REGISTER_GPU);
SAME(SD_UVM_UNREGISTER_GPU, UVM_UNREGISTER_GPU);
SAME(SD_UVM_CREATE_EXTERNAL_RANGE, UVM_CREATE_EXTERNAL_RANGE);
SAME(SD_UVM_MAP_EXTERNAL_SPARSE, UVM_MAP_EXTERNAL_SPARSE);
SAME(SD_UVM_MAP_DYNAMIC_PARALLELISM_REGION, UVM_MAP_DYNAMIC_PARALLELISM_REGION);
SAME(SD_UVM_ALLOC_SEMAPHORE_POOL, UVM_ALLOC_SEMAPHORE_POOL);
SAME(SD_UUID_LEN, sizeof(NvProcessorUuid));
SAME(SD_NV_ERR_GPU_UUID_NOT_FOUND, NV_ERR_GPU_UUID_NOT_FOUND);
SAME(SD_NV_ERR_INVALID_DEVICE, NV_ERR_INVALID_DEVICE);
SAME(SD_NV_ERR_INVALID_OFFSET, NV_ERR_INVALID_OFFSET);
SAME(SD_NV_ERR_UVM_ADDRESS_IN_USE, NV_ERR_UVM_ADDRESS_IN_USE);

SAME_SIZE(sd_uvm_register_gpu, UVM_REGISTER_GPU_PARAMS);
SAME_FIELD(sd_uvm_register_gpu, UVM_REGISTER_GPU_PARAMS, gpu_uuid);
SAME_FIELD(sd_uvm_register_gpu, UVM_REGISTER_GPU_PARAMS, numaEnabled);
SAME_FIELD(sd_uvm_register_gpu, UVM_REGISTER_GPU_PARAMS, numaNodeId);
SAME_FIELD(sd_uvm_register_gpu, UVM_REGISTER_GPU_PARAMS, rmCtrlFd);
SAME_FIELD(sd_uvm_register_gpu, UVM_REGISTER_GPU_PARAMS, hClient);
SAME_FIELD(sd_uvm_register_gpu, UVM_REGISTER_GPU_PARAMS, hSmcPartRef);
SAME_FIELD(sd_uvm_register_gpu, UVM_REGISTER_GPU_PARAMS, rmStatus);
SAME_SIZE(sd_uvm_unregister_gpu, UVM_UNREGISTER_GPU_PARAMS);
SAME_FIELD(sd_uvm_unregister_gpu, UVM_UNREGISTER_GPU_PARAMS, gpu_uuid);
SAME_FIELD(sd_uvm_unregister_gpu, UVM_UNREGISTER_GPU_PARAMS, rmStatus);
SAME(SD_UVM_REGISTER_GPU_VASPACE, UVM_REGISTER_GPU_VASPACE);
SAME(SD_UVM_UNREGISTER_GPU_VASPACE, UVM_UNREGISTER_GPU_VASPACE);
SAME_SIZE(sd_uvm_register_gpu_vaspace, UVM_REGISTER_GPU_VASPACE_PARAMS);
SAME_FIELD(sd_uvm_register_gpu_vaspace, UVM_REGISTER_GPU_VASPACE_PARAMS, gpuUuid);
SAME_FIELD(sd_uvm_register_gpu_vaspace, UVM_REGISTER_GPU_VASPACE_PARAMS, rmCtrlFd);
SAME_FIELD(sd_uvm_register_gpu_vaspace, UVM_REGISTER_GPU_VASPACE_PARAMS, hClient);
SAME_FIELD(sd_uvm_register_gpu_vaspace, UVM_REGISTER_GPU_VASPACE_PARAMS, hVaSpace);
SAME_FIELD(sd_uvm_register_gpu_vaspace, UVM_REGISTER_GPU_VASPACE_PARAMS, rmStatus);
SAME_SIZE(sd_uvm_unregister_gpu_vaspace, UVM_UNREGISTER_GPU_VASPACE_PARAMS);
SAME_FIELD(sd_uvm_unregister_gpu_vaspace, UVM_UNREGISTER_GPU_VASPACE_PARAMS, gpuUuid);
SAME_FIELD(sd_uvm_unregister_gpu_vaspace, UVM_UNREGISTER_GPU_VASPACE_PARAMS, rmStatus);
SAME(SD_UVM_REGISTER_CHANNEL, UVM_REGISTER_CHANNEL);
SAME(SD_UVM_UNREGISTER_CHANNEL, UVM_UNREGISTER_CHANNEL);
SAME(SD_NV_ERR_INVALID_CHANNEL, NV_ERR_INVALID_CHANNEL);
SAME(SD_NV_ERR_OTHER_DEVICE_FOUND, NV_ERR_OTHER_DEVICE_FOUND);
SAME_SIZE(sd_uvm_register_channel, UVM_REGISTER_CHANNEL_PARAMS);
SAME_FIELD(sd_uvm_register_channel, UVM_REGISTER_CHANNEL_PARAMS, gpuUuid);
SAME_FIELD(sd_uvm_register_channel, UVM_REGISTER_CHANNEL_PARAMS, rmCtrlFd);
SAME_FIELD(sd_uvm_register_channel, UVM_REGISTER_CHANNEL_PARAMS, hClient);
SAME_FIELD(sd_uvm_register_channel, UVM_REGISTER_CHANNEL_PARAMS, hChannel);
SAME_FIELD(sd_uvm_register_channel, UVM_REGISTER_CHANNEL_PARAMS, base);
SAME_FIELD(sd_uvm_register_channel, UVM_REGISTER_CHANNEL_PARAMS, length);
SAME_FIELD(sd_uvm_register_channel, UVM_REGISTER_CHANNEL_PARAMS, rmStatus);
SAME_SIZE(sd_uvm_unregister_channel, UVM_UNREGISTER_CHANNEL_PARAMS);
SAME_FIELD(sd_uvm_unregister_channel, UVM_UNREGISTER_CHANNEL_PARAMS, gpuUuid);
SAME_FIELD(sd_uvm_unregister_channel, UVM_UNREGISTER_CHANNEL_PARAMS, hClient);
SAME_FIELD(sd_uvm_unregister_channel, UVM_UNREGISTER_CHANNEL_PARAMS, hChannel);
SAME_FIELD(sd_uvm_unregister_channel, UVM_UNREGISTER_CHANNEL_PARAMS, rmStatus);
#define RANGE(ours, theirs) SAME_SIZE(ours, theirs); SAME_FIELD(ours, theirs, base); \
	SAME_FIELD(ours, theirs, length); SAME_FIELD(ours, theirs, rmStatus)
RANGE(sd_uvm_create_external_range, UVM_CREATE_EXTERNAL_RANGE_PARAMS);
RANGE(sd_uvm_free, UVM_FREE_PARAMS);
RANGE(sd_uvm_map_external_sparse, UVM_MAP_EXTERNAL_SPARSE_PARAMS);
SAME_FIELD(sd_uvm_map_external_sparse, UVM_MAP_EXTERNAL_SPARSE_PARAMS, gpuUuid);
RANGE(sd_uvm_map_dp_region, UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS);
SAME_FIELD(sd_uvm_map_dp_region, UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS, gpuUuid);
SAME(SD_UVM_INIT_FLAGS_DISABLE_HMM, UVM_INIT_FLAGS_DISABLE_HMM);
SAME(SD_UVM_INIT_FLAGS_MASK, UVM_INIT_FLAGS_MASK);
SAME(SD_UVM_PAGEABLE_MEM_ACCESS, UVM_PAGEABLE_MEM_ACCESS);
SAME_SIZE(sd_uvm_pageable_mem_access, UVM_PAGEABLE_MEM_ACCESS_PARAMS);
SAME_FIELD(sd_uvm_pageable_mem_access, UVM_PAGEABLE_MEM_ACCESS_PARAMS, pageableMemAccess);
SAME_FIELD(sd_uvm_pageable_mem_access, UVM_PAGEABLE_MEM_ACCESS_PARAMS, rmStatus);
SAME(SD_UVM_MIGRATE, UVM_MIGRATE);
RANGE(sd_uvm_migrate, UVM_MIGRATE_PARAMS);
#define MIGRATE(f) SAME_FIELD(sd_uvm_migrate, UVM_MIGRATE_PARAMS, f)
MIGRATE(destinationUuid); MIGRATE(flags); MIGRATE(semaphoreAddress); MIGRATE(semaphorePayload);
MIGRATE(cpuNumaNode); MIGRATE(userSpaceStart); MIGRATE(userSpaceLength);

#define ATTR(f) SAME_FIELD(sd_uvm_gpu_mapping, UvmGpuMappingAttributes, f)
SAME_SIZE(sd_uvm_gpu_mapping, UvmGpuMappingAttributes);
ATTR(gpuUuid); ATTR(gpuMappingType); ATTR(gpuCachingType); ATTR(gpuFormatType);
ATTR(gpuElementBits); ATTR(gpuCompressionType);
SAME(SD_UVM_MAPPING_TYPE_MAX, UvmGpuMappingTypeCount - 1);
SAME(SD_UVM_CACHING_TYPE_MAX, UvmGpuCachingTypeCount - 1);

#if SD_REF_MAJOR >= 550
#define SD_UVM_MAX_GPUS SD_UVM_MAX_GPUS_550
SAME(SD_UVM_MAX_GPUS_550, UVM_MAX_GPUS_V2);
#else
#define SD_UVM_MAX_GPUS SD_UVM_MAX_GPUS_535
SAME(SD_UVM_MAX_GPUS_535, UVM_MAX_GPUS);
#endif
#define MAP UVM_MAP_EXTERNAL_ALLOCATION_PARAMS
SAME(SD_UVM_MAP_SIZE(SD_UVM_MAX_GPUS), sizeof(MAP));
SAME_FIELD(sd_uvm_map_head, MAP, base);
SAME_FIELD(sd_uvm_map_head, MAP, length);
SAME_FIELD(sd_uvm_map_head, MAP, offset);
SAME(sizeof(struct sd_uvm_map_head), offsetof(MAP, perGpuAttributes));
SAME(SD_UVM_MAX_GPUS * sizeof(struct sd_uvm_gpu_mapping), sizeof(((MAP *)0)->perGpuAttributes));
#define TAIL(f) _Static_assert(sizeof(struct sd_uvm_map_head) + \
	SD_UVM_MAX_GPUS * sizeof(struct sd_uvm_gpu_mapping) + offsetof(struct sd_uvm_map_tail, f) == \
	offsetof(MAP, f), "sd_uvm_map_tail." #f " offset"); \
	_Static_assert(sizeof(((struct sd_uvm_map_tail *)0)->f) == sizeof(((MAP *)0)->f), "sd_uvm_map_tail." #f " size")
TAIL(gpuAttributesCount); TAIL(rmCtrlFd); TAIL(hClient); TAIL(hMemory); TAIL(rmStatus);
#define POOL UVM_ALLOC_SEMAPHORE_POOL_PARAMS
SAME(SD_UVM_POOL_SIZE(SD_UVM_MAX_GPUS), sizeof(POOL));
SAME_FIELD(sd_uvm_pool_head, POOL, base);
SAME_FIELD(sd_uvm_pool_head, POOL, length);
SAME(sizeof(struct sd_uvm_pool_head), offsetof(POOL, perGpuAttributes));
SAME(SD_UVM_MAX_GPUS * sizeof(struct sd_uvm_gpu_mapping), sizeof(((POOL *)0)->perGpuAttributes));
#define POOL_TAIL(f) _Static_assert(sizeof(struct sd_uvm_pool_head) + \
	SD_UVM_MAX_GPUS * sizeof(struct sd_uvm_gpu_mapping) + offsetof(struct sd_uvm_pool_tail, f) == \
	offsetof(POOL, f), "sd_uvm_pool_tail." #f " offset"); \
	_Static_assert(sizeof(((struct sd_uvm_pool_tail *)0)->f) == sizeof(((POOL *)0)->f), "sd_uvm_pool_tail." #f " size")
POOL_TAIL(gpuAttributesCount); POOL_TAIL(rmStatus);

/* UvmGpuMemoryInfo: what nvUvmInterfaceDupMemory fills (550 put egm before deviceDescendant). */
#define MEMINFO(off, f) _Static_assert((off) == offsetof(UvmGpuMemoryInfo, f), #off " != UvmGpuMemoryInfo." #f)
MEMINFO(SD_UVM_MEMINFO_SYSMEM_OFF, sysmem);
#if SD_REF_MAJOR >= 550
MEMINFO(SD_UVM_MEMINFO_DEVDESC_OFF_550, deviceDescendant);
#else
MEMINFO(SD_UVM_MEMINFO_DEVDESC_OFF_535, deviceDescendant);
#endif
MEMINFO(SD_UVM_MEMINFO_PAGESIZE_OFF, pageSize);
MEMINFO(SD_UVM_MEMINFO_SIZE_OFF, size);
MEMINFO(SD_UVM_MEMINFO_UUID_OFF, uuid);
SAME(SD_UVM_MEMINFO_SIZE, sizeof(UvmGpuMemoryInfo));
MEMINFO(NVA_UVM_MEMINFO_SYSMEM_OFF, sysmem);
MEMINFO(NVA_UVM_MEMINFO_SIZE_OFF, size);
SAME(NVA_UVM_MEMINFO_SIZE, sizeof(UvmGpuMemoryInfo));
SAME(NVA_UVM_SPAN_BASE_OFF, offsetof(UVM_MAP_EXTERNAL_SPARSE_PARAMS, base));
SAME(NVA_UVM_SPAN_LENGTH_OFF, offsetof(UVM_MAP_EXTERNAL_SPARSE_PARAMS, length));
SAME(NVA_UVM_SPAN_UUID_OFF, offsetof(UVM_MAP_EXTERNAL_SPARSE_PARAMS, gpuUuid));
SAME(NVA_UVM_SPAN_BASE_OFF, offsetof(UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS, base));
SAME(NVA_UVM_SPAN_LENGTH_OFF, offsetof(UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS, length));
SAME(NVA_UVM_SPAN_UUID_OFF, offsetof(UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS, gpuUuid));
SAME(NVA_UVM_SPAN_BASE_OFF, offsetof(UVM_ALLOC_SEMAPHORE_POOL_PARAMS, base));
SAME(NVA_UVM_SPAN_LENGTH_OFF, offsetof(UVM_ALLOC_SEMAPHORE_POOL_PARAMS, length));
SAME(NVA_UVM_SPAN_BASE_OFF, offsetof(UVM_FREE_PARAMS, base));
SAME(NVA_UVM_SPAN_LENGTH_OFF, offsetof(UVM_FREE_PARAMS, length));
SAME(NVA_UVM_INIT_FLAGS_DISABLE_HMM, UVM_INIT_FLAGS_DISABLE_HMM);
SAME(NVA_ERR_UVM_ADDRESS_IN_USE, NV_ERR_UVM_ADDRESS_IN_USE);
