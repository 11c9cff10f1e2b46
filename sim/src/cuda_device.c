// SPDX-License-Identifier: MIT
/* cuInit, versions, errors and device queries of the simulated driver. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "core.h"

struct sim_proc g_sim = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A fork child starts with no driver state, as if it never called cuInit;
 * the real driver refuses CUDA in such a child altogether. */
static void sim_after_fork_child(void)
{
	pthread_mutex_init(&g_sim.lock, NULL);
	g_sim.initialized = 0;
	memset(g_sim.primary, 0, sizeof(g_sim.primary));
	ptrmap_reset(&g_sim_mem);
	sim_small_after_fork_child();
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, sim_after_fork_child);
}

SIM_API CUresult cuInit(unsigned int Flags)
{
	CUresult r = CUDA_SUCCESS;

	if (Flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&g_sim.lock);
	if (!g_sim.initialized) {
		if (sim_state_open()) {
			r = CUDA_ERROR_NOT_INITIALIZED;
		} else {
			sim_view_load(&g_sim.view, sim_gpu_count());
			for (int i = 0; i < g_sim.view.n_cuda; i++) {
				g_sim.primary[i].magic = CTX_MAGIC;
				g_sim.primary[i].ordinal = i;
				g_sim.primary[i].phys = g_sim.view.cuda[i];
				g_sim.primary[i].primary = 1;
			}
			g_sim.initialized = 1;
		}
	}
	if (r == CUDA_SUCCESS && g_sim.view.n_cuda == 0)
		r = CUDA_ERROR_NO_DEVICE;
	pthread_mutex_unlock(&g_sim.lock);
	return r;
}

CUresult sim_check_init(void)
{
	return __atomic_load_n(&g_sim.initialized, __ATOMIC_ACQUIRE) &&
			       g_sim.view.n_cuda ?
		       CUDA_SUCCESS :
		       CUDA_ERROR_NOT_INITIALIZED;
}

CUresult sim_device(CUdevice dev, int *phys)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (dev < 0 || dev >= g_sim.view.n_cuda)
		return CUDA_ERROR_INVALID_DEVICE;
	if (phys)
		*phys = g_sim.view.cuda[dev];
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = SIM_CUDA_VERSION;
	return CUDA_SUCCESS;
}

static const struct {
	CUresult code;
	const char *name, *text;
} errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered" },
	{ CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static CUresult error_text(CUresult e, const char **out, int name)
{
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		if (errors[i].code == e) {
			*out = name ? errors[i].name : errors[i].text;
			return CUDA_SUCCESS;
		}
	}
	*out = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

SIM_API CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	return error_text(error, pStr, 0);
}

SIM_API CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	return error_text(error, pStr, 1);
}

SIM_API CUresult cuDeviceGetCount(int *count)
{
	CUresult r = sim_check_init();

	if (r)
		return r;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = g_sim.view.n_cuda;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r = sim_device(ordinal, NULL);

	if (r)
		return r;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult r = sim_device(dev, NULL);

	if (r)
		return r;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", SIM_GPU_NAME);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	int phys;
	CUresult r = sim_device(dev, &phys);

	if (r)
		return r;
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	sim_gpu_uuid_bytes(phys, (unsigned char *)uuid->bytes);
	return CUDA_SUCCESS;
}

/* _v2 differs only for MIG instances, which the simulator does not have. */
SIM_API CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
	__attribute__((alias("cuDeviceGetUuid")));

SIM_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	uint64_t total, used;
	int phys;
	CUresult r = sim_device(dev, &phys);

	if (r)
		return r;
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	sim_phys_info(phys, &total, &used);
	*bytes = total;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	int phys;
	CUresult r = sim_device(dev, &phys);

	if (r)
		return r;
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_gpu_busid(phys, 4, pciBusId, (size_t)len);
	return CUDA_SUCCESS;
}

/* A T4's values for the attributes the simulator knows. */
SIM_API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
				      CUdevice dev)
{
	int phys;
	CUresult r = sim_device(dev, &phys);

	if (r)
		return r;
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 40; break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = sim_gpu_bus(phys); break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 7; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 5; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *pi = 1; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}
