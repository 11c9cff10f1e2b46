// SPDX-License-Identifier: MIT
/*
 * rmprobe STEP...: makes a CUDA context and then each step's memory in turn, and keeps
 * everything until it exits, so that test/gpu/rmtrace.sh can read the driver's figures
 * after every step. After a step it calls rmtrace_mark("STEP") when librmtrace.so is
 * preloaded, prints "at STEP pid=PID" and waits for a line on stdin; at EOF it exits.
 *
 *   ctx             cuInit, the primary context, cuCtxSynchronize
 *   alloc:BYTES     cuMemAlloc
 *   reserve:BYTES   cuMemAddressReserve alone (a VA range and no memory)
 *   vmm:BYTES       cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess
 *   pool:BYTES      cuMemAllocAsync on a stream of its own, then synchronized
 *   managed:BYTES   cuMemAllocManaged, written by cuMemsetD8 on the GPU
 *   host:BYTES      cuMemAllocHost (pinned system memory the GPU maps)
 *   alias:N         one cuMemCreate handle of the granularity's size mapped N times,
 *                   1 GiB apart (page tables of its own for each mapping: what a tenant
 *                   that maps its budget many times over makes the driver hold)
 *   rmsetup         through RM's ioctls, as a program that bypasses libcuda can: a
 *                   client of its own, its device on GPU instance 0, the subdevice and a
 *                   VA space of RM's (not nvidia-uvm's); the raw steps below make it
 *                   first if it is not made, so that their figures are their ranges' alone
 *   rmlazy:BYTES    a VA range (NV50_MEMORY_VIRTUAL) in that VA space: LAZY (no page
 *   rmrange:BYTES   tables up front), without LAZY (RM pins them for the whole range),
 *   rmsparse:BYTES  SPARSE with LAZY (RM sparsifies it); the GPU's used memory after the
 *                   step, against the step before, is what RM made for it; and the
 *                   range's size as RM reports it (raw_surface)
 *   ctx2            a second context (cuCtxCreate), synchronized
 *   drop2           the second context destroyed (cuCtxDestroy), the first made current
 *
 * libcuda.so.1 is opened with dlopen, so the same binary runs on NVIDIA's driver and
 * on the simulated one (sim/, found through LD_LIBRARY_PATH). A call that fails prints
 * "error=NAME call=CALL step=STEP"; the steps after it still run (what a GPU or driver
 * lacks, managed memory or pools, costs one step), but for ctx, which ends the run.
 * Exit status: 0, or 1 when a step failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/ioctl.h>

#include "abi.h"
#include "cgpu_cuda.h"

#define FN(name) static __typeof__(&name) p_##name
FN(cuInit);
FN(cuGetErrorName);
FN(cuDeviceGet);
FN(cuDevicePrimaryCtxRetain);
FN(cuCtxSetCurrent);
FN(cuCtxCreate_v2);
FN(cuCtxDestroy_v2);
FN(cuCtxSynchronize);
FN(cuMemAlloc_v2);
FN(cuMemAddressReserve);
FN(cuMemGetAllocationGranularity);
FN(cuMemCreate);
FN(cuMemMap);
FN(cuMemSetAccess);
FN(cuStreamCreate);
FN(cuStreamSynchronize);
FN(cuMemAllocAsync);
FN(cuMemAllocManaged);
FN(cuMemsetD8_v2);
/* Neither libcgpu nor the simulated GPU has it, so cgpu_cuda.h does not declare it. */
static CUresult (*p_cuMemAllocHost_v2)(void **pp, size_t bytesize);

static const char *step;
static CUcontext primary, second;
static CUdevice dev;

static int fail(const char *call, CUresult r)
{
	const char *s = NULL;

	if (p_cuGetErrorName)
		p_cuGetErrorName(r, &s);
	printf("error=%s call=%s step=%s\n", s ? s : "?", call, step);
	return 1;
}

/*
 * The raw steps' objects, made once and kept: a client, its device 0x1000 on the first
 * GPU (its node kept open: the driver sets a GPU up for a process that opened it),
 * subdevice 0x1001 and VA space 0x1002; ranges from 0x2000.
 */
static int ctl = -1, node = -1, raw_made;
static sd_u32 client, next_range = 0x2000;

/*
 * NVOS21 allocation of class cls; the driver copies its class's own size of parameters
 * from params, which one release or another may make larger than ours: hence the pad.
 */
static sd_u32 rm_alloc(sd_u32 parent, sd_u32 handle, sd_u32 cls, const void *params, size_t size)
{
	_Alignas(8) unsigned char buf[512] = { 0 };
	struct sd_nvos21 p = { .hRoot = client, .hObjectParent = parent, .hObjectNew = handle,
			       .hClass = cls, .pAllocParms = params ? (unsigned long)buf : 0 };

	_Static_assert(sizeof(struct sd_memory_alloc) <= sizeof(buf), "the pad is too small");
	if (params)
		memcpy(buf, params, size < sizeof(buf) ? size : sizeof(buf));
	if (ioctl(ctl, _IOC(_IOC_READ | _IOC_WRITE, SD_IOCTL_MAGIC, SD_ESC_RM_ALLOC, sizeof(p)), &p))
		return ~0u;
	if (!client && cls == SD_NV01_ROOT_CLIENT && p.status == SD_NV_OK)
		client = p.hObjectNew;
	return p.status;
}

