// SPDX-License-Identifier: MIT
/*
 * The simulated libnvidia-ml.so.1: the container's GPUs (NVIDIA_VISIBLE_DEVICES;
 * NVML ignores CUDA_VISIBLE_DEVICES), their identity and memory use as the
 * state file records it for all processes on the node.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cgpu_nvml.h"
#include "devices.h"

#define NVML_API __attribute__((visibility("default")))
#define DRIVER_VERSION "535.261.03"
#define CUDA_VERSION 12020

struct nvmlDevice_st {
	int phys;
	unsigned int index;
};

static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count;
static struct sim_view view;
static struct nvmlDevice_st devs[SIM_MAX_GPUS];

NVML_API nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	nvmlReturn_t r = NVML_SUCCESS;

	if (flags > 0x3)
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&nvml_lock);
	if (init_count == 0) {
		if (sim_state_open()) {
			r = NVML_ERROR_UNKNOWN;
		} else {
			sim_view_load(&view, sim_gpu_count());
			for (int i = 0; i < view.n_container; i++)
				devs[i] = (struct nvmlDevice_st){
					view.container[i], (unsigned)i };
		}
	}
	if (r == NVML_SUCCESS)
		init_count++;
	pthread_mutex_unlock(&nvml_lock);
	return r;
}

NVML_API nvmlReturn_t nvmlInit_v2(void)
{
	return nvmlInitWithFlags(0);
}

NVML_API nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&nvml_lock);
	if (init_count == 0)
		r = NVML_ERROR_UNINITIALIZED;
	else
		init_count--;
	pthread_mutex_unlock(&nvml_lock);
	return r;
}

static nvmlReturn_t ready(void)
{
	return __atomic_load_n(&init_count, __ATOMIC_ACQUIRE) ?
		       NVML_SUCCESS :
		       NVML_ERROR_UNINITIALIZED;
}

static nvmlReturn_t device_check(nvmlDevice_t d)
{
	nvmlReturn_t r = ready();

	if (r)
		return r;
	return d >= devs && d < devs + view.n_container ?
		       NVML_SUCCESS :
		       NVML_ERROR_INVALID_ARGUMENT;
}

static nvmlReturn_t put_string(char *out, unsigned int len, const char *s)
{
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) >= len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(out, s);
	return NVML_SUCCESS;
}

NVML_API const char *nvmlErrorString(nvmlReturn_t result)
{
	switch (result) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
		return "Argument version mismatch";
	default: return "Unknown Error";
	}
}

NVML_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version,
						 unsigned int length)
{
	return put_string(version, length, DRIVER_VERSION);
}

NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cudaDriverVersion = CUDA_VERSION;
	return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
	__attribute__((alias("nvmlSystemGetCudaDriverVersion")));

NVML_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	nvmlReturn_t r = ready();

	if (r)
		return r;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = (unsigned)view.n_container;
	return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
						    nvmlDevice_t *device)
{
	nvmlReturn_t r = ready();

	if (r)
		return r;
	if (!device || index >= (unsigned)view.n_container)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &devs[index];
	return NVML_SUCCESS;
}

static nvmlReturn_t find(nvmlDevice_t *device, const char *key,
			 int (*match)(int phys, const char *key))
{
	nvmlReturn_t r = ready();

	if (r)
		return r;
	if (!device || !key)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < view.n_container; i++) {
		if (match(devs[i].phys, key)) {
			*device = &devs[i];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

static int uuid_is(int phys, const char *key)
{
	char u[SIM_UUID_LEN];

	sim_gpu_uuid(phys, u);
	return !strcmp(u, key);
}

/* NVML takes the bus id with an 8- or 4-digit domain, any case. */
static int busid_is(int phys, const char *key)
{
	char b8[32], b4[32];

	sim_gpu_busid(phys, 8, b8, sizeof(b8));
	sim_gpu_busid(phys, 4, b4, sizeof(b4));
	return !strcasecmp(b8, key) || !strcasecmp(b4, key);
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid,
						nvmlDevice_t *device)
{
	return find(device, uuid, uuid_is);
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId,
						       nvmlDevice_t *device)
{
	return find(device, pciBusId, busid_is);
}

NVML_API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device,
					 unsigned int *index)
{
	nvmlReturn_t r = device_check(device);

	if (r)
		return r;
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = device->index;
	return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name,
					unsigned int length)
{
	nvmlReturn_t r = device_check(device);

	return r ? r : put_string(name, length, SIM_GPU_NAME);
}

NVML_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
					unsigned int length)
{
	char u[SIM_UUID_LEN];
	nvmlReturn_t r = device_check(device);

	if (r)
		return r;
	sim_gpu_uuid(device->phys, u);
	return put_string(uuid, length, u);
}

NVML_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
					      nvmlPciInfo_t *pci)
{
	nvmlReturn_t r = device_check(device);

	if (r)
		return r;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	sim_gpu_busid(device->phys, 4, pci->busIdLegacy,
		      sizeof(pci->busIdLegacy));
	sim_gpu_busid(device->phys, 8, pci->busId, sizeof(pci->busId));
	pci->bus = (unsigned)sim_gpu_bus(device->phys);
	pci->pciDeviceId = 0x1EB810DE;	/* T4: device 0x1EB8, vendor NVIDIA */
	pci->pciSubSystemId = 0x12A210DE;
	return NVML_SUCCESS;
}

static nvmlReturn_t memory(nvmlDevice_t device, unsigned long long *total,
			   unsigned long long *free_bytes,
			   unsigned long long *used)
{
	uint64_t t, u;
	nvmlReturn_t r = device_check(device);

	if (r)
		return r;
	sim_phys_info(device->phys, &t, &u);
	*total = t;
	*used = u;
	*free_bytes = t - u;
	return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
					      nvmlMemory_t *m)
{
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	return memory(device, &m->total, &m->free, &m->used);
}

NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
						 nvmlMemory_v2_t *m)
{
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	m->reserved = 0;
	return memory(device, &m->total, &m->free, &m->used);
}

/* With the stand-in driver, the processes of the caller's pid namespace, as on
 * a real node; without it every process on the node (the state file cannot
 * tell namespaces apart). */
NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(
	nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos)
{
	static uint32_t pid[SIM_MAX_SLOTS];
	static uint64_t bytes[SIM_MAX_SLOTS];
	nvmlReturn_t r = device_check(device);
	int n;

	if (r)
		return r;
	if (!infoCount || (*infoCount && !infos))
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&nvml_lock);
	n = sim_phys_users(device->phys, pid, bytes, SIM_MAX_SLOTS);
	if ((unsigned int)n > *infoCount) {
		r = NVML_ERROR_INSUFFICIENT_SIZE;
	} else {
		for (int i = 0; i < n; i++)
			infos[i] = (nvmlProcessInfo_t){ pid[i], bytes[i], ~0u, ~0u };
	}
	*infoCount = (unsigned int)n;
	pthread_mutex_unlock(&nvml_lock);
	return r;
}
