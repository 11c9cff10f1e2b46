// SPDX-License-Identifier: MIT
/*
 * The simulator as an RM client of the stand-in driver (simdrv/), with the ioctls a
 * CUDA process's libcuda makes: one root client per process; per GPU used, its
 * /dev/nvidiaN held open (the driver checks it for the device), a device and a
 * subdevice; one video memory object per physical take of the simulator's model, in
 * 2 MiB pages as the model counts them, so the driver's ledger (and cgpu_km enforce=1
 * on its boundary) holds exactly what the model says. As libcuda does, each object is
 * mapped into the process's unified address space through /dev/nvidia-uvm (an
 * external range of its own) while it lives, and unmapped before it is freed.
 *
 * A give need not match one take (a graph memory pool gives back its idle pages
 * together; several takes may go back as one). It frees an object of exactly that size
 * where there is one; else objects of that GPU until at least that much is freed, and
 * takes the excess back as a new object. If another process took the memory in
 * between, the driver then holds less than the model: the shortfall is remembered per
 * GPU and the next gives of that GPU settle it first, so the driver never holds more
 * than the model and both reach 0 together.
 */
#define _GNU_SOURCE
#include "rmclient.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "abi.h"
#include "state.h"
#include "vaspace.h"

#define PROC_DIR "/proc/driver/nvidia-sim"
/* RM refuses owner 0 and 0xffffffff; which owner libcuda passes is not documented. */
#define MEM_OWNER 0x63677075u

struct obj {
	sd_u32 h;
	int phys;
	uint64_t bytes;
	uint64_t va;		/* its external range in the va_space */
};

/* Where the objects' ranges go: far from anything the process maps itself. */
#define UVM_VA_BASE 0x100000000000ULL
/* An object's range and mapping: its 2 MiB pages (RM rounds it up to them). */
#define UVM_LEN(bytes) (((bytes) + (2ULL << 20) - 1) & ~((2ULL << 20) - 1))

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probed, loaded, ngpus;
static uint64_t totals[SIM_MAX_GPUS];
static sd_u32 memparams_size;

/* Guards everything below; a leaf: nothing else is locked under it. */
static pthread_mutex_t rm_lock = PTHREAD_MUTEX_INITIALIZER;
static int ctl = -1;
static sd_u32 client;
static struct {
	int fd;
	sd_u32 device, subdevice;
	uint64_t shortfall;	/* held by the model, not by the driver */
} gpu[SIM_MAX_GPUS] = { [0 ... SIM_MAX_GPUS - 1] = { .fd = -1 } };
static struct obj *objs;
static size_t nobjs, cap;
static int uvm = -1;			/* /dev/nvidia-uvm, initialized */
static sd_u32 uvm_registered;		/* a bit per GPU registered with it */
static uint64_t uvm_next = UVM_VA_BASE;
static sd_u32 uvm_max_gpus;		/* UVM_MAP_EXTERNAL_ALLOCATION's attributes */
/* Written once under rm_lock, read without it. */
static struct sd_engine *engines[SIM_MAX_GPUS];

static int esc(int fd, unsigned int nr, void *p, unsigned int size)
{
	return ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SD_IOCTL_MAGIC, nr, size), p);
}

static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "re");
	unsigned long long x;
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%llu", &x);
	fclose(f);
	if (n != 1)
		return -1;
	*v = x;
	return 0;
}

static void probe(void)
{
	struct sd_rm_api_version v = { .cmd = SD_VERSION_CMD_QUERY };
	char want[SD_VERSION_STRING_LENGTH] = "", path[64];
	FILE *f;
	int n, fd;

	/* Only the stand-in makes this file: a real NVIDIA driver is never asked. */
	f = fopen(PROC_DIR "/version", "re");
	if (!f)
		return;
	n = fscanf(f, "%63s", want);
	fclose(f);
	if (n != 1)
		return;
	for (n = 0; n < SIM_MAX_GPUS; n++) {
		snprintf(path, sizeof(path), PROC_DIR "/gpus/%d/total", n);
		if (read_u64(path, &totals[n]))
			break;
	}
	if (n == 0)
		return;
	/* Without the node (a container not given it) the process is not a client. */
	fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (esc(fd, SD_ESC_CHECK_VERSION_STR, &v, sizeof(v)) ||
	    v.reply != SD_VERSION_REPLY_RECOGNIZED || strcmp(v.versionString, want)) {
		close(fd);
		return;
	}
	ngpus = n;
	/* numaNode joined NV_MEMORY_ALLOCATION_PARAMS in 545.23.06. */
	memparams_size = atoi(want) >= 545 ? SD_MEMPARAMS_SIZE_NEW : SD_MEMPARAMS_SIZE_OLD;
	uvm_max_gpus = atoi(want) >= 545 ? SD_UVM_MAX_GPUS_550 : SD_UVM_MAX_GPUS_535;
	ctl = fd;
	loaded = 1;
}

