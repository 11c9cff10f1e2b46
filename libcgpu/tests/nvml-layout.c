// SPDX-License-Identifier: MIT
/*
 * Prints the layout and values of the NVML subset libcgpu and the simulator
 * declare. Built once against include/cgpu_nvml.h and once against NVIDIA's
 * nvml.h (-DREAL_NVML); the two outputs must be identical.
 */
#include <stddef.h>
#include <stdio.h>

#ifdef REAL_NVML
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>
#else
#include "cgpu_nvml.h"
#endif

#define SIZE(t) printf("sizeof %s %zu\n", #t, sizeof(t))
#define OFF(t, f) printf("offsetof %s.%s %zu\n", #t, #f, offsetof(t, f))
#define VAL(v) printf("value %s %lld\n", #v, (long long)(v))

int main(void)
{
	SIZE(nvmlPciInfo_t);
	OFF(nvmlPciInfo_t, busIdLegacy);
	OFF(nvmlPciInfo_t, domain);
	OFF(nvmlPciInfo_t, bus);
	OFF(nvmlPciInfo_t, device);
	OFF(nvmlPciInfo_t, pciDeviceId);
	OFF(nvmlPciInfo_t, pciSubSystemId);
	OFF(nvmlPciInfo_t, busId);
	SIZE(nvmlMemory_t);
	OFF(nvmlMemory_t, total);
	OFF(nvmlMemory_t, free);
	OFF(nvmlMemory_t, used);
	SIZE(nvmlMemory_v2_t);
	OFF(nvmlMemory_v2_t, version);
	OFF(nvmlMemory_v2_t, total);
	OFF(nvmlMemory_v2_t, reserved);
	OFF(nvmlMemory_v2_t, free);
	OFF(nvmlMemory_v2_t, used);
	SIZE(nvmlProcessInfo_t);
	OFF(nvmlProcessInfo_t, pid);
	OFF(nvmlProcessInfo_t, usedGpuMemory);
	OFF(nvmlProcessInfo_t, gpuInstanceId);
	OFF(nvmlProcessInfo_t, computeInstanceId);
	SIZE(nvmlReturn_t);
	VAL(nvmlMemory_v2);
	VAL(NVML_SUCCESS);
	VAL(NVML_ERROR_UNINITIALIZED);
	VAL(NVML_ERROR_INVALID_ARGUMENT);
	VAL(NVML_ERROR_NOT_SUPPORTED);
	VAL(NVML_ERROR_NOT_FOUND);
	VAL(NVML_ERROR_INSUFFICIENT_SIZE);
	VAL(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	VAL(NVML_ERROR_UNKNOWN);
	VAL(NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);
	VAL(NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);
	VAL(NVML_DEVICE_UUID_V2_BUFFER_SIZE);
	VAL(NVML_DEVICE_NAME_V2_BUFFER_SIZE);
	VAL(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
	return 0;
}