static int raw_fail(const char *what, sd_u32 status)
{
	if (status == ~0u)
		printf("error=errno-%d call=%s step=%s\n", errno, what, step);
	else
		printf("error=0x%x call=%s step=%s\n", status, what, step);
	return 1;
}

#define RAW(what, expr)                                      \
	do {                                                 \
		sd_u32 st_ = (expr);                         \
		if (st_ != SD_NV_OK)                         \
			return raw_fail(what, st_);          \
	} while (0)

/* rmsetup, tried once: a later raw step after a failed one says so and makes nothing. */
static int raw_setup(void)
{
	struct sd_nv0080_alloc d = { .deviceId = 0, .vaMode = SD_DEVICE_VAMODE_MULTIPLE_VASPACES };
	struct sd_nv2080_alloc sub = { 0 };
	struct sd_vaspace_alloc v = { 0 };

	if (raw_made < 0) {
		printf("error=failed-before call=rmsetup step=%s\n", step);
		return 1;
	}
	if (raw_made)
		return 0;
	raw_made = -1;
	ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	node = open("/dev/nvidia0", O_RDWR | O_CLOEXEC);
	if (ctl < 0 || node < 0)
		return raw_fail("open", ~0u);
	RAW("RM_ALLOC(client)", rm_alloc(0, 0, SD_NV01_ROOT_CLIENT, NULL, 0));
	d.hClientShare = client;
	RAW("RM_ALLOC(device)", rm_alloc(client, 0x1000, SD_NV01_DEVICE_0, &d, sizeof(d)));
	RAW("RM_ALLOC(subdevice)", rm_alloc(0x1000, 0x1001, SD_NV20_SUBDEVICE_0, &sub, sizeof(sub)));
	RAW("RM_ALLOC(VA space)", rm_alloc(0x1000, 0x1002, SD_FERMI_VASPACE_A, &v, sizeof(v)));
	raw_made = 1;
	return 0;
}

/*
 * What RM says of range h as of a memory object (NV0041_CTRL_CMD_GET_SURFACE_INFO), the
 * figure cgpu_km's charge of a range rests on (docs/kmod.md, "VA ranges"): printed as
 * "range 0xH: surface status=0xS size=BYTES type=T", or "surface errno-E" where the
 * control itself fails.
 */
static void raw_surface(sd_u32 h)
{
	struct sd_nv0041_surface_info l[2] = {
		{ SD_NV0041_SURFACE_INFO_INDEX_PHYS_SIZE, 0 },
		{ SD_NV0041_SURFACE_INFO_INDEX_ADDR_SPACE_TYPE, 0 } };
	struct sd_nv0041_get_surface_info gp = { .surfaceInfoListSize = 2,
		.surfaceInfoList = (unsigned long)l };
	struct sd_nvos54 p = { .hClient = client, .hObject = h,
		.cmd = SD_NV0041_CTRL_CMD_GET_SURFACE_INFO, .params = (unsigned long)&gp,
		.paramsSize = sizeof(gp) };

	if (ioctl(ctl, _IOC(_IOC_READ | _IOC_WRITE, SD_IOCTL_MAGIC, SD_ESC_RM_CONTROL, sizeof(p)), &p))
		printf("range 0x%x: surface errno-%d\n", h, errno);
	else
		printf("range 0x%x: surface status=0x%x size=%llu type=%u\n", h, p.status,
		       (unsigned long long)l[0].data * SD_NV0041_SURFACE_INFO_PHYS_SIZE_SCALE, l[1].data);
}

static int raw_range(sd_u32 flags, size_t bytes)
{
	struct sd_memory_alloc m = { .flags = SD_ALLOC_FLAGS_VIRTUAL | flags, .size = bytes,
				     .hVASpace = 0x1002 };
	sd_u32 h = next_range++;

	if (raw_setup())
		return 1;
	m.owner = client;	/* the heap's owner of the range, as libcuda names it */
	RAW("RM_ALLOC(range)", rm_alloc(0x1000, h, SD_NV50_MEMORY_VIRTUAL, &m, sizeof(m)));
	raw_surface(h);
	return 0;
}