/* Asked on every launch (the engine): after the first answer, one load and no call. */
int sim_rm_loaded(void)
{
	if (!__atomic_load_n(&probed, __ATOMIC_ACQUIRE)) {
		pthread_once(&probe_once, probe);
		__atomic_store_n(&probed, 1, __ATOMIC_RELEASE);
	}
	return loaded;
}

int sim_rm_gpus(void)
{
	return ngpus;
}

uint64_t sim_rm_total(int phys)
{
	return totals[phys];
}

uint64_t sim_rm_used(int phys)
{
	char path[64];
	uint64_t v = 0;

	snprintf(path, sizeof(path), PROC_DIR "/gpus/%d/used", phys);
	read_u64(path, &v);
	return v;
}

int sim_rm_clients(int phys, uint32_t *pid, uint64_t *bytes, int max)
{
	char path[64];
	unsigned long long b;
	unsigned int p;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), PROC_DIR "/gpus/%d/processes", phys);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (n < max && fscanf(f, "%u %llu", &p, &b) == 2) {
		pid[n] = p;
		bytes[n++] = b;
	}
	fclose(f);
	return n;
}

/* Caller holds rm_lock. 0, -ENOMEM for NV_ERR_NO_MEMORY, else -errno. */
static int rm_alloc(sd_u32 parent, sd_u32 *h, sd_u32 cls, void *params, sd_u32 size)
{
	struct sd_nvos64 p = { .hRoot = client, .hObjectParent = parent, .hObjectNew = *h,
			       .hClass = cls, .pAllocParms = (uintptr_t)params,
			       .paramsSize = size };

	if (esc(ctl, SD_ESC_RM_ALLOC, &p, sizeof(p)))
		return -errno;
	if (p.status == SD_NV_ERR_NO_MEMORY)
		return -ENOMEM;
	if (p.status != SD_NV_OK) {
		fprintf(stderr, "cgpu-sim: RM_ALLOC of class 0x%x: status 0x%x\n", cls, p.status);
		return -EIO;
	}
	*h = p.hObjectNew;
	return 0;
}

/* Caller holds rm_lock. */
static void rm_free(sd_u32 h)
{
	struct sd_nvos00 p = { .hRoot = client, .hObjectOld = h };

	if (esc(ctl, SD_ESC_RM_FREE, &p, sizeof(p)) || p.status != SD_NV_OK)
		fprintf(stderr, "cgpu-sim: RM_FREE of 0x%x: %s 0x%x\n", h,
			p.status ? "status" : "errno", p.status ? p.status : (unsigned)errno);
}

/* Caller holds rm_lock. */
static int open_node(int phys)
{
	char path[32];

	if (gpu[phys].fd < 0) {
		snprintf(path, sizeof(path), "/dev/nvidia%d", phys);
		gpu[phys].fd = open(path, O_RDWR | O_CLOEXEC);
		if (gpu[phys].fd < 0)
			return -errno;
	}
	return 0;
}

/* Caller holds rm_lock. Each step is made once and kept: a failure leaves what was
 * made for the next take to build on. */
