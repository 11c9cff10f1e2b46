// SPDX-License-Identifier: MIT
/*
 * CUDA numbers devices after CUDA_VISIBLE_DEVICES, NVML does not, and the
 * budget list follows the container's GPU order (NVML's). Both are matched
 * to the ledger by UUID; a budget position is NVML's index of that UUID.
 */
#define _GNU_SOURCE
#include "devmap.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "budget.h"

#define MAX_DEV 64

/* Slot + 2 once known, so that 0 means not yet looked up. */
static int cuda_slot[MAX_DEV];
static struct {
	nvmlDevice_t dev;
	int slot;
} nvml_slot[MAX_DEV];
static int n_nvml;
static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;

/* The NVML handle table: a child inherits it whole (track_fork_lock). */
void devmap_fork(enum track_fork_phase phase)
{
	track_fork_lock(phase, &nvml_lock);
}

static void uuid_string(const unsigned char u[16], char out[48])
{
	int n = snprintf(out, 48, "GPU-");

	for (int i = 0; i < 16; i++)
		n += snprintf(out + n, (size_t)(48 - n), "%s%02x",
			      i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
			      u[i]);
}

static int uuid_bytes(const char *s, unsigned char out[16])
{
	int n = 0;

	if (strncmp(s, "GPU-", 4))
		return -1;
	for (s += 4; *s && n < 32; s++) {
		int v;

		if (*s == '-')
			continue;
		if (!isxdigit((unsigned char)*s))
			return -1;
		v = isdigit((unsigned char)*s) ? *s - '0' : tolower(*s) - 'a' + 10;
		if (n % 2)
			out[n / 2] |= (unsigned char)v;
		else
			out[n / 2] = (unsigned char)(v << 4);
		n++;
	}
	return n == 32 ? 0 : -1;
}

/* The container index NVML gives this UUID: its place in the budget list. */
static int nvml_position(void *arg)
{
	char s[48];
	nvmlDevice_t d;
	unsigned idx;
	int pos = -1;

	uuid_string(arg, s);
	if (!cgpu_nvml_ready() || REAL_NV(nvmlInit_v2))
		return -1;
	if (!REAL_NV(nvmlDeviceGetHandleByUUID, s, &d) &&
	    !REAL_NV(nvmlDeviceGetIndex, d, &idx))
		pos = (int)idx;
	REAL_NV(nvmlShutdown);
	return pos;
}

int devmap_cuda(CUdevice dev)
{
	CUuuid u;
	int v, slot;

	if (dev < 0 || dev >= MAX_DEV)
		return -1;
	v = __atomic_load_n(&cuda_slot[dev], __ATOMIC_ACQUIRE);
	if (likely(v))
		return v - 2;
	if (REAL_CU(cuDeviceGetUuid_v2, &u, dev))
		return -1;
	slot = ledger_slot((unsigned char *)u.bytes, dev, nvml_position,
			   u.bytes);
	__atomic_store_n(&cuda_slot[dev], slot + 2, __ATOMIC_RELEASE);
	return slot;
}

static int given_index(void *arg)
{
	return (int)*(unsigned *)arg;
}

int devmap_nvml(nvmlDevice_t d)
{
	char s[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	unsigned char u[16];
	unsigned idx;
	int slot = -1;

	pthread_mutex_lock(&nvml_lock);
	for (int i = 0; i < n_nvml; i++)
		if (nvml_slot[i].dev == d)
			slot = nvml_slot[i].slot;
	pthread_mutex_unlock(&nvml_lock);
	if (slot >= 0)
		return slot;
	if (REAL_NV(nvmlDeviceGetUUID, d, s, sizeof(s)) || uuid_bytes(s, u) ||
	    REAL_NV(nvmlDeviceGetIndex, d, &idx))
		return -1;
	slot = ledger_slot(u, (int)idx, given_index, &idx);
	pthread_mutex_lock(&nvml_lock);
	if (slot >= 0 && n_nvml < MAX_DEV)
		nvml_slot[n_nvml++] = (typeof(nvml_slot[0])){ d, slot };
	pthread_mutex_unlock(&nvml_lock);
	return slot;
}