/* CK(FN, ARGS...): FN(ARGS); a function this libcuda lacks fails its step alone. */
#define CK(fn, ...)                                                           \
	do {                                                                  \
		CUresult r_;                                                  \
		if (!p_##fn) {                                                \
			printf("error=missing call=%s step=%s\n", #fn, step);  \
			return 1;                                             \
		}                                                             \
		r_ = p_##fn(__VA_ARGS__);                                     \
		if (r_ != CUDA_SUCCESS)                                       \
			return fail(#fn, r_);                                 \
	} while (0)

static int load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);

	if (!h) {
		printf("error=dlopen call=%s step=load\n", dlerror());
		return 1;
	}
#define SYM(name) p_##name = (__typeof__(p_##name))dlsym(h, #name);
	SYM(cuInit) SYM(cuGetErrorName) SYM(cuDeviceGet) SYM(cuDevicePrimaryCtxRetain)
	SYM(cuCtxSetCurrent) SYM(cuCtxCreate_v2) SYM(cuCtxDestroy_v2) SYM(cuCtxSynchronize)
	SYM(cuMemAlloc_v2) SYM(cuMemAddressReserve) SYM(cuMemGetAllocationGranularity)
	SYM(cuMemCreate) SYM(cuMemMap) SYM(cuMemSetAccess) SYM(cuStreamCreate)
	SYM(cuStreamSynchronize) SYM(cuMemAllocAsync) SYM(cuMemAllocManaged) SYM(cuMemsetD8_v2)
	SYM(cuMemAllocHost_v2)
	return 0;
}

static int run(const char *name, size_t bytes)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, dev } };
	CUmemAccessDesc acc = { prop.location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h;
	CUdeviceptr p, va;
	CUstream s;
	void *hp;
	size_t gran;

	if (!strcmp(name, "ctx")) {
		CK(cuInit, 0);
		CK(cuDeviceGet, &dev, 0);
		CK(cuDevicePrimaryCtxRetain, &primary, dev);
		CK(cuCtxSetCurrent, primary);
		CK(cuCtxSynchronize);
	} else if (!strcmp(name, "alloc")) {
		CK(cuMemAlloc_v2, &p, bytes);
	} else if (!strcmp(name, "reserve")) {
		CK(cuMemAddressReserve, &va, bytes, 0, 0, 0);
	} else if (!strcmp(name, "vmm")) {
		CK(cuMemGetAllocationGranularity, &gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
		bytes = (bytes + gran - 1) / gran * gran;
		CK(cuMemCreate, &h, bytes, &prop, 0);
		CK(cuMemAddressReserve, &va, bytes, 0, 0, 0);
		CK(cuMemMap, va, bytes, 0, h, 0);
		CK(cuMemSetAccess, va, bytes, &acc, 1);
	} else if (!strcmp(name, "pool")) {
		CK(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
		CK(cuMemAllocAsync, &p, bytes, s);
		CK(cuStreamSynchronize, s);
	} else if (!strcmp(name, "managed")) {
		CK(cuMemAllocManaged, &p, bytes, CU_MEM_ATTACH_GLOBAL);
		CK(cuMemsetD8_v2, p, 0x5a, bytes);
		CK(cuCtxSynchronize);
	} else if (!strcmp(name, "host")) {
		CK(cuMemAllocHost_v2, &hp, bytes);
	} else if (!strcmp(name, "alias")) {
		CK(cuMemGetAllocationGranularity, &gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
		CK(cuMemCreate, &h, gran, &prop, 0);
		CK(cuMemAddressReserve, &va, bytes << 30, 1ull << 30, 0, 0);
		for (size_t i = 0; i < bytes; i++) {
			CK(cuMemMap, va + (i << 30), gran, 0, h, 0);
			CK(cuMemSetAccess, va + (i << 30), gran, &acc, 1);
		}
	} else if (!strcmp(name, "rmsetup")) {
		return raw_setup();
	} else if (!strcmp(name, "rmlazy")) {
		return raw_range(SD_ALLOC_FLAGS_LAZY, bytes);
	} else if (!strcmp(name, "rmrange")) {
		return raw_range(0, bytes);
	} else if (!strcmp(name, "rmsparse")) {
		return raw_range(SD_ALLOC_FLAGS_SPARSE | SD_ALLOC_FLAGS_LAZY, bytes);
	} else if (!strcmp(name, "ctx2")) {
		CK(cuCtxCreate_v2, &second, 0, dev);
		CK(cuCtxSynchronize);
	} else if (!strcmp(name, "drop2")) {
		if (!second) {
			printf("error=skipped call=cuCtxDestroy_v2 step=%s (no second context)\n", step);
			return 1;
		}
		CK(cuCtxDestroy_v2, second);
		second = NULL;
		CK(cuCtxSetCurrent, primary);
	} else {
		printf("error=usage call=%s step=%s\n", name, step);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	void (*mark)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "rmtrace_mark");
	char line[64];
	int failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (load())
		return 1;
	for (int i = 1; i < argc; i++) {
		char name[32];
		const char *colon = strchr(argv[i], ':');
		size_t len = colon ? (size_t)(colon - argv[i]) : strlen(argv[i]);

		step = argv[i];
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, argv[i], len);
		name[len] = 0;
		if (run(name, colon ? strtoull(colon + 1, NULL, 0) : 0)) {
			if (!strcmp(name, "ctx"))
				return 1;
			failed = 1;
		}
		if (mark)
			mark(argv[i]);
		printf("at %s pid=%d\n", argv[i], (int)getpid());
		if (!fgets(line, sizeof(line), stdin))
			break;
	}
	return failed;
}