static int open_gpu(int phys)
{
	struct sd_nv0080_alloc d = { .deviceId = (sd_u32)phys };
	struct sd_nv2080_alloc s = { 0 };
	int err;

	if (ctl < 0 && (ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC)) < 0)
		return -errno;
	if (!client) {
		struct sd_nvos64 p = { .hClass = SD_NV01_ROOT_CLIENT };

		/* Handle 0: RM picks the client's handle. */
		if (esc(ctl, SD_ESC_RM_ALLOC, &p, sizeof(p)))
			return -errno;
		if (p.status != SD_NV_OK) {
			fprintf(stderr, "cgpu-sim: RM_ALLOC of a client: status 0x%x\n", p.status);
			return -EIO;
		}
		client = p.hObjectNew;
	}
	if ((err = open_node(phys)))
		return err;
	if (!gpu[phys].device &&
	    (err = rm_alloc(client, &gpu[phys].device, SD_NV01_DEVICE_0, &d, sizeof(d))))
		return err;
	if (!gpu[phys].subdevice &&
	    (err = rm_alloc(gpu[phys].device, &gpu[phys].subdevice, SD_NV20_SUBDEVICE_0,
			    &s, sizeof(s))))
		return err;
	return 0;
}

/* A command of nvidia-uvm's: 0, or -EIO with the status said. Caller holds rm_lock. */
static int uvm_cmd(unsigned int cmd, void *p, const sd_u32 *status, const char *what)
{
	if (ioctl(uvm, cmd, p)) {
		fprintf(stderr, "cgpu-sim: nvidia-uvm %s: %s\n", what, strerror(errno));
		return -EIO;
	}
	if (*status != SD_NV_OK) {
		fprintf(stderr, "cgpu-sim: nvidia-uvm %s: status 0x%x\n", what, *status);
		return -EIO;
	}
	return 0;
}

/* Maps object h (bytes, on phys) into an external range of its own at *va. Caller holds rm_lock. */
static int uvm_map(int phys, sd_u32 h, uint64_t bytes, uint64_t *va)
{
	struct sd_uvm_create_external_range r = { .base = uvm_next, .length = UVM_LEN(bytes) };
	size_t size = SD_UVM_MAP_SIZE(uvm_max_gpus);
	struct sd_uvm_map_head *mh;
	struct sd_uvm_gpu_mapping *ma;
	struct sd_uvm_map_tail *mt;
	char *block;
	int err;

	if (uvm < 0) {
		struct sd_uvm_initialize init = { .flags = 0 };

		uvm = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
		if (uvm < 0) {
			fprintf(stderr, "cgpu-sim: /dev/nvidia-uvm: %s\n", strerror(errno));
			return -EIO;
		}
		if ((err = uvm_cmd(SD_UVM_INITIALIZE, &init, &init.rmStatus, "initialize"))) {
			close(uvm);
			uvm = -1;
			return err;
		}
	}
	if (!(uvm_registered >> phys & 1)) {
		struct sd_uvm_register_gpu g = { .rmCtrlFd = ctl, .hClient = client };

		sd_gpu_uuid((sd_u32)phys, g.gpu_uuid);
		if ((err = uvm_cmd(SD_UVM_REGISTER_GPU, &g, &g.rmStatus, "register GPU")))
			return err;
		uvm_registered |= 1u << phys;
	}
	if ((err = uvm_cmd(SD_UVM_CREATE_EXTERNAL_RANGE, &r, &r.rmStatus, "create range")))
		return err;
	block = calloc(1, size);
	if (!block)
		return -ENOMEM;
	mh = (void *)block;
	ma = (void *)(block + sizeof(*mh));
	mt = (void *)(block + size - sizeof(*mt));
	*mh = (struct sd_uvm_map_head){ .base = r.base, .length = r.length };
	sd_gpu_uuid((sd_u32)phys, ma[0].gpuUuid);
	*mt = (struct sd_uvm_map_tail){ .gpuAttributesCount = 1, .rmCtrlFd = ctl, .hClient = client,
		.hMemory = h };
	err = uvm_cmd(SD_UVM_MAP_EXTERNAL_ALLOCATION, block, &mt->rmStatus, "map");
	free(block);
	if (err) {
		struct sd_uvm_free f = { .base = r.base, .length = r.length };

		uvm_cmd(SD_UVM_FREE, &f, &f.rmStatus, "free");
		return err;
	}
	*va = r.base;
	uvm_next += r.length;
	return 0;
}

/* Caller holds rm_lock. */
static void uvm_unmap(uint64_t va, uint64_t bytes)
{
	struct sd_uvm_free f = { .base = va, .length = UVM_LEN(bytes) };

	uvm_cmd(SD_UVM_FREE, &f, &f.rmStatus, "free");
}

