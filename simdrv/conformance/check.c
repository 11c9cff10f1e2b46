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
SAME(SD_ESC_CHECK_VERSION_STR, NV_ESC_CHECK_VERSION_STR);
SAME(SD_ESC_IOCTL_XFER_CMD, NV_ESC_IOCTL_XFER_CMD);
SAME(SD_ESC_ATTACH_GPUS_TO_FD, NV_ESC_ATTACH_GPUS_TO_FD);

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
SAME(SD_NV_ERR_INVALID_OBJECT_PARENT, NV_ERR_INVALID_OBJECT_PARENT);
SAME(SD_NV_ERR_INVALID_OWNER, NV_ERR_INVALID_OWNER);
SAME(SD_NV_ERR_NO_MEMORY, NV_ERR_NO_MEMORY);
SAME(SD_NV_ERR_OBJECT_NOT_FOUND, NV_ERR_OBJECT_NOT_FOUND);

/* nv_ioctl_xfer_t */
SAME_SIZE(sd_xfer, nv_ioctl_xfer_t);
SAME_FIELD(sd_xfer, nv_ioctl_xfer_t, cmd);
SAME_FIELD(sd_xfer, nv_ioctl_xfer_t, size);
SAME_FIELD(sd_xfer, nv_ioctl_xfer_t, ptr);

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
SAME(SD_ATTR2_PAGE_SIZE_HUGE_SHIFT, LO(NVOS32_ATTR2_PAGE_SIZE_HUGE));
SAME(SD_ATTR2_PAGE_SIZE_HUGE_MASK,
	(1u << (HI(NVOS32_ATTR2_PAGE_SIZE_HUGE) - LO(NVOS32_ATTR2_PAGE_SIZE_HUGE) + 1)) - 1);
SAME(SD_ATTR2_PAGE_SIZE_HUGE_512MB, NVOS32_ATTR2_PAGE_SIZE_HUGE_512MB);
SAME(SD_ALLOC_FLAGS_USE_BEGIN_END, NVOS32_ALLOC_FLAGS_USE_BEGIN_END);
SAME(SD_ALLOC_FLAGS_VIRTUAL, NVOS32_ALLOC_FLAGS_VIRTUAL);
#endif