/* Caller holds rm_lock. */
static int take_locked(int phys, uint64_t bytes)
{
	struct sd_memory_alloc m = {
		.owner = MEM_OWNER,
		.attr = SD_ATTR_PAGE_SIZE_HUGE << SD_ATTR_PAGE_SIZE_SHIFT,
		.size = bytes,
	};
	sd_u32 h = 0;
	uint64_t va;
	int err = open_gpu(phys);

	if (!err)
		err = rm_alloc(gpu[phys].subdevice, &h, SD_NV01_MEMORY_LOCAL_USER, &m,
			       memparams_size);
	if (err)
		return err;
	if (nobjs == cap) {
		size_t n = cap ? 2 * cap : 64;
		struct obj *o = realloc(objs, n * sizeof(*o));

		if (!o) {
			rm_free(h);
			return -ENOMEM;
		}
		objs = o;
		cap = n;
	}
	if ((err = uvm_map(phys, h, bytes, &va))) {
		rm_free(h);
		return err;
	}
	objs[nobjs++] = (struct obj){ h, phys, bytes, va };
	return 0;
}

int sim_rm_take(int phys, uint64_t bytes)
{
	int err;

	pthread_mutex_lock(&rm_lock);
	err = take_locked(phys, bytes);
	pthread_mutex_unlock(&rm_lock);
	return err;
}

/* Caller holds rm_lock. Frees object i; the last one takes its place. */
static uint64_t drop(size_t i)
{
	uint64_t bytes = objs[i].bytes;

	uvm_unmap(objs[i].va, bytes);
	rm_free(objs[i].h);
	objs[i] = objs[--nobjs];
	return bytes;
}

void sim_rm_give(int phys, uint64_t bytes)
{
	uint64_t settled, freed = 0;
	size_t i;

	pthread_mutex_lock(&rm_lock);
	settled = bytes < gpu[phys].shortfall ? bytes : gpu[phys].shortfall;
	gpu[phys].shortfall -= settled;
	bytes -= settled;
	for (i = nobjs; bytes && i-- > 0;)
		if (objs[i].phys == phys && objs[i].bytes == bytes) {
			drop(i);
			bytes = 0;
		}
	for (i = nobjs; freed < bytes && i-- > 0;)
		if (objs[i].phys == phys)
			freed += drop(i);
	if (freed > bytes && take_locked(phys, freed - bytes))
		gpu[phys].shortfall += freed - bytes;
	pthread_mutex_unlock(&rm_lock);
}

struct sd_engine *sim_rm_engine(int phys)
{
	struct sd_engine *e = __atomic_load_n(&engines[phys], __ATOMIC_ACQUIRE);
	void *m;
	int err = 0;

	if (e)
		return e;
	pthread_mutex_lock(&rm_lock);
	e = engines[phys];
	if (!e && !(err = open_node(phys))) {
		m = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED,
			 gpu[phys].fd, 0);
		if (m == MAP_FAILED)
			err = -errno;
		else
			__atomic_store_n(&engines[phys], e = m, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&rm_lock);
	if (!e)
		fprintf(stderr, "cgpu-sim: GPU %d's engine (/dev/nvidia%d): %s\n", phys, phys,
			strerror(-err));
	return e;
}

/*
 * The parent's objects stay the parent's: the child closes its copies of the files
 * (the parent's stay open, so the driver frees nothing) and is a new client at its
 * next take. The table is dropped, not freed: a thread of the parent may have been
 * changing it when fork copied it. The engine pages stay mapped: fork copied the
 * mappings, and the GPU's engine is the same for parent and child.
 */
static void after_fork_child(void)
{
	pthread_mutex_init(&rm_lock, NULL);
	if (ctl >= 0)
		close(ctl);
	ctl = -1;
	client = 0;
	if (uvm >= 0)
		close(uvm);
	uvm = -1;
	uvm_registered = 0;
	for (int i = 0; i < SIM_MAX_GPUS; i++) {
		if (gpu[i].fd >= 0)
			close(gpu[i].fd);
		gpu[i].fd = -1;
		gpu[i].device = gpu[i].subdevice = 0;
		gpu[i].shortfall = 0;
	}
	objs = NULL;
	nobjs = cap = 0;
}

__attribute__((constructor)) static void rm_atfork(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}
