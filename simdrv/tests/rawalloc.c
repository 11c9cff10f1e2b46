// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A CUDA process's memory path with nothing but the driver's public ABI: raw
 * NV_ESC_RM_ALLOC/FREE ioctls on /dev/nvidiactl, built static (no libcuda). Used by the
 * VM test (simdrv/tests/vm-guest.sh) against the loaded stand-in.
 *   rawalloc check       every escape, both RM_ALLOC sizes, direct and XFER-wrapped,
 *                        the driver's ledger in /proc, and each bad input's answer
 *   rawalloc hold MIB [FILES]  allocates MIB MiB on GPU 0, opens /dev/nvidia0 FILES
 *                        times more (default 0), prints "held", waits to be killed
 *   rawalloc loop MIB [GPU]  (cgpu_km enforce=1) a second client takes 2 x MIB and
 *                        frees its device, a third takes as much and is freed whole;
 *                        then allocations of MIB MiB on GPU (default 0) under its device
 *                        and subdevice, NVOS21 and NVOS64, direct and XFER-wrapped, by
 *                        turns, until the status is not NV_OK; prints
 *                        "loop: N x MIB MiB, then status 0xS"; frees the last one and
 *                        allocates it again ("refill: 0xS"), prints "held", waits
 *   rawalloc leaderexit MIB  (cgpu_km enforce=1) MIB MiB on GPU 0; its main thread
 *                        exits and a second thread goes on: "held" once it has, waits
 *                        to be killed
 *   rawalloc small MAX   allocations of 4 KiB in 4 KiB pages on GPU 0 until the status
 *                        is not NV_OK, at most MAX; prints "small: N x 4 KiB, then
 *                        status 0xS", "held", waits to be killed
 *   rawalloc dup MIB     (cgpu_km enforce=1) allocates MIB MiB on GPU 0 and asks
 *                        NV_ESC_RM_DUP_OBJECT of it, and of its device; prints
 *                        "dup memory: A, dup device: B", each "status 0xS" or, where
 *                        the ioctl itself fails, "errno E"; then "client 0xC memory
 *                        0xM" (its own handles) and "held", waits
 *   rawalloc dupof C M   asks NV_ESC_RM_DUP_OBJECT of another process's object (client
 *                        C, object M) into a client of its own on GPU 0; prints
 *                        "dup other: A" (as above) and "held", waits
 *   rawalloc churn MIB   allocates and frees MIB MiB on GPU 0 over and over, NVOS21 and
 *                        NVOS64 by turns, until killed; any status but NV_OK and
 *                        NV_ERR_NO_MEMORY, or a failed free, ends it with exit 1
 *   rawalloc press MIB   (cgpu_km enforce=1) allocates MIB MiB on GPU 0, all four forms
 *                        by turns, until refused; prints "press: N x MIB MiB, then
 *                        status 0xS" and "held", then asks again, once a millisecond,
 *                        and keeps whatever it is given, until killed (an allocation
 *                        nothing charges would pass the budget for good)
 *   rawalloc engine      the engine page (lib/engine.h, ours): a GPU node maps one page at
 *                        offset 0, shared, the same page through every open; every
 *                        other mmap, and any of /dev/nvidiactl, is EINVAL
 *   rawalloc uvm         /dev/nvidia-uvm as libcuda's cuInit opens it: UVM_INITIALIZE,
 *                        again with the same flags and with others, DEINITIALIZE, an
 *                        unknown command; /dev/nvidia-uvm-tools opens; prints "uvm: ..."
 *   rawalloc race FILL BIG N  (cgpu_km enforce=1) holds FILL MiB on GPU 0, then makes N
 *                        allocations of 2 MiB, all four forms by turns, each freed
 *                        at once when made, while a second thread rewrites the size
 *                        in the class parameters to BIG MiB and back without pause
 *                        (time of check to time of use: the driver copies them after
 *                        cgpu_km looked); prints "race: M made, R refused, at most X
 *                        MiB held" (the driver's figure after each one made), "held",
 *                        waits
 *   rawalloc devrace N MEMINFO0 MEMINFO1  (cgpu_km enforce=1) N devices made while a
 *                        second thread rewrites their deviceId (0 and 1) without
 *                        pause, each with a subdevice and 32 MiB kept under it; prints
 *                        "devrace: N devices; memory made M0 on GPU 0, M1 on GPU 1, R
 *                        refused; the driver holds U0 and U1; GPU 0 <MEMINFO0's first
 *                        line>, GPU 1 <MEMINFO1's>", then, the memory freed, "devrace:
 *                        devices on GPU 0: A, on GPU 1: B" (below), "held", waits;
 *                        first, memory and a channel group under a device before its
 *                        subdevice is made ("devrace: before a subdevice: ...")
 *   rawalloc forkhold MIB GO  (cgpu_km enforce=1) MIB MiB on GPU 0 and a child holding
 *                        the driver's files: "forkhold: child C", "held"; the parent
 *                        exits once GO exists (below)
 *   rawalloc parentrace N BIG  (cgpu_km enforce=1) N rounds of a device and its first
 *                        subdevice made and freed while a second thread asks for BIG
 *                        MiB under the subdevice's handle: "parentrace: N rounds, A
 *                        asked: M made, R refused (no memory), P no parent, O other"
 *   rawalloc dropdouble  (cgpu_km enforce=1, the stand-in's answer_delay_ms) a channel
 *                        group's handle recorded twice by cgpu_km, then its device
 *                        freed: "dropdouble: group 0xS, freed 0xS 0xS 0xS, then N pairs,
 *                        status 0xS", "held", waits
 *   rawalloc uvmshare MIB  (cgpu_km enforce=1) MIB MiB mapped through nvidia-uvm, and
 *                        a child, holding the va_space's file too, with MIB MiB of its
 *                        own: "uvmshare: child C", "held"; both wait to be killed
 *   rawalloc forkclose MIB GO  as forkhold, but once GO exists the parent closes its
 *                        files (all but its output) and lives on until killed
 *   rawalloc rmfree C H   NV_ESC_RM_FREE of handle H of client C (another process's) from
 *                        a /dev/nvidiactl of its own: "rmfree: status 0xS"
 *   rawalloc inflight MIB GO  (cgpu_km enforce=1) MIB MiB on GPU 0, the driver's files
 *                        sent on a socket a child holds and never reads: "inflight:
 *                        child C", "held"; the parent exits once GO exists (below)
 *   rawalloc reopen MIB GO OUT  (cgpu_km enforce=1) MIB MiB on GPU 0, "held"; once GO
 *                        exists, a second /dev/nvidiactl opened and closed, MIB MiB
 *                        asked again, the first freed and MIB MiB asked again:
 *                        "reopen: again 0xS, freed 0xS, then 0xS, the driver holds B"
 *                        and "done" in OUT; once GO.2 exists, its client freed:
 *                        "client freed 0xS, the driver holds B" and "done2" (below)
 *   rawalloc register    NV_ESC_REGISTER_FD of a GPU node's file and of a second
 *                        control file to the first (below)
 *   rawalloc dupfollow   (cgpu_km enforce=1) duplicates of a container's own memory,
 *                        in its client and from a second /dev/nvidiactl; prints
 *                        "dupfollow: ..." lines (below), "held", waits
 *   rawalloc dupchurn N MEMINFO  (cgpu_km enforce=1) duplicates of a handle that
 *                        another thread frees and makes again without pause (below)
 *   rawalloc dmabuf MIB N  N rounds of: MIB MiB on GPU 0 exported to a dma-buf
 *                        (NV_ESC_EXPORT_TO_DMABUF_FD on /dev/nvidia0), then its handle
 *                        freed, the dma-buf kept (below)
 *   rawalloc uvmchurn N MEMINFO  (cgpu_km enforce=1) mappings through nvidia-uvm of a
 *                        handle that another thread frees and makes again (below)
 *   rawalloc uvmlater MIB GO OUT  (cgpu_km enforce=1) opens the nodes and a va_space and
 *                        allocates MIB MiB, says "held", and once GO exists maps that,
 *                        then allocates, maps and frees MIB MiB more (below)
 *   rawalloc frozendup MIB GO OUT FILE  (cgpu_km enforce=1) memory duplicated and
 *                        mapped while cgpu_km is frozen for a hot update (below)
 *   rawalloc uvmremap MIB GO OUT FILE  (cgpu_km enforce=1) memory mapped through
 *                        nvidia-uvm with and without its handle, and memory not mapped,
 *                        held through a hot update, then unmapped and freed (below)
 *   rawalloc uvmhold MIB N [FILE]  N rounds of: MIB MiB on GPU 0 mapped through
 *                        /dev/nvidia-uvm (UVM_MAP_EXTERNAL_ALLOCATION into a range of
 *                        its own), then its handle freed, the mapping kept (below);
 *                        FILE's first line printed at each step
 *   rawalloc uvmalias MAX [FILE]  64 MiB on GPU 0 mapped through /dev/nvidia-uvm at
 *                        up to MAX places 1 GiB apart at 4 KiB pages, each making page
 *                        tables of its own (below); FILE's first line printed at each step
 *   rawalloc uvmsys MAX VAS [FILE]  as uvmalias, of 64 MiB of system memory
 *                        (NV01_MEMORY_SYSTEM), a GPU VA space of GPU 0 registered first
 *                        if VAS is 1 (below)
 *   rawalloc uvmsparse MAX [FILE [GPU]]  sparse mappings (UVM_MAP_EXTERNAL_SPARSE) of
 *                        2 GiB spans on GPU GPU (0 unless given), up to MAX (below)
 *   rawalloc uvmpool MAX [FILE]  semaphore pools of 4 KiB (UVM_ALLOC_SEMAPHORE_POOL)
 *                        1 GiB apart, a GPU VA space of GPU 0 registered, up to MAX (below)
 *   rawalloc uvmdpr MAX [FILE]  as uvmpool, of dynamic parallelism regions of 64 KiB
 *                        (UVM_MAP_DYNAMIC_PARALLELISM_REGION) on GPU 0
 *   rawalloc uvmmanaged MIB  a managed range of MIB MiB (a mmap of /dev/nvidia-uvm)
 *                        moved to GPU 0 (UVM_MIGRATE), then half of it unmapped (below)
 *   rawalloc uvmhmm MIB  MIB MiB of pageable memory moved to GPU 0, as HMM does (below)
 *   rawalloc uvmchan N   (cgpu_km enforce=1) up to N rounds of a channel group and a
 *                        channel in it under a device of GPU 0, the channel registered
 *                        with nvidia-uvm and the group freed; then an unregister, the
 *                        va_space closed, and pairs again (below)
 *   rawalloc uvmretain N  (cgpu_km enforce=1) N rounds as uvmchan's, all registered:
 *                        "uvmretain: N registered, GPU 0 holds B", "held", waits
 *   rawalloc chanhold    a channel in no group and a VA space on GPU 0, held for
 *                        another process to register (below)
 *   rawalloc uvmforeign C  chanhold's channel and VA space of client C registered
 *                        with nvidia-uvm by this process (below)
 *   rawalloc uvmhandoff N  N rounds as uvmchan's, then a child holding the va_space
 *                        alone (below)
 *   rawalloc vaspaces N  (cgpu_km enforce=1) GPU VA spaces under a device of GPU 0 and
 *                        its subdevice, up to N; a duplicate of one, one registered with
 *                        nvidia-uvm (UVM_REGISTER_GPU_VASPACE) and freed (below)
 *   rawalloc ranges MAX MEMINFO  (cgpu_km enforce=1) GPU VA ranges (NV50_MEMORY_VIRTUAL)
 *                        under a device of GPU 0, all four forms by turns: 64 MiB, then
 *                        64 MiB LAZY, a duplicate of the first, maps into the first
 *                        (NV_ESC_RM_MAP_MEMORY_DMA: of no length, past it, within it, into
 *                        the device), then ranges of 1 GiB until refused, at most MAX,
 *                        and one of 16 TiB; each line with what GPU 0 holds and what
 *                        MEMINFO charges; all freed, then "held"
 *   rawalloc rangerace N MEMINFO  (cgpu_km enforce=1) N LAZY VA ranges of 2 MiB made
 *                        and freed while a second thread rewrites their size to 1 TiB
 *                        and back (below)
 *   rawalloc rangehold GO OUT  (cgpu_km enforce=1) a VA range of 1 GiB held through a
 *                        hot update, freed once GO exists (below)
 *   rawalloc clientvas N [GO OUT]  (cgpu_km enforce=1) up to N rounds of a client
 *                        whose device of GPU 0 shares its own client's VA space, and a
 *                        channel group naming none: RM makes the device a VA space of
 *                        its own; with GO, once GO exists (below)
 *   rawalloc frozenkinds GO OUT  (cgpu_km enforce=1) a channel group and a GPU VA space
 *                        under a device made before GO exists (below)
 *   rawalloc devcount    (cgpu_km enforce=1) a channel group on GPU 1 while a device of
 *                        GPU 0 has no subdevice yet, and once it has (below)
 *   rawalloc uvmkeep MIB N [GO]  N rounds as uvmhold's, then its RM files closed: the
 *                        mappings held through /dev/nvidia-uvm alone (below); with
 *                        GO, by a child too, and by it alone once GO exists
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "../lib/abi.h"
#include "../lib/engine.h"
#include "../lib/vaspace.h"

#define MiB (1ULL << 20)
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "rawalloc:%d: failed: %s (errno %d)\n", __LINE__, #c, errno); exit(1); } } while (0)

static int ctl;
static unsigned int memsize;	/* NV_MEMORY_ALLOCATION_PARAMS of the driver's version */
static unsigned int uvm_max_gpus;	/* UVM_MAP_EXTERNAL_ALLOCATION's attributes in it */

static int esc(int fd, unsigned int nr, void *p, unsigned int size)
{
	return ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SD_IOCTL_MAGIC, nr, size), p);
}

static int xfer(int fd, unsigned int nr, void *p, unsigned int size)
{
	struct sd_xfer x = { .cmd = nr, .size = size, .ptr = (unsigned long)p };

	return esc(fd, SD_ESC_IOCTL_XFER_CMD, &x, sizeof(x));
}

/* RM_ALLOC: form 0 NVOS21, 1 NVOS64, 2 NVOS21 in XFER, 3 NVOS64 in XFER; the status. */
static unsigned int alloc(int form, unsigned int root, unsigned int parent, unsigned int *h,
			  unsigned int cls, void *params)
{
	if (form % 2 == 0) {
		struct sd_nvos21 p = { .hRoot = root, .hObjectParent = parent, .hObjectNew = *h,
			.hClass = cls, .pAllocParms = (unsigned long)params };
		CHECK((form < 2 ? esc(ctl, SD_ESC_RM_ALLOC, &p, sizeof(p)) :
			xfer(ctl, SD_ESC_RM_ALLOC, &p, sizeof(p))) == 0);
		*h = p.hObjectNew;
		return p.status;
	} else {
		struct sd_nvos64 p = { .hRoot = root, .hObjectParent = parent, .hObjectNew = *h,
			.hClass = cls, .pAllocParms = (unsigned long)params };
		CHECK((form < 2 ? esc(ctl, SD_ESC_RM_ALLOC, &p, sizeof(p)) :
			xfer(ctl, SD_ESC_RM_ALLOC, &p, sizeof(p))) == 0);
		*h = p.hObjectNew;
		return p.status;
	}
}

static unsigned int rmfree(unsigned int root, unsigned int obj)
{
	struct sd_nvos00 p = { .hRoot = root, .hObjectOld = obj };

	CHECK(esc(ctl, SD_ESC_RM_FREE, &p, sizeof(p)) == 0);
	return p.status;
}

static unsigned long long used(int gpu)
{
	char path[64];
	unsigned long long v = ~0ULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/driver/nvidia-sim/gpus/%d/used", gpu);
	f = fopen(path, "r");
	CHECK(f && fscanf(f, "%llu", &v) == 1);
	fclose(f);
	return v;
}

/* Opens the nodes, checks the version and learns the memory parameters' size. */
static void start(void)
{
	struct sd_rm_api_version v = { .cmd = SD_VERSION_CMD_QUERY };
	char want[64] = "";
	FILE *f;

	ctl = open("/dev/nvidiactl", O_RDWR);
	CHECK(ctl >= 0);
	CHECK(esc(ctl, SD_ESC_CHECK_VERSION_STR, &v, sizeof(v)) == 0);
	CHECK(v.reply == SD_VERSION_REPLY_RECOGNIZED);
	f = fopen("/proc/driver/nvidia-sim/version", "r");
	CHECK(f && fscanf(f, "%63s", want) == 1);
	fclose(f);
	CHECK(strcmp(v.versionString, want) == 0);
	/* numaNode joined NV_MEMORY_ALLOCATION_PARAMS in 545.23.06. */
	memsize = atoi(want) >= 545 ? SD_MEMPARAMS_SIZE_NEW : SD_MEMPARAMS_SIZE_OLD;
	uvm_max_gpus = atoi(want) >= 545 ? SD_UVM_MAX_GPUS_550 : SD_UVM_MAX_GPUS_535;
	printf("rawalloc: driver %s, NV_MEMORY_ALLOCATION_PARAMS of %u bytes\n", want, memsize);
}

/* A new client, its handle RM's choice. */
static unsigned int new_client(void)
{
	unsigned int c = 0;

	CHECK(alloc(0, 0, 0, &c, SD_NV01_ROOT, NULL) == SD_NV_OK && c != 0);
	return c;
}

/*
 * Device handle of client c on GPU gpu (RM_ALLOC form form); needs /dev/nvidia<gpu>
 * open. RM gives a client one device of a GPU: another there needs another client.
 */
static void device_of(int form, unsigned int c, unsigned int gpu, unsigned int handle)
{
	struct sd_nv0080_alloc d = { .deviceId = gpu };
	unsigned int h = handle;

	CHECK(alloc(form, c, c, &h, SD_NV01_DEVICE_0, &d) == SD_NV_OK && h == handle);
}

/* Subdevice dev + 1 of client c's device dev (RM_ALLOC form form). */
static void subdevice_of(int form, unsigned int c, unsigned int dev)
{
	struct sd_nv2080_alloc s = { 0 };
	unsigned int h = dev + 1;

	CHECK(alloc(form, c, dev, &h, SD_NV20_SUBDEVICE_0, &s) == SD_NV_OK);
}

/* A new client with device handle on GPU gpu (device_of) and no subdevice yet. */
static unsigned int client_with_device(int form, unsigned int gpu, unsigned int handle)
{
	unsigned int c = new_client();

	device_of(form, c, gpu, handle);
	return c;
}

/* A client with device 0x1000 and subdevice 0x1001 on GPU gpu (client_with_device). */
static unsigned int client_on_gpu(unsigned int gpu)
{
	unsigned int c = client_with_device(1, gpu, 0x1000);

	subdevice_of(2, c, 0x1000);
	return c;
}

/* Says "held" (what the test waits for) and keeps everything it holds until killed. */
static __attribute__((noreturn)) void held_until_killed(void)
{
	printf("held\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* Closes f (what the test reads) and keeps everything it holds until killed. */
static __attribute__((noreturn)) void closed_until_killed(FILE *f)
{
	fclose(f);
	for (;;)
		pause();
}

/* Waits until the file go exists (the test's signal to go on). */
static void wait_for(const char *go)
{
	while (access(go, F_OK))
		usleep(10000);
}

/* Says "held" and waits for go. */
static void held_until(const char *go)
{
	printf("held\n");
	fflush(stdout);
	wait_for(go);
}

/* Closes every descriptor from 3 on but keep1 and keep2 (-1: none). */
static void close_all_but(int keep1, int keep2)
{
	for (int fd = 3; fd < 1024; fd++)
		if (fd != keep1 && fd != keep2)
			close(fd);
}

/*
 * A child that runs in_child(arg) and then holds what it has until killed; returned
 * once in_child is done, so that what the test reads next sees its work.
 */
static pid_t child_ready(void (*in_child)(long, int), long arg)
{
	int p[2];
	pid_t child;
	char ok;

	CHECK(pipe(p) == 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		close(p[0]);
		in_child(arg, p[1]);
		CHECK(write(p[1], "y", 1) == 1);
		for (;;)
			pause();
	}
	/* A child that dies before it writes ends the read with 0, not a hang. */
	close(p[1]);
	CHECK(read(p[0], &ok, 1) == 1);
	close(p[0]);
	return child;
}

/*
 * A child that inherits every file and holds them until killed: "NAME: child C",
 * "held"; once GO exists the parent exits, or (stay) closes every file of its own but
 * its output and lives on until killed.
 */
static __attribute__((noreturn)) void hand_to_child(const char *name, const char *go, bool stay)
{
	pid_t child = fork();

	CHECK(child >= 0);
	if (child == 0) {
		for (;;)
			pause();
	}
	printf("%s: child %d\nheld\n", name, (int)child);
	fflush(stdout);
	wait_for(go);
	if (!stay)
		exit(0);
	close_all_but(-1, -1);
	for (;;)
		pause();
}

/* A va_space on /dev/nvidia-uvm, initialized, GPU 0 registered; its descriptor. */
static int uvm_space(void)
{
	struct sd_uvm_initialize init = { .flags = 0 };
	struct sd_uvm_register_gpu reg = { .rmCtrlFd = ctl };
	int fd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(ioctl(fd, SD_UVM_INITIALIZE, &init) == 0 && init.rmStatus == SD_NV_OK);
	sd_gpu_uuid(0, reg.gpu_uuid);
	CHECK(ioctl(fd, SD_UVM_REGISTER_GPU, &reg) == 0 && reg.rmStatus == SD_NV_OK);
	return fd;
}

static void uvm_range(int fd, unsigned long long base, unsigned long long len)
{
	struct sd_uvm_create_external_range cr = { .base = base, .length = len };

	CHECK(ioctl(fd, SD_UVM_CREATE_EXTERNAL_RANGE, &cr) == 0 && cr.rmStatus == SD_NV_OK);
}

static void uvm_free_range(int fd, unsigned long long base, unsigned long long len)
{
	struct sd_uvm_free fr = { .base = base, .length = len };

	CHECK(ioctl(fd, SD_UVM_FREE, &fr) == 0 && fr.rmStatus == SD_NV_OK);
}

/* UVM_MAP_EXTERNAL_ALLOCATION of (c, hmem) at [base, base + len) on GPU 0: its status. */
static unsigned int uvm_map(int fd, unsigned long long base, unsigned long long len,
			    unsigned int c, unsigned int hmem)
{
	size_t size = SD_UVM_MAP_SIZE(uvm_max_gpus);
	char *block = calloc(1, size);
	struct sd_uvm_map_head *mh = (void *)block;
	struct sd_uvm_gpu_mapping *ma = (void *)(block + sizeof(*mh));
	struct sd_uvm_map_tail *mt = (void *)(block + size - sizeof(*mt));
	unsigned int st;

	CHECK(block != NULL);
	*mh = (struct sd_uvm_map_head){ .base = base, .length = len };
	sd_gpu_uuid(0, ma[0].gpuUuid);
	*mt = (struct sd_uvm_map_tail){ .gpuAttributesCount = 1, .rmCtrlFd = ctl, .hClient = c,
		.hMemory = hmem };
	CHECK(ioctl(fd, SD_UVM_MAP_EXTERNAL_ALLOCATION, block) == 0);
	st = mt->rmStatus;
	free(block);
	return st;
}

/* Opens /dev/nvidia<gpu> (held open until exit, as libcuda does). */
static void open_gpu(unsigned int gpu)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/nvidia%u", gpu);
	CHECK(open(path, O_RDWR) >= 0);
}

/*
 * MIB MiB of video memory (handle 0x2000, alloc's FORM) under subdevice 0x1001 of a new
 * client on GPU 0, on a /dev/nvidiactl opened now (start): the client.
 */
static unsigned int mib_on_gpu0(unsigned long long mib, int form)
{
	struct sd_memory_alloc m = { .owner = 0x1234, .size = mib * MiB };
	unsigned int c, h = 0x2000;

	start();
	c = client_on_gpu(0);
	CHECK(alloc(form, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
	return c;
}

static void hold(unsigned long long mib, unsigned int files)
{
	open_gpu(0);
	mib_on_gpu0(mib, 3);
	while (files--)
		open_gpu(0);
	held_until_killed();
}

static void loop(unsigned long long mib, unsigned int gpu)
{
	struct sd_memory_alloc m;
	unsigned int c, c2, h, st, n = 0, parent;

	open_gpu(gpu);
	start();
	/*
	 * Memory freed with its device, and with its client, comes back: the loop below
	 * gets it all.
	 */
	for (int whole = 0; whole < 2; whole++) {
		c2 = client_on_gpu(gpu);
		for (h = 0x3000; h < 0x3002; h++) {
			unsigned int hh = h;

			m = (struct sd_memory_alloc){ .owner = 0x1234, .size = mib * MiB };
			st = alloc(1, c2, h == 0x3000 ? 0x1000 : 0x1001, &hh,
				   SD_NV01_MEMORY_LOCAL_USER, &m);
			/* Refused from the start (no budget on this GPU): said as the loop's end. */
			if (st != SD_NV_OK)
				goto out;
		}
		CHECK(rmfree(c2, whole ? c2 : 0x1000) == SD_NV_OK);
		if (!whole)
			CHECK(rmfree(c2, c2) == SD_NV_OK);
	}
	c = client_on_gpu(gpu);
	for (;;) {
		h = 0x2000 + n;
		parent = n % 3 ? 0x1001 : 0x1000;
		m = (struct sd_memory_alloc){ .owner = 0x1234, .size = mib * MiB };
		st = alloc(n % 4, c, parent, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
		if (st != SD_NV_OK)
			break;
		n++;
	}
out:
	printf("loop: %u x %llu MiB, then status 0x%x\n", n, mib, st);
	if (n) {
		CHECK(rmfree(c, 0x2000 + n - 1) == SD_NV_OK);
		h = 0x2000 + n - 1;
		m = (struct sd_memory_alloc){ .owner = 0x1234, .size = mib * MiB };
		printf("refill: 0x%x\n", alloc(3, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m));
	}
	held_until_killed();
}

/*
 * Allocations of 4 KiB in 4 KiB pages on GPU 0 until the status is not NV_OK, at most
 * MAX: RM reports each as 4 KiB, the GPU holds a 64 KiB page of its physical allocator
 * for it. Prints "small: N x 4 KiB, then status 0xS", "held", waits to be killed.
 */
static void small(unsigned int max)
{
	struct sd_memory_alloc m;
	unsigned int c, h, st = SD_NV_OK, n;

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	for (n = 0; n < max; n++) {
		h = 0x10000 + n;
		m = (struct sd_memory_alloc){ .owner = 0x1234, .size = 4096,
			.attr = SD_ATTR_PAGE_SIZE_4KB << SD_ATTR_PAGE_SIZE_SHIFT };
		st = alloc(n % 4, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
		if (st != SD_NV_OK)
			break;
	}
	printf("small: %u x 4 KiB, then status 0x%x\n", n, st);
	held_until_killed();
}

/* "status 0xS" when the ioctl returned 0 (with status st), else "errno E" (read at once). */
static const char *answer(int r, unsigned int st, char *buf, size_t len)
{
	if (r)
		snprintf(buf, len, "errno %d", errno);
	else
		snprintf(buf, len, "status 0x%x", st);
	return buf;
}

/* NV_ESC_RM_DUP_OBJECT on fd of (csrc, src) as (c, parent, new): the ioctl's return, *st the status. */
static int dup_esc(int fd, unsigned int c, unsigned int parent, unsigned int new, unsigned int csrc,
		   unsigned int src, unsigned int *st)
{
	struct sd_nvos55 p = { .hClient = c, .hParent = parent, .hObject = new,
			       .hClientSrc = csrc, .hObjectSrc = src };
	int r = esc(fd, SD_ESC_RM_DUP_OBJECT, &p, sizeof(p));

	*st = p.status;
	return r;
}

/* The same on the control file: its answer, as words. */
static const char *rm_dup(unsigned int c, unsigned int parent, unsigned int new, unsigned int csrc,
		       unsigned int src, char *buf, size_t len)
{
	unsigned int st;
	int r = dup_esc(ctl, c, parent, new, csrc, src, &st);

	return answer(r, st, buf, len);
}

/* NV_ESC_RM_VID_HEAP_CONTROL with function fn (form 0 direct, 1 in XFER): its answer. */
static const char *vid_heap(int form, unsigned int c, unsigned int fn, char *buf, size_t len)
{
	union { struct sd_nvos32_head h; unsigned char all[SD_NVOS32_SIZE]; } p;
	int r;

	memset(&p, 0, sizeof(p));
	p.h.hRoot = c;
	p.h.hObjectParent = 0x1000;
	p.h.function = fn;
	r = form ? xfer(ctl, SD_ESC_RM_VID_HEAP_CONTROL, &p, sizeof(p)) :
		   esc(ctl, SD_ESC_RM_VID_HEAP_CONTROL, &p, sizeof(p));
	return answer(r, p.h.status, buf, len);
}

/* NV_ESC_RM_ALLOC_MEMORY of class cls under device 0x1000. */
static const char *alloc_memory_old(unsigned int c, unsigned int cls, char *buf, size_t len)
{
	struct sd_nvos02_with_fd p = { .params = { .hRoot = c, .hObjectParent = 0x1000,
		.hObjectNew = 0x2400, .hClass = cls, .limit = MiB - 1 }, .fd = -1 };
	int r = esc(ctl, SD_ESC_RM_ALLOC_MEMORY, &p, sizeof(p));

	return answer(r, p.params.status, buf, len);
}

/* NV_ESC_RM_ALLOC_OBJECT of class cls under device 0x1000. */
static const char *alloc_object(unsigned int c, unsigned int cls, char *buf, size_t len)
{
	struct sd_nvos05 p = { .hRoot = c, .hObjectParent = 0x1000, .hObjectNew = 0x2500, .hClass = cls };
	int r = esc(ctl, SD_ESC_RM_ALLOC_OBJECT, &p, sizeof(p));

	return answer(r, p.status, buf, len);
}

/* RM_CONTROL cmd on the client: an import from, or export to, a file descriptor. */
static const char *fd_share(unsigned int c, unsigned int cmd, char *buf, size_t len)
{
	unsigned char params[512] = { 0 };
	struct sd_nvos54 p = { .hClient = c, .hObject = c, .cmd = cmd,
		.params = (unsigned long)params, .paramsSize = sizeof(params) };
	int r = esc(ctl, SD_ESC_RM_CONTROL, &p, sizeof(p));

	return answer(r, p.status, buf, len);
}

/*
 * The ways to video memory (or page tables) that cgpu_km does not charge, each in two
 * forms: the classes it refuses (0x42, 0xc2, 0xf8, 0xfd, 0xe0, 0x70, 0xfe) and the heap
 * interface's allocating function
 * (and its INFO, which passes); RM's deprecated calls (RM_ALLOC_MEMORY of video and of
 * system memory, RM_ALLOC_OBJECT of video memory); the imports from and exports to a
 * file descriptor: two lines of answers, then "held".
 */
static void uncharged(void)
{
	static const unsigned int cls[] = { SD_NV_MEMORY_EXTENDED_USER,
		SD_NV01_MEMORY_LOCAL_PHYSICAL, SD_NV_MEMORY_FABRIC, SD_NV_MEMORY_MULTICAST_FABRIC,
		SD_NV_MEMORY_EXPORT, SD_NV01_MEMORY_VIRTUAL, SD_NV_MEMORY_MAPPER };
	unsigned char params[256] = { 0 };
	unsigned int c, h, i;
	char a[32], b[32];

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	h = 0x1100;
	i = alloc(0, c, c, &h, SD_NV01_DEVICE_0, NULL);
	h = 0x1100;
	printf("device without parameters: 0x%x, unreadable: 0x%x\n", i,
	       alloc(1, c, c, &h, SD_NV01_DEVICE_0, (void *)8));
	for (i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
		unsigned int s0, s3;

		h = 0x2000;
		s0 = alloc(0, c, 0x1000, &h, cls[i], params);
		h = 0x2000;
		s3 = alloc(3, c, 0x1000, &h, cls[i], params);
		printf("class 0x%x: 0x%x 0x%x, ", cls[i], s0, s3);
	}
	printf("alloc: %s %s, ", vid_heap(0, c, SD_NVOS32_FUNCTION_ALLOC_SIZE, a, sizeof(a)),
	       vid_heap(1, c, SD_NVOS32_FUNCTION_ALLOC_SIZE, b, sizeof(b)));
	printf("info: %s %s\n", vid_heap(0, c, SD_NVOS32_FUNCTION_INFO, a, sizeof(a)),
	       vid_heap(1, c, SD_NVOS32_FUNCTION_INFO, b, sizeof(b)));
	printf("alloc memory 0x40: %s, ", alloc_memory_old(c, SD_NV01_MEMORY_LOCAL_USER, a, sizeof(a)));
	printf("0x3e: %s, ", alloc_memory_old(c, SD_NV01_MEMORY_SYSTEM, a, sizeof(a)));
	printf("alloc object 0x40: %s, ", alloc_object(c, SD_NV01_MEMORY_LOCAL_USER, a, sizeof(a)));
	printf("import: %s ", fd_share(c, SD_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD, a, sizeof(a)));
	printf("%s ", fd_share(c, SD_NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD, b, sizeof(b)));
	printf("export: %s ", fd_share(c, SD_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD, a, sizeof(a)));
	printf("%s\n", fd_share(c, SD_NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD, b, sizeof(b)));
	held_until_killed();
}

static void dups(unsigned long long mib)
{
	struct sd_memory_alloc m = { .owner = 0x1234, .size = mib * MiB };
	unsigned int c, h = 0x2000;
	char a[32], b[32];

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	CHECK(alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
	printf("dup memory: %s, ", rm_dup(c, 0x1000, 0x2100, c, 0x2000, a, sizeof(a)));
	printf("dup device: %s\n", rm_dup(c, c, 0x1100, c, 0x1000, b, sizeof(b)));
	printf("client 0x%x memory 0x%x\n", c, h);
	held_until_killed();
}

/* Device dev of client c on GPU 0, with its subdevice dev + 1. */
static void device_on_gpu0(unsigned int c, unsigned int dev)
{
	device_of(0, c, 0, dev);
	subdevice_of(0, c, dev);
}

/*
 * Pairs of a channel group under device dev and a channel in it (handles base, base+1, ...,
 * the four forms in turn) until max pairs or a refusal: the pairs made, *st the refusal.
 */
static unsigned int channel_pairs(unsigned int c, unsigned int dev, unsigned int base,
				  unsigned int max, unsigned int *st)
{
	struct sd_channel_group_alloc g = { .engineType = 1 };
	struct sd_channel_alloc_head ch = { 0 };
	unsigned int n, h;

	*st = SD_NV_OK;
	for (n = 0; n < max; n++) {
		h = base + 2 * n;
		*st = alloc(n % 4, c, dev, &h, SD_KEPLER_CHANNEL_GROUP_A, &g);
		if (*st != SD_NV_OK)
			break;
		h = base + 2 * n + 1;
		*st = alloc((n + 1) % 4, c, base + 2 * n, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch);
		if (*st != SD_NV_OK)
			break;
	}
	return n;
}

/*
 * Channels on GPU 0 after FILL MiB of video memory: pairs of a group and a channel in it
 * under a second device until MAX pairs or a refusal; the last group's free (its channel
 * with it) and a pair again; a duplicate of a group; the device's free (all its groups and
 * channels) and pairs again under a third. Says what each step got and what the GPU holds.
 */
static void channels(unsigned int max, unsigned long long fill)
{
	struct sd_memory_alloc m = { .owner = 0x1234, .size = fill * MiB };
	unsigned int c, k, h, n, st, st2, r;
	char a[32];

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	if (fill) {
		h = 0x2000;
		CHECK(alloc(0, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
	}
	k = new_client();
	device_on_gpu0(k, 0x1100);
	n = channel_pairs(k, 0x1100, 0x4000, max, &st);
	printf("channels: %u pairs, then status 0x%x, GPU 0 holds %llu\n", n, st, used(0));
	if (n) {
		CHECK(rmfree(k, 0x4000 + 2 * (n - 1)) == SD_NV_OK);
		r = channel_pairs(k, 0x1100, 0x4000 + 2 * (n - 1), 1, &st2);
		printf("refill: %u pair, status 0x%x\n", r, st2);
	}
	printf("dup group: %s\n", rm_dup(k, 0x1100, 0x3fff, k, 0x4000, a, sizeof(a)));
	CHECK(rmfree(k, 0x1100) == SD_NV_OK);
	device_on_gpu0(k, 0x1200);
	n = channel_pairs(k, 0x1200, 0x8000, max, &st);
	printf("again: %u pairs, then status 0x%x, GPU 0 holds %llu\n", n, st, used(0));
	held_until_killed();
}

/*
 * clientvas N: rounds of a new client, a device of GPU 0 whose hClientShare is that
 * client (and its subdevice), and a channel group with hVASpace 0, which makes the
 * device a VA space of its own, until N rounds or a refusal: "clientvas: R rounds, then
 * STEP status 0xS, GPU 0 holds B". The first round's client freed (if a round was
 * made), a round again: "freed: a round again: STEP status 0xS". "held", waits. With
 * GO and OUT, its files open, it says "held" and waits for GO before its rounds, and
 * says the rest in OUT.
 */
static unsigned int clientvas_round(unsigned int *c, const char **what)
{
	struct sd_nv0080_alloc d = { .deviceId = 0 };
	struct sd_nv2080_alloc sub = { 0 };
	struct sd_channel_group_alloc g = { .engineType = 1 };
	unsigned int h, st;

	*what = "client";
	*c = 0;
	st = alloc(0, 0, 0, c, SD_NV01_ROOT_CLIENT, NULL);
	if (st != SD_NV_OK)
		return st;
	*what = "device";
	d.hClientShare = *c;
	h = 0x1000;
	st = alloc(1, *c, *c, &h, SD_NV01_DEVICE_0, &d);
	if (st != SD_NV_OK)
		return st;
	*what = "subdevice";
	h = 0x1001;
	st = alloc(2, *c, 0x1000, &h, SD_NV20_SUBDEVICE_0, &sub);
	if (st != SD_NV_OK)
		return st;
	*what = "group";
	h = 0x4000;
	st = alloc(3, *c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g);
	if (st == SD_NV_OK)
		*what = "none";
	return st;
}

static void clientvas(unsigned int max, const char *go, const char *out)
{
	const char *what = "none";
	unsigned int n, st = SD_NV_OK, first = 0, c;

	open_gpu(0);
	start();
	if (go) {
		held_until(go);
		CHECK(freopen(out, "w", stdout));
	}
	for (n = 0; n < max; n++) {
		st = clientvas_round(&c, &what);
		first = n ? first : c;
		if (st != SD_NV_OK)
			break;
	}
	printf("clientvas: %u rounds, then %s status 0x%x, GPU 0 holds %llu\n", n, what, st, used(0));
	if (n) {
		CHECK(rmfree(first, first) == SD_NV_OK);
		st = clientvas_round(&c, &what);
		printf("freed: a round again: %s status 0x%x\n", what, st);
	}
	held_until_killed();
}

/*
 * frozenkinds GO OUT: a client with a device of GPU 0 and its subdevice, "held"; once GO
 * exists, a channel group and a GPU VA space under that device: "frozenkinds: group
 * status 0xS, VA space status 0xS, GPU 0 holds B" in OUT, then "held", and it waits.
 */
static void frozenkinds(const char *go, const char *out)
{
	struct sd_channel_group_alloc g = { .engineType = 1 };
	struct sd_vaspace_alloc va = { .index = 0 };
	unsigned int c, h, sg, sv;

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	held_until(go);
	CHECK(freopen(out, "w", stdout));
	h = 0x4000;
	sg = alloc(3, c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g);
	h = 0x1100;
	sv = alloc(0, c, 0x1000, &h, SD_FERMI_VASPACE_A, &va);
	printf("frozenkinds: group status 0x%x, VA space status 0x%x, GPU 0 holds %llu\n", sg, sv,
	       used(0));
	held_until_killed();
}

/*
 * devcount: a client with a device of GPU 1 and its subdevice; another with a device of
 * GPU 0 and no subdevice yet; a channel group under GPU 1's device; the second device's
 * subdevice; the group again: "devcount: group 0xS, subdevice 0xS, group again 0xS".
 * Then a device in a third client, and a group on GPU 0: "then: device 0xS, group on
 * GPU 0 0xS". "held", waits.
 */
static void devcount(void)
{
	struct sd_nv0080_alloc d0 = { .deviceId = 0 };
	struct sd_nv2080_alloc sub = { 0 };
	struct sd_channel_group_alloc g = { .engineType = 1 };
	unsigned int a, b, c, h, stg, sts, stg2, std;

	open_gpu(0);
	open_gpu(1);
	start();
	b = client_on_gpu(1);
	a = client_with_device(0, 0, 0x1000);
	h = 0x4000;
	stg = alloc(0, b, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g);
	h = 0x1001;
	sts = alloc(0, a, 0x1000, &h, SD_NV20_SUBDEVICE_0, &sub);
	h = 0x4000;
	stg2 = alloc(0, b, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g);
	printf("devcount: group 0x%x, subdevice 0x%x, group again 0x%x\n", stg, sts, stg2);
	c = new_client();
	h = 0x1000;
	std = alloc(0, c, c, &h, SD_NV01_DEVICE_0, &d0);
	h = 0x4000;
	printf("then: device 0x%x, group on GPU 0 0x%x\n", std,
	       alloc(0, a, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g));
	held_until_killed();
}

/* nvidia-uvm's command cmd with block p on fd: the block's rmStatus, at off. */
static unsigned int uvm_status(int fd, unsigned long cmd, void *p, size_t off)
{
	unsigned int st;

	CHECK(ioctl(fd, cmd, p) == 0);
	memcpy(&st, (char *)p + off, sizeof(st));
	return st;
}

/* UVM_REGISTER_CHANNEL of channel (c, h) on GPU 0 (UVM_UNREGISTER_CHANNEL if !on): its status. */
static unsigned int uvm_channel(int fd, unsigned int c, unsigned int h, bool on)
{
	struct sd_uvm_register_channel r = { .rmCtrlFd = ctl, .hClient = c, .hChannel = h };
	struct sd_uvm_unregister_channel u = { .hClient = c, .hChannel = h };

	sd_gpu_uuid(0, r.gpuUuid);
	sd_gpu_uuid(0, u.gpuUuid);
	return on ? uvm_status(fd, SD_UVM_REGISTER_CHANNEL, &r, offsetof(typeof(r), rmStatus)) :
		    uvm_status(fd, SD_UVM_UNREGISTER_CHANNEL, &u, offsetof(typeof(u), rmStatus));
}

/* The nodes opened, a client on GPU 0 with device 0x1100 and subdevice 0x1101, *fd a va_space. */
static unsigned int uvm_client(int *fd)
{
	unsigned int c;

	open_gpu(0);
	start();
	c = new_client();
	device_on_gpu0(c, 0x1100);
	*fd = uvm_space();
	return c;
}

/*
 * One round of uvmchan at handles h (group) and h + 1 (channel) under device dev: both
 * made, the channel registered, the group freed (its channel with it) whatever the
 * registration got. The first status that is not NV_OK, *what its step; 0 if none.
 */
static unsigned int uvmchan_round(int fd, unsigned int c, unsigned int dev, unsigned int h,
				  const char **what)
{
	struct sd_channel_group_alloc g = { .engineType = 1 };
	struct sd_channel_alloc_head ch = { 0 };
	unsigned int got = h, st;

	*what = "group";
	st = alloc(0, c, dev, &got, SD_KEPLER_CHANNEL_GROUP_A, &g);
	if (st != SD_NV_OK)
		return st;
	*what = "channel";
	got = h + 1;
	st = alloc(1, c, h, &got, SD_TURING_CHANNEL_GPFIFO_A, &ch);
	if (st == SD_NV_OK) {
		*what = "register";
		st = uvm_channel(fd, c, h + 1, true);
	}
	CHECK(rmfree(c, h) == SD_NV_OK);
	return st;
}

/*
 * uvmchan N: rounds of a group and a channel in it, the channel registered with
 * nvidia-uvm (which keeps both in the driver) and the group freed, until N rounds or a
 * refusal: "uvmchan: R rounds, then STEP status 0xS, GPU 0 holds B". A channel the
 * container does not hold registered: "unknown: status 0xS". The first channel
 * unregistered and a round again: "unregister: status 0xS, a round again: STEP status
 * 0xS". The va_space closed, its device freed, pairs under a new one: "closed: P
 * pairs, then status 0xS, GPU 0 holds B". "held", waits.
 */
static void uvmchan(unsigned int max)
{
	unsigned int c, n, st, st2;
	const char *what = "none";
	int fd;

	c = uvm_client(&fd);
	st = SD_NV_OK;
	for (n = 0; n < max; n++) {
		st = uvmchan_round(fd, c, 0x1100, 0x4000 + 2 * n, &what);
		if (st != SD_NV_OK)
			break;
	}
	printf("uvmchan: %u rounds, then %s status 0x%x, GPU 0 holds %llu\n",
	       n, st == SD_NV_OK ? "none" : what, st, used(0));
	printf("unknown: status 0x%x\n", uvm_channel(fd, c, 0x9999, true));
	st = n ? uvm_channel(fd, c, 0x4001, false) : SD_NV_ERR_INVALID_CHANNEL;
	st2 = uvmchan_round(fd, c, 0x1100, 0x4000 + 2 * max + 2, &what);
	printf("unregister: status 0x%x, a round again: %s status 0x%x\n",
	       st, st2 == SD_NV_OK ? "none" : what, st2);
	CHECK(close(fd) == 0);
	CHECK(rmfree(c, 0x1100) == SD_NV_OK);
	device_on_gpu0(c, 0x1200);
	n = channel_pairs(c, 0x1200, 0x8000, 40, &st);
	printf("closed: %u pairs, then status 0x%x, GPU 0 holds %llu\n", n, st, used(0));
	held_until_killed();
}

/*
 * VA spaces at handles base, base + 1, ... under device 0x1100 and its subdevice 0x1101
 * by turns, until max or a refusal: how many were made, *st the refusal (NV_OK if none).
 */
static unsigned int vaspace_run(unsigned int c, unsigned int base, unsigned int max, unsigned int *st)
{
	struct sd_vaspace_alloc va = { .index = 0 };
	unsigned int n, h;

	*st = SD_NV_OK;
	for (n = 0; n < max; n++) {
		h = base + n;
		*st = alloc(n % 4, c, n % 2 ? 0x1101 : 0x1100, &h, SD_FERMI_VASPACE_A, &va);
		if (*st != SD_NV_OK)
			break;
	}
	return n;
}

/* UVM_REGISTER_GPU_VASPACE of (c, h) on GPU 0 (UVM_UNREGISTER_GPU_VASPACE if !on): its status. */
static unsigned int uvm_gpu_vaspace(int fd, unsigned int c, unsigned int h, bool on)
{
	struct sd_uvm_register_gpu_vaspace r = { .rmCtrlFd = ctl, .hClient = c, .hVaSpace = h };
	struct sd_uvm_unregister_gpu_vaspace u = { .rmStatus = 0 };

	sd_gpu_uuid(0, r.gpuUuid);
	sd_gpu_uuid(0, u.gpuUuid);
	return on ? uvm_status(fd, SD_UVM_REGISTER_GPU_VASPACE, &r, offsetof(typeof(r), rmStatus)) :
		    uvm_status(fd, SD_UVM_UNREGISTER_GPU_VASPACE, &u, offsetof(typeof(u), rmStatus));
}

/*
 * vaspaces N: VA spaces until N or a refusal: "vaspaces: K made, then status 0xS, GPU 0
 * holds B"; a duplicate of the first: "dup vaspace: A"; the third freed, the first
 * registered with nvidia-uvm and freed, VA spaces again: "registered: status 0xS, then
 * K made, status 0xS"; unregistered, again: "unregistered: status 0xS, then K made,
 * status 0xS, GPU 0 holds B"; one the container does not hold registered: "unknown:
 * status 0xS"; the second, under the subdevice: "under a subdevice: status 0xS".
 * "held", waits.
 */
static void vaspaces(unsigned int max)
{
	unsigned int c, n, st, reg;
	char a[32];
	int fd;

	c = uvm_client(&fd);
	n = vaspace_run(c, 0x5000, max, &st);
	printf("vaspaces: %u made, then status 0x%x, GPU 0 holds %llu\n", n, st, used(0));
	printf("dup vaspace: %s\n", rm_dup(c, 0x1100, 0x5fff, c, 0x5000, a, sizeof(a)));
	CHECK(rmfree(c, 0x5002) == SD_NV_OK);
	reg = uvm_gpu_vaspace(fd, c, 0x5000, true);
	CHECK(rmfree(c, 0x5000) == SD_NV_OK);
	n = vaspace_run(c, 0x5100, max, &st);
	printf("registered: status 0x%x, then %u made, status 0x%x\n", reg, n, st);
	reg = uvm_gpu_vaspace(fd, c, 0, false);
	n = vaspace_run(c, 0x5200, max, &st);
	printf("unregistered: status 0x%x, then %u made, status 0x%x, GPU 0 holds %llu\n", reg, n, st, used(0));
	printf("unknown: status 0x%x\n", uvm_gpu_vaspace(fd, c, 0x9999, true));
	printf("under a subdevice: status 0x%x\n", uvm_gpu_vaspace(fd, c, 0x5001, true));
	held_until_killed();
}

/* N rounds as uvmchan's, all registered: nvidia-uvm keeps N pairs. The va_space's descriptor. */
static int retained_pairs(unsigned int n)
{
	const char *what;
	unsigned int c, i;
	int fd;

	c = uvm_client(&fd);
	for (i = 0; i < n; i++)
		CHECK(uvmchan_round(fd, c, 0x1100, 0x4000 + 2 * i, &what) == SD_NV_OK);
	return fd;
}

/* uvmretain N: N channels retained by nvidia-uvm, their groups freed, held until killed. */
static void uvmretain(unsigned int n)
{
	retained_pairs(n);
	printf("uvmretain: %u registered, GPU 0 holds %llu\n", n, used(0));
	held_until_killed();
}

/*
 * chanhold: on GPU 0 a channel in no group (0x4001 under device 0x1100) and a VA space
 * (0x5000 under it), for another process to name: "chanhold: client C", "held", waits.
 */
static void chanhold(void)
{
	struct sd_channel_alloc_head ch = { 0 };
	struct sd_vaspace_alloc va = { .index = 0 };
	unsigned int c, h;
	int fd;

	c = uvm_client(&fd);
	h = 0x4001;
	CHECK(alloc(0, c, 0x1100, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch) == SD_NV_OK);
	h = 0x5000;
	CHECK(alloc(1, c, 0x1100, &h, SD_FERMI_VASPACE_A, &va) == SD_NV_OK);
	printf("chanhold: client %u\n", c);
	held_until_killed();
}

/*
 * uvmforeign C: chanhold's channel and VA space of client C (another process's)
 * registered with nvidia-uvm through a va_space and client of this process's own:
 * "uvmforeign: channel status 0xS, VA space status 0xS, GPU 0 holds B", "held", waits.
 */
static void uvmforeign(unsigned int owner)
{
	unsigned int chan, vas;
	int fd;

	uvm_client(&fd);
	chan = uvm_channel(fd, owner, 0x4001, true);
	vas = uvm_gpu_vaspace(fd, owner, 0x5000, true);
	printf("uvmforeign: channel status 0x%x, VA space status 0x%x, GPU 0 holds %llu\n",
	       chan, vas, used(0));
	held_until_killed();
}

/* uvmhandoff's child: every inherited file closed but the va_space's (and the pipe's). */
static void va_space_alone(long fd, int pipe_fd)
{
	close_all_but(fd, pipe_fd);
}

/*
 * uvmhandoff N: N rounds as uvmchan's, all registered, then a child that holds the
 * va_space's file and none of the RM files, until killed: nvidia-uvm lets go of the
 * channels in the child's task when the va_space ends. "uvmhandoff: N registered,
 * child C", "held", waits.
 */
static void uvmhandoff(unsigned int n)
{
	int fd = retained_pairs(n);

	printf("uvmhandoff: %u registered, child %d\n", n, (int)child_ready(va_space_alone, fd));
	held_until_killed();
}

/* dropdouble's second thread: channel group 0x3000 under device 0x1000, its status. */
static void *group_late(void *arg)
{
	struct sd_channel_group_alloc g = { .engineType = 1 };
	unsigned int h = 0x3000;

	*(unsigned int *)arg = alloc(0, *(unsigned int *)arg, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g);
	return NULL;
}

/* Writes s to the stand-in's parameter name. */
static void simdrv_param(const char *name, const char *s)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/nvidia/parameters/%s", name);
	f = fopen(path, "w");
	CHECK(f && fputs(s, f) >= 0 && fclose(f) == 0);
}

/*
 * A handle of two lines in cgpu_km's records, then its device freed: a second thread
 * makes channel group 0x3000, whose answer the stand-in holds back 300 ms
 * (answer_delay_ms); meanwhile the group is freed, made again and a channel made in it,
 * so the second thread's record of the group comes after another of the same handle
 * with a child. Then the device's free drops the tree, and as many channel pairs as
 * the cap lets are made again under a new device. Prints "dropdouble: group 0xS, freed
 * 0xS 0xS 0xS, then N pairs, status 0xS", "held", waits.
 */
static void dropdouble(void)
{
	struct sd_channel_alloc_head ch = { 0 };
	struct sd_channel_group_alloc g = { .engineType = 1 };
	unsigned int c, h, late, f1, f2, f3, n, st;
	pthread_t t;

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	simdrv_param("answer_delay_class", "0xa06c");
	simdrv_param("answer_delay_ms", "300");
	late = c;
	CHECK(pthread_create(&t, NULL, group_late, &late) == 0);
	usleep(100000);
	f1 = rmfree(c, 0x3000);
	h = 0x3000;
	CHECK(alloc(1, c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g) == SD_NV_OK);
	h = 0x3001;
	CHECK(alloc(2, c, 0x3000, &h, SD_TURING_CHANNEL_GPFIFO_A, &ch) == SD_NV_OK);
	CHECK(pthread_join(t, NULL) == 0);
	f2 = rmfree(c, 0x1000);
	f3 = rmfree(c, 0x3000);
	device_on_gpu0(c, 0x1100);
	n = channel_pairs(c, 0x1100, 0x4000, 40, &st);
	printf("dropdouble: group 0x%x, freed 0x%x 0x%x 0x%x, then %u pairs, status 0x%x\n",
	       late, f1, f2, f3, n, st);
	held_until_killed();
}

static void dupof(unsigned int csrc, unsigned int src)
{
	unsigned int c;
	char a[32];

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	printf("dup other: %s\n", rm_dup(c, 0x1000, 0x2100, csrc, src, a, sizeof(a)));
	held_until_killed();
}

static void churn(unsigned long long mib)
{
	struct sd_memory_alloc m;
	unsigned int c, h, st, n;

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	printf("held\n");
	fflush(stdout);
	for (n = 0;; n++) {
		h = 0x2000;
		m = (struct sd_memory_alloc){ .owner = 0x1234, .size = mib * MiB };
		st = alloc(n % 2, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
		CHECK(st == SD_NV_OK || st == SD_NV_ERR_NO_MEMORY);
		if (st == SD_NV_OK)
			CHECK(rmfree(c, h) == SD_NV_OK);
	}
}

static void press(unsigned long long mib)
{
	struct sd_memory_alloc m;
	unsigned int c, h = 0x2000, st, n = 0;
	int said = 0;

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	for (;;) {
		m = (struct sd_memory_alloc){ .owner = 0x1234, .size = mib * MiB };
		st = alloc(n % 4, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
		CHECK(st == SD_NV_OK || st == SD_NV_ERR_NO_MEMORY);
		if (st == SD_NV_OK) {
			n++;
			h++;
			continue;
		}
		if (!said) {
			printf("press: %u x %llu MiB, then status 0x%x\nheld\n", n, mib, st);
			fflush(stdout);
			said = 1;
		}
		usleep(1000);
	}
}

static struct sd_memory_alloc *raced;
static unsigned long long race_big;
static volatile int race_done;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* One CPU only (a VM of one vCPU): the race then rests on preemption. */
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *rewriter(void *arg)
{
	(void)arg;
	pin(1);
	while (!race_done) {
		__atomic_store_n(&raced->size, 2 * MiB, __ATOMIC_RELAXED);
		__atomic_store_n(&raced->size, race_big, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * race FILL BIG N: FILL MiB held first, so that a BIG MiB object cannot fit the room
 * left while a 2 MiB one can; then N allocations of 2 MiB, each freed at once when
 * made, while the rewriter flips the size. Every attempt is one where a size grown
 * after the kernel's look would pass the budget.
 */
static void race(unsigned long long fill, unsigned long long big, int n)
{
	unsigned long long before, now, most = 0;
	unsigned int c, h, st;
	int i, made = 0, refused = 0;
	pthread_t t;

	start();
	CHECK(open("/dev/nvidia0", O_RDWR) >= 0);
	c = client_on_gpu(0);
	raced = calloc(1, 4096);
	CHECK(raced);
	raced->owner = 0x1234;
	raced->size = fill * MiB;
	h = 0x3000;
	CHECK(alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, raced) == SD_NV_OK);
	before = used(0);
	race_big = big * MiB;
	raced->size = 2 * MiB;
	pin(0);
	CHECK(pthread_create(&t, NULL, rewriter, NULL) == 0);
	for (i = 0; i < n; i++) {
		/* The driver hands back the page size it chose: the default again. */
		raced->attr = 0;
		h = 0x10000 + i;
		st = alloc(i % 4, c, i % 2 ? 0x1001 : 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, raced);
		/*
		 * A copy may read the size while it is being rewritten (a byte at a time under
		 * emulation): a torn size of 0 is the driver's NV_ERR_INVALID_ARGUMENT.
		 */
		if (st != SD_NV_OK && st != SD_NV_ERR_NO_MEMORY && st != SD_NV_ERR_INVALID_ARGUMENT) {
			fprintf(stderr, "rawalloc: race: status 0x%x\n", st);
			exit(1);
		}
		if (st != SD_NV_OK) {
			refused++;
			continue;
		}
		made++;
		now = used(0);
		if (now > most)
			most = now;
		CHECK(rmfree(c, h) == SD_NV_OK);
	}
	race_done = 1;
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(used(0) == before);
	printf("race: %d made, %d refused, at most %llu MiB held\n", made, refused,
	       (most > before ? most : before) / MiB);
	printf("held\n");
	fflush(stdout);
	pause();
}

static struct sd_nv0080_alloc *dev_raced;
static volatile int dev_rewriting;

static void *dev_rewriter(void *arg)
{
	(void)arg;
	pin(1);
	dev_rewriting = 1;
	while (!race_done) {
		__atomic_store_n(&dev_raced->deviceId, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&dev_raced->deviceId, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* The first line of file, for a line of output. */
static const char *first_line(const char *file, char *buf, size_t len)
{
	FILE *f = fopen(file, "r");

	CHECK(f && fgets(buf, (int)len, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/*
 * devrace N MEMINFO0 MEMINFO1: the GPU a device is on is its deviceId, which the driver
 * copies from the caller's memory after cgpu_km's look. N devices are made while the
 * rewriter flips it between 0 and 1; each gets a subdevice and, under the device, 32 MiB
 * that it keeps: whichever GPU the driver put the device on, the memory must be charged
 * there, so the driver never holds more on a GPU than the container's budget on it.
 * Where each 32 MiB landed is the driver's own figure (its used memory); then, with the
 * memory freed, where each device went (2 MiB under its subdevice, freed at once).
 */
static void devrace(int n, const char *mi0, const char *mi1)
{
	struct sd_nv2080_alloc s = { 0 };
	struct sd_channel_group_alloc g = { .engineType = 1 };
	struct sd_memory_alloc m = { .owner = 0x1234, .size = 32 * MiB };
	unsigned int c, h, st, on[2] = { 0, 0 }, made[2] = { 0, 0 }, refused = 0;
	unsigned long long u0, u1;
	char f0[96], f1[96];
	unsigned int *cl;
	unsigned char *kept;
	pthread_t t;
	int i;

	start();
	open_gpu(0);
	open_gpu(1);
	/* Under a device with no subdevice yet, nothing is made in a container. */
	c = client_with_device(0, 0, 0x4ff0);
	h = 0x4ff2;
	st = alloc(1, c, 0x4ff0, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
	h = 0x4ff3;
	printf("devrace: before a subdevice: memory 0x%x, group 0x%x", st,
	       alloc(0, c, 0x4ff0, &h, SD_KEPLER_CHANNEL_GROUP_A, &g));
	h = 0x4ff1;
	CHECK(alloc(0, c, 0x4ff0, &h, SD_NV20_SUBDEVICE_0, &s) == SD_NV_OK);
	h = 0x4ff2;
	printf("; after: memory 0x%x\n", alloc(1, c, 0x4ff0, &h, SD_NV01_MEMORY_LOCAL_USER, &m));
	CHECK(rmfree(c, 0x4ff0) == SD_NV_OK);
	kept = calloc(n, 1);
	cl = calloc(n, sizeof(*cl));
	dev_raced = calloc(1, 4096);
	CHECK(kept && cl && dev_raced);
	pin(0);
	CHECK(pthread_create(&t, NULL, dev_rewriter, NULL) == 0);
	/* A thread can take a while to start under emulation: every device is raced. */
	while (!dev_rewriting)
		sched_yield();
	for (i = 0; i < n; i++) {
		u0 = used(0);
		u1 = used(1);
		/* A client each: RM gives a client one device of a GPU. */
		cl[i] = new_client();
		h = 0x5000 + 0x10 * i;
		CHECK(alloc(i % 4, cl[i], cl[i], &h, SD_NV01_DEVICE_0, dev_raced) == SD_NV_OK);
		h = 0x5001 + 0x10 * i;
		CHECK(alloc(i % 4, cl[i], 0x5000 + 0x10 * i, &h, SD_NV20_SUBDEVICE_0, &s) == SD_NV_OK);
		h = 0x5002 + 0x10 * i;
		st = alloc(i % 4, cl[i], 0x5000 + 0x10 * i, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
		if (st == SD_NV_OK) {
			CHECK(used(0) - u0 + used(1) - u1 == 32 * MiB);
			made[used(1) > u1]++;
			kept[i] = 1;
		} else {
			CHECK(st == SD_NV_ERR_NO_MEMORY);
			CHECK(used(0) == u0 && used(1) == u1);
			refused++;
		}
	}
	race_done = 1;
	CHECK(pthread_join(t, NULL) == 0);
	printf("devrace: %d devices; memory made %u on GPU 0, %u on GPU 1, %u refused; the driver holds %llu and %llu; GPU 0 %s, GPU 1 %s\n",
	       n, made[0], made[1], refused, used(0), used(1),
	       first_line(mi0, f0, sizeof(f0)), first_line(mi1, f1, sizeof(f1)));
	m.size = 2 * MiB;
	for (i = 0; i < n; i++) {
		if (kept[i])
			CHECK(rmfree(cl[i], 0x5002 + 0x10 * i) == SD_NV_OK);
	}
	for (i = 0; i < n; i++) {
		u1 = used(1);
		h = 0x5003 + 0x10 * i;
		CHECK(alloc(0, cl[i], 0x5001 + 0x10 * i, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
		on[used(1) > u1]++;
		CHECK(rmfree(cl[i], h) == SD_NV_OK);
	}
	printf("devrace: devices on GPU 0: %u, on GPU 1: %u\n", on[0], on[1]);
	printf("held\n");
	fflush(stdout);
	pause();
}

static unsigned int dup_client;

/* dup_esc, whose ioctl must succeed: the status. */
static unsigned int dup_on(int fd, unsigned int c, unsigned int parent, unsigned int new,
			   unsigned int csrc, unsigned int src)
{
	unsigned int st;

	CHECK(dup_esc(fd, c, parent, new, csrc, src, &st) == 0);
	return st;
}

/*
 * dupfollow: (cgpu_km enforce=1, a 256 MiB budget on GPU 0) 192 MiB, duplicated in its
 * own client and into a client on a second /dev/nvidiactl of the same process; 64 MiB
 * more fit (the duplicates take nothing more), 2 MiB more do not; the original freed,
 * then its whole file closed: the GPU keeps the 192 MiB for the last duplicate.
 */
static void dupfollow(void)
{
	struct sd_memory_alloc m = { .owner = 0x1234, .size = 192 * MiB };
	unsigned int c, c2, h = 0x2000, s1, s2, more, over;
	int first;

	start();
	open_gpu(0);
	c = client_on_gpu(0);
	CHECK(alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
	s1 = dup_on(ctl, c, 0x1000, 0x2100, c, 0x2000);
	first = ctl;
	ctl = open("/dev/nvidiactl", O_RDWR);
	CHECK(ctl >= 0);
	c2 = client_on_gpu(0);
	s2 = dup_on(ctl, c2, 0x1000, 0x2200, c, 0x2000);
	printf("dupfollow: duplicates 0x%x 0x%x, driver holds %llu MiB\n", s1, s2, used(0) / MiB);
	m = (struct sd_memory_alloc){ .owner = 0x1234, .size = 64 * MiB };
	h = 0x3000;
	more = alloc(1, c2, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
	m = (struct sd_memory_alloc){ .owner = 0x1234, .size = 2 * MiB };
	h = 0x3001;
	over = alloc(1, c2, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
	printf("dupfollow: 64 MiB more 0x%x, 2 MiB more 0x%x\n", more, over);
	CHECK(more == SD_NV_OK && rmfree(c2, 0x3000) == SD_NV_OK);
	ctl = first;
	CHECK(rmfree(c, 0x2000) == SD_NV_OK);
	printf("dupfollow: original freed, driver holds %llu MiB\n", used(0) / MiB);
	CHECK(close(first) == 0);
	printf("dupfollow: its file closed, driver holds %llu MiB\n", used(0) / MiB);
	held_until_killed();
}

static unsigned int churn_counts[3];	/* followed, refused, source gone */
static const char *churn_meminfo;
static unsigned long long churn_before;
static volatile int churn_pause, churn_paused;

/* What the container's meminfo charges, all its processes together. */
static unsigned long long charged(void)
{
	unsigned long long sum = 0, v;
	char line[128];
	FILE *f = fopen(churn_meminfo, "r");

	CHECK(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PID: %*d Mem: %llu", &v) == 1)
			sum += v;
	fclose(f);
	return sum;
}

/* A VA range of size bytes (NV50_MEMORY_VIRTUAL, VIRTUAL | flags) h under parent of c: the status. */
static unsigned int range_of(unsigned int c, unsigned int parent, unsigned int h,
			     unsigned long long size, unsigned int flags)
{
	struct sd_memory_alloc m = { .owner = 0xcafe, .flags = SD_ALLOC_FLAGS_VIRTUAL | flags,
				     .size = size };

	return alloc(h % 4, c, parent, &h, SD_NV50_MEMORY_VIRTUAL, &m);
}

/* NV_ESC_RM_MAP_MEMORY_DMA of length bytes into dma of c (memory 0x7000, none): its answer. */
static const char *map_dma(unsigned int c, unsigned int dma, unsigned long long length, char *buf,
			   size_t len)
{
	struct sd_nvos46 p = { .hClient = c, .hDevice = 0x1000, .hDma = dma, .hMemory = 0x7000,
			       .length = length };
	int r = esc(ctl, SD_ESC_RM_MAP_MEMORY_DMA, &p, sizeof(p));

	return answer(r, p.status, buf, len);
}

static void ranges(unsigned int max, const char *meminfo)
{
	unsigned int c, n, i, st;
	char a[32];

	churn_meminfo = meminfo;
	open_gpu(0);
	start();
	c = client_on_gpu(0);
	st = range_of(c, 0x1000, 0x6000, 64 * MiB, 0);
	printf("range 64 MiB: status 0x%x, GPU 0 holds %llu, charged %llu\n", st, used(0), charged());
	st = range_of(c, 0x1000, 0x6001, 64 * MiB, SD_ALLOC_FLAGS_LAZY);
	printf("lazy 64 MiB: status 0x%x, GPU 0 holds %llu, charged %llu\n", st, used(0), charged());
	printf("dup range: %s, ", rm_dup(c, 0x1000, 0x6002, c, 0x6000, a, sizeof(a)));
	printf("GPU 0 holds %llu, charged %llu\n", used(0), charged());
	printf("maps: none %s, ", map_dma(c, 0x6000, 0, a, sizeof(a)));
	printf("past %s, ", map_dma(c, 0x6000, 64 * MiB + 1, a, sizeof(a)));
	printf("within %s, ", map_dma(c, 0x6000, 64 * MiB, a, sizeof(a)));
	printf("into the device %s, ", map_dma(c, 0x1000, MiB, a, sizeof(a)));
	printf("in no client of its file %s\n", map_dma(0xcafe0001, 0x6000, MiB, a, sizeof(a)));
	for (n = 0; n < max && (st = range_of(c, 0x1000, 0x6100 + n, 1ULL << 30, 0)) == SD_NV_OK; n++)
		;
	printf("ranges of 1 GiB: %u made, then status 0x%x, GPU 0 holds %llu, charged %llu\n", n, st,
	       used(0), charged());
	st = range_of(c, 0x1000, 0x6003, 16ULL << 40, SD_ALLOC_FLAGS_LAZY);
	printf("lazy 16 TiB: status 0x%x\n", st);
	rmfree(c, 0x6003);	/* made where nothing refuses it */
	for (i = 0; i < n; i++)
		CHECK(rmfree(c, 0x6100 + i) == SD_NV_OK);
	CHECK(rmfree(c, 0x6000) == SD_NV_OK && rmfree(c, 0x6001) == SD_NV_OK);
	rmfree(c, 0x6002);	/* made where nothing refuses it */
	printf("freed: GPU 0 holds %llu, charged %llu\n", used(0), charged());
	held_until_killed();
}


/*
 * rangerace N MEMINFO: (cgpu_km enforce=1) N LAZY VA ranges of 2 MiB under a device of
 * GPU 0, all four forms by turns, each freed at once when made, while
 * the rewriter flips the size to 1 TiB and back (a range the budget cannot take:
 * cgpu_range_tables of 1 TiB is 2.3 GiB). At each one made, MEMINFO must charge the
 * 64 KiB of a 2 MiB range; prints "rangerace: M made, R refused, charged otherwise: W"
 * and "held", then waits.
 */
static void rangerace(int n, const char *meminfo)
{
	unsigned int c, h, st;
	int i, made = 0, refused = 0, wrong = 0;
	pthread_t t;

	churn_meminfo = meminfo;
	open_gpu(0);
	start();
	c = client_on_gpu(0);
	raced = calloc(1, 4096);
	CHECK(raced);
	race_big = 1ULL << 40;
	raced->size = 2 * MiB;
	pin(0);
	CHECK(pthread_create(&t, NULL, rewriter, NULL) == 0);
	for (i = 0; i < n; i++) {
		raced->owner = 0x1234;
		raced->flags = SD_ALLOC_FLAGS_VIRTUAL | SD_ALLOC_FLAGS_LAZY;
		h = 0x10000 + i;
		st = alloc(i % 4, c, 0x1000, &h, SD_NV50_MEMORY_VIRTUAL, raced);
		/* A torn size of 0 is the driver's NV_ERR_INVALID_ARGUMENT (race's). */
		if (st != SD_NV_OK && st != SD_NV_ERR_NO_MEMORY && st != SD_NV_ERR_INVALID_ARGUMENT) {
			fprintf(stderr, "rawalloc: rangerace: status 0x%x\n", st);
			exit(1);
		}
		if (st != SD_NV_OK) {
			refused++;
			continue;
		}
		made++;
		if (charged() != 64 * 1024)
			wrong++;
		CHECK(rmfree(c, h) == SD_NV_OK);
	}
	race_done = 1;
	CHECK(pthread_join(t, NULL) == 0);
	printf("rangerace: %d made, %d refused, charged otherwise: %d\n", made, refused, wrong);
	held_until_killed();
}

/*
 * rangehold GO OUT: (cgpu_km enforce=1) a VA range of 1 GiB under a device of GPU 0,
 * then "held"; once GO exists (after a hot update) the range freed: "rangehold: freed
 * 0xS, the driver holds B" and "done" in OUT.
 */
static void rangehold(const char *go, const char *out)
{
	unsigned int c, st;
	FILE *f;

	open_gpu(0);
	start();
	c = client_on_gpu(0);
	CHECK(range_of(c, 0x1000, 0x6000, 1ULL << 30, 0) == SD_NV_OK);
	held_until(go);
	st = rmfree(c, 0x6000);
	f = fopen(out, "w");
	CHECK(f != NULL);
	fprintf(f, "rangehold: freed 0x%x, the driver holds %llu\ndone\n", st, used(0));
	closed_until_killed(f);
}

/*
 * The racer of a churn: n times makes what it races (make: its status), and at each one
 * made stops the other thread (which then holds nothing) to check that the container's
 * charge is what the driver holds, whichever of the two sizes it took (up to slack more:
 * a mapping's page tables are charged at the most they can take), then undoes it (undo,
 * if any); end, if any, once done.
 */
struct churn {
	const char *name;
	long n;
	unsigned long long slack;
	unsigned int (*make)(void);
	void (*undo)(void);
	void (*end)(void);
};

static void *churner(void *arg)
{
	const struct churn *c = arg;
	unsigned int st;
	long i;

	pin(1);
	for (i = 0; i < c->n; i++) {
		st = c->make();
		if (st == SD_NV_OK) {
			churn_counts[0]++;
			churn_pause = 1;
			while (!churn_paused)
				;
			if (used(0) - churn_before > charged() ||
			    charged() - (used(0) - churn_before) > c->slack) {
				fprintf(stderr, "rawalloc: %s: one followed: the driver holds %llu, %llu charged\n",
					c->name, used(0) - churn_before, charged());
				exit(1);
			}
			if (c->undo)
				c->undo();
			churn_pause = 0;
			while (churn_paused)
				;
		} else if (st == SD_NV_ERR_INSUFFICIENT_PERMISSIONS) {
			churn_counts[1]++;
		} else if (st == SD_NV_ERR_OBJECT_NOT_FOUND) {
			churn_counts[2]++;
		} else {
			fprintf(stderr, "rawalloc: %s: status 0x%x\n", c->name, st);
			exit(1);
		}
	}
	if (c->end)
		c->end();
	race_done = 1;
	return NULL;
}

static unsigned int dup_make(void)
{
	return dup_on(ctl, dup_client, 0x1000, 0x2100, dup_client, 0x2000);
}

static void dup_undo(void)
{
	CHECK(rmfree(dup_client, 0x2100) == SD_NV_OK);
}

/*
 * The churn's other thread: makes and frees 2 or 4 MiB by turns at handle 0x2000 of
 * dup_client, all four forms, until the racer is done, stopping (holding nothing) when
 * asked; how many it made.
 */
static unsigned int churn_allocs(void)
{
	struct sd_memory_alloc m;
	unsigned int h, made = 0;

	while (!race_done) {
		if (churn_pause) {
			churn_paused = 1;
			while (churn_pause)
				;
			churn_paused = 0;
		}
		m = (struct sd_memory_alloc){ .owner = 0x1234, .size = (2 + made % 2 * 2) * MiB };
		h = 0x2000;
		CHECK(alloc(made % 4, dup_client, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
		/* Now and then held a while with the file quiet: duplicates then are followed. */
		if (made % 8 == 7)
			usleep(200);
		made++;
		CHECK(rmfree(dup_client, h) == SD_NV_OK);
	}
	return made;
}

/* A churn on a new client of GPU 0, the racer c against churn_allocs: what they made. */
static unsigned int churn_run(const struct churn *c, const char *meminfo)
{
	unsigned int made;
	pthread_t t;

	dup_client = client_on_gpu(0);
	churn_meminfo = meminfo;
	churn_before = used(0);
	pin(0);
	CHECK(pthread_create(&t, NULL, churner, (void *)c) == 0);
	made = churn_allocs();
	CHECK(pthread_join(t, NULL) == 0);
	return made;
}

static void dupchurn(long n, const char *meminfo)
{
	const struct churn c = { "dupchurn", n, 0, dup_make, dup_undo, NULL };
	struct sd_memory_alloc m;
	unsigned int h, made;

	start();
	open_gpu(0);
	made = churn_run(&c, meminfo);
	CHECK(used(0) == churn_before);
	m = (struct sd_memory_alloc){ .owner = 0x1234, .size = 2 * MiB };
	h = 0x2000;
	CHECK(alloc(0, dup_client, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
	CHECK(dup_on(ctl, dup_client, 0x1000, 0x2100, dup_client, 0x2000) == SD_NV_OK);
	CHECK(rmfree(dup_client, 0x2000) == SD_NV_OK);
	printf("dupchurn: %ld duplicates asked for, %u followed, %u refused, %u found no source, %u made and freed; one kept, driver holds %llu MiB\n",
	       n, churn_counts[0], churn_counts[1], churn_counts[2], made, (used(0) - churn_before) / MiB);
	held_until_killed();
}

#define CHURN_VA 0x7d0000000000ULL	/* the uvm churn's one external range, 4 MiB */

static int churn_uvm;			/* its va_space, GPU 0 registered */

/* One map of 2 MiB of handle 0x2000 at CHURN_VA (over the last one): its status. */
static unsigned int churn_map_once(void)
{
	return uvm_map(churn_uvm, CHURN_VA, 2 * MiB, dup_client, 0x2000);
}

static void uvm_end(void)
{
	uvm_free_range(churn_uvm, CHURN_VA, 4 * MiB);
}

/*
 * uvmchurn N MEMINFO: one thread makes and frees 2 or 4 MiB by turns at handle 0x2000
 * while another maps 0x2000 through nvidia-uvm N times, each map over the last; at each
 * map followed, with the first thread stopped, the container's charge (MEMINFO) must be
 * what the driver holds, up to what the mapping's page tables could take more. Prints "uvmchurn: N maps asked for, F followed, R refused, S
 * found no source, M made and freed; nothing held, driver holds X MiB more", "held", waits.
 */
static void uvmchurn(long n, const char *meminfo)
{
	/*
	 * The 2 MiB mapping's tables at 2 MiB pages, a directory of each level, charged as
	 * the most those of 2 or 4 MiB can take: 44 or 48 KiB (cgpu_map_tables).
	 */
	const struct churn c = { "uvmchurn", n, 12 * 4096 - 3 * 4096, churn_map_once, NULL, uvm_end };
	unsigned int made;

	start();
	open_gpu(0);
	churn_uvm = uvm_space();
	uvm_range(churn_uvm, CHURN_VA, 4 * MiB);
	made = churn_run(&c, meminfo);
	printf("uvmchurn: %ld maps asked for, %u followed, %u refused, %u found no source, %u made and freed; nothing held, driver holds %llu MiB more\n",
	       n, churn_counts[0], churn_counts[1], churn_counts[2], made, (used(0) - churn_before) / MiB);
	held_until_killed();
}

/* NV_ESC_REGISTER_FD of fd to control file ctl_fd: "0" or "errno E". */
static const char *register_fd(int fd, int ctl_fd, char *buf, size_t len)
{
	struct sd_register_fd r = { .ctl_fd = ctl_fd };

	if (esc(fd, SD_ESC_REGISTER_FD, &r, sizeof(r)))
		snprintf(buf, len, "errno %d", errno);
	else
		snprintf(buf, len, "0");
	return buf;
}

/*
 * register: a GPU node's file and a second control file registered to the first
 * control file; where the second's is taken, a client made through it lives past its
 * close, freed through the first. Prints "register: ..." lines and "held", waits.
 */
static void registers(void)
{
	unsigned int c = 0;
	char a[32], b[32];
	int gpu, other;

	start();
	gpu = open("/dev/nvidia0", O_RDWR);
	other = open("/dev/nvidiactl", O_RDWR);
	CHECK(gpu >= 0 && other >= 0);
	printf("register: gpu node %s, control node %s\n", register_fd(gpu, ctl, a, sizeof(a)),
	       register_fd(other, ctl, b, sizeof(b)));
	if (!strcmp(b, "0")) {
		int first = ctl;

		ctl = other;
		CHECK(alloc(0, 0, 0, &c, SD_NV01_ROOT, NULL) == SD_NV_OK);
		ctl = first;
		CHECK(close(other) == 0);
		printf("register: a client made through it, freed through the other after its close: 0x%x\n",
		       rmfree(c, c));
	}
	held_until_killed();
}

/*
 * dmabuf: each round allocates mib MiB, exports it to a new dma-buf and frees the
 * handle, keeping the dma-buf: what a dma-buf holds is then no handle's. Prints one
 * "dmabuf: round R: export status 0xS" line a round, "dmabuf: N kept, the driver holds
 * X MiB more" (no handle of the process's left), and once the dma-bufs are closed
 * "dmabuf: closed, the driver holds Y MiB more"; then "held", waits.
 */
static void dmabufs(unsigned long long mib, int rounds)
{
	const unsigned long long bytes = mib * MiB;
	struct sd_memory_alloc m = { .owner = 0x1234 };
	unsigned long long base;
	int gpu, kept[64], n = 0, r;
	unsigned int c, h;
	char a[32];

	CHECK(rounds > 0 && rounds <= 64);
	gpu = open("/dev/nvidia0", O_RDWR);
	CHECK(gpu >= 0);
	start();
	base = used(0);
	c = client_on_gpu(0);
	for (r = 1; r <= rounds; r++) {
		struct sd_export_dmabuf e = { .fd = -1, .hClient = c, .totalObjects = 1, .numObjects = 1,
			.totalSize = bytes, .handles = { 0x2000 }, .sizes = { bytes } };
		int rc;

		h = 0x2000;
		m.size = bytes;	/* the driver hands back the size it rounded to */
		CHECK(alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
		rc = esc(gpu, SD_ESC_EXPORT_TO_DMABUF_FD, &e, sizeof(e));
		printf("dmabuf: round %d: export %s\n", r, answer(rc, e.status, a, sizeof(a)));
		if (!rc && e.status == SD_NV_OK)
			kept[n++] = e.fd;
		CHECK(rmfree(c, 0x2000) == SD_NV_OK);
	}
	CHECK(rmfree(c, c) == SD_NV_OK);
	printf("dmabuf: %d kept, the driver holds %llu MiB more\n", n, (used(0) - base) / MiB);
	while (n)
		CHECK(close(kept[--n]) == 0);
	printf("dmabuf: closed, the driver holds %llu MiB more\n", (used(0) - base) / MiB);
	held_until_killed();
}

/* Prints "uvmhold: FILE: <its first line>" of path, if one is given. */
static void say_first_line(const char *path)
{
	char line[256];

	if (path)
		printf("uvmhold: FILE: %s\n", first_line(path, line, sizeof(line)));
}

/*
 * Rounds 1..rounds of: mib MiB allocated on GPU 0 under client c, mapped through the
 * va_space fd into an external range of its own from base_va, its handle freed (the
 * mapping kept: what it holds is then no handle's). Prints "TAG: round R: map status
 * 0xS" a round (or "alloc status 0xS" if the allocation is refused); how many mapped.
 */
static int uvm_rounds(const char *tag, int fd, unsigned int c, unsigned long long mib, int rounds,
		      unsigned long long base_va)
{
	const unsigned long long bytes = mib * MiB;
	struct sd_memory_alloc m = { .owner = 0x1234 };
	unsigned int h, st;
	int n = 0, r;

	CHECK(rounds > 0 && rounds <= 64);
	for (r = 1; r <= rounds; r++) {
		h = 0x2000;
		m.size = bytes;
		st = alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
		if (st != SD_NV_OK) {
			printf("%s: round %d: alloc status %#x\n", tag, r, st);
			continue;
		}
		uvm_range(fd, base_va + (r - 1) * bytes, bytes);
		st = uvm_map(fd, base_va + (r - 1) * bytes, bytes, c, 0x2000);
		printf("%s: round %d: map status %#x\n", tag, r, st);
		n += st == SD_NV_OK;
		CHECK(rmfree(c, 0x2000) == SD_NV_OK);
	}
	return n;
}

/*
 * A process as libcuda makes one for uvmhold and uvmkeep: /dev/nvidia0 open (*gpu, if
 * asked), the nodes (start), a va_space with GPU 0 (*fd), and a client on GPU 0 (its
 * handle).
 */
static unsigned int uvm_start(int *gpu, int *fd)
{
	int g = open("/dev/nvidia0", O_RDWR);

	CHECK(g >= 0);
	if (gpu)
		*gpu = g;
	start();
	*fd = uvm_space();
	return client_on_gpu(0);
}

/*
 * uvmalias: one 64 MiB memory mapped at up to max places of one external range, 1 GiB
 * apart and 4 KiB past a 2 MiB boundary, so that nvidia-uvm maps each at 4 KiB pages in
 * tables of its own (33 tables of 4 KiB pages and a directory per mapping): prints
 * "TAG: N mapped at 4 KiB pages, then status 0xS, the driver holds B more", after the
 * range's UVM_FREE "TAG: range freed, the driver holds B more", after the memory's free
 * "TAG: memory freed, the driver holds B more", each followed by path's first line
 * (say_first_line); then "held", waits. Video memory (tag uvmalias), or system memory
 * (uvmsys) mapped on GPU 0 with a GPU VA space of GPU 0 registered first if vas, as
 * libcuda does per context.
 */
static void uvmalias(const char *tag, bool sys, bool vas, int max, const char *path)
{
	const unsigned long long va = 0x100000000000ULL, gib = 1ULL << 30;
	struct sd_memory_alloc m = { .owner = 0x1234, .size = 64 * MiB };
	struct sd_vaspace_alloc vs = { .index = 0 };
	unsigned int c, h = 0x2000, hv = 0x5000, st = SD_NV_OK;
	unsigned long long base;
	int fd, n;

	CHECK(max > 0 && max <= 4096);
	c = uvm_start(NULL, &fd);
	if (sys)
		m.attr = SD_ATTR_LOCATION_PCI << SD_ATTR_LOCATION_SHIFT;
	CHECK(alloc(0, c, 0x1000, &h, sys ? SD_NV01_MEMORY_SYSTEM : SD_NV01_MEMORY_LOCAL_USER,
		    &m) == SD_NV_OK);
	if (vas) {
		CHECK(alloc(0, c, 0x1000, &hv, SD_FERMI_VASPACE_A, &vs) == SD_NV_OK);
		CHECK(uvm_gpu_vaspace(fd, c, hv, true) == SD_NV_OK);
	}
	base = used(0) - (sys ? 0 : 64 * MiB);
	uvm_range(fd, va, max * gib);
	for (n = 0; n < max; n++) {
		st = uvm_map(fd, va + n * gib + 4096, 64 * MiB, c, 0x2000);
		if (st != SD_NV_OK)
			break;
	}
	printf("%s: %d mapped at 4 KiB pages, then status %#x, the driver holds %llu more\n", tag,
	       n, st, used(0) - base);
	say_first_line(path);
	uvm_free_range(fd, va, max * gib);
	printf("%s: range freed, the driver holds %llu more\n", tag, used(0) - base);
	say_first_line(path);
	CHECK(rmfree(c, 0x2000) == SD_NV_OK);
	printf("%s: memory freed, the driver holds %llu more\n", tag, used(0) - base);
	say_first_line(path);
	held_until_killed();
}

/* UVM_MAP_EXTERNAL_SPARSE of [base, base + len) on GPU gpu: its status. */
static unsigned int uvm_sparse(int fd, unsigned long long base, unsigned long long len, int gpu)
{
	struct sd_uvm_map_external_sparse p = { .base = base, .length = len };

	sd_gpu_uuid(gpu, p.gpuUuid);
	CHECK(ioctl(fd, SD_UVM_MAP_EXTERNAL_SPARSE, &p) == 0);
	return p.rmStatus;
}

/* UVM_ALLOC_SEMAPHORE_POOL of [base, base + len), no attributes: its status. */
static unsigned int uvm_pool(int fd, unsigned long long base, unsigned long long len)
{
	size_t size = SD_UVM_POOL_SIZE(uvm_max_gpus);
	char *block = calloc(1, size);
	struct sd_uvm_pool_head *ph = (void *)block;
	struct sd_uvm_pool_tail *pt = (void *)(block + size - sizeof(*pt));
	unsigned int st;

	CHECK(block);
	ph->base = base;
	ph->length = len;
	CHECK(ioctl(fd, SD_UVM_ALLOC_SEMAPHORE_POOL, block) == 0);
	st = pt->rmStatus;
	free(block);
	return st;
}

/* UVM_MAP_DYNAMIC_PARALLELISM_REGION of [base, base + len) on GPU 0: its status. */
static unsigned int uvm_dp_region(int fd, unsigned long long base, unsigned long long len)
{
	struct sd_uvm_map_dp_region p = { .base = base, .length = len };

	sd_gpu_uuid(0, p.gpuUuid);
	CHECK(ioctl(fd, SD_UVM_MAP_DYNAMIC_PARALLELISM_REGION, &p) == 0);
	return p.rmStatus;
}

/*
 * uvmpool, uvmdpr: a GPU VA space of GPU 0 registered ("TAG: ready", path's first
 * line), then semaphore pools of 4 KiB (pool) or dynamic parallelism regions of 64 KiB
 * (!pool) 1 GiB apart, each making page tables of its own on GPU 0, up to max or a
 * refusal ("TAG: N made, then status 0xS, the driver holds B more"), the first freed
 * ("TAG: one freed, the driver holds B more"), each followed by path's first line;
 * then "held", waits.
 */
static void uvmtables(const char *tag, bool pool, int max, const char *path)
{
	const unsigned long long va = 0x100000000000ULL, gib = 1ULL << 30;
	const unsigned long long len = pool ? 4096 : 64 * 1024;
	struct sd_vaspace_alloc vs = { .index = 0 };
	unsigned int c, hv = 0x5000, st = SD_NV_OK;
	unsigned long long base;
	struct sd_uvm_free fr = { .base = va, .length = len };
	int fd, n;

	CHECK(max > 1 && max <= 4096);
	c = uvm_start(NULL, &fd);
	CHECK(alloc(0, c, 0x1000, &hv, SD_FERMI_VASPACE_A, &vs) == SD_NV_OK);
	CHECK(uvm_gpu_vaspace(fd, c, hv, true) == SD_NV_OK);
	printf("%s: ready\n", tag);
	say_first_line(path);
	base = used(0);
	for (n = 0; n < max; n++) {
		st = pool ? uvm_pool(fd, va + n * gib, len) : uvm_dp_region(fd, va + n * gib, len);
		if (st != SD_NV_OK)
			break;
	}
	printf("%s: %d made, then status %#x, the driver holds %llu more\n", tag, n, st,
	       used(0) - base);
	say_first_line(path);
	CHECK(ioctl(fd, SD_UVM_FREE, &fr) == 0 && fr.rmStatus == SD_NV_OK);
	printf("%s: one freed, the driver holds %llu more\n", tag, used(0) - base);
	say_first_line(path);
	held_until_killed();
}

/* UVM_MIGRATE of [base, base + len) to GPU 0: its status. */
static unsigned int uvm_migrate(int fd, unsigned long long base, unsigned long long len)
{
	struct sd_uvm_migrate m = { .base = base, .length = len };

	sd_gpu_uuid(0, m.destinationUuid);
	CHECK(ioctl(fd, SD_UVM_MIGRATE, &m) == 0);
	return m.rmStatus;
}

/*
 * uvmmanaged: a managed range of mib MiB, a mmap of the va_space's file at the offset of
 * its address, as libcuda's cuMemAllocManaged makes one ("uvmmanaged: mmap: errno E", 0
 * if made), moved to GPU 0 ("uvmmanaged: migrate: status 0xS, the driver holds B
 * more"), then its first half unmapped ("uvmmanaged: half unmapped, the driver holds B
 * more"); then "held", waits.
 */
static void uvmmanaged(int mib)
{
	const unsigned long long va = 0x200000000000ULL, len = (unsigned long long)mib * MiB;
	unsigned long long base;
	unsigned int st;
	void *p;
	int fd, err = 0;

	CHECK(mib > 0 && mib <= 4096 && mib % 2 == 0);
	(void)uvm_start(NULL, &fd);
	base = used(0);
	p = mmap((void *)va, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, (off_t)va);
	if (p == MAP_FAILED)
		err = errno;
	else
		CHECK(p == (void *)va);
	printf("uvmmanaged: mmap: errno %d\n", err);
	st = uvm_migrate(fd, va, len);
	printf("uvmmanaged: migrate: status %#x, the driver holds %llu more\n", st, used(0) - base);
	if (!err) {
		CHECK(munmap((void *)va, len / 2) == 0);
		printf("uvmmanaged: half unmapped, the driver holds %llu more\n", used(0) - base);
	}
	held_until_killed();
}

/*
 * uvmhmm: whether the va_space reaches pageable memory (UVM_PAGEABLE_MEM_ACCESS: HMM),
 * then mib MiB of an anonymous mapping moved to GPU 0: "uvmhmm: pageable memory access
 * N, migrate status 0xS, the driver holds B more"; then "held", waits.
 */
static void uvmhmm(int mib)
{
	const unsigned long long len = (unsigned long long)mib * MiB;
	struct sd_uvm_pageable_mem_access pa = { .pageableMemAccess = 2 };
	unsigned long long base;
	unsigned int st;
	void *p;
	int fd;

	CHECK(mib > 0 && mib <= 4096);
	(void)uvm_start(NULL, &fd);
	CHECK(ioctl(fd, SD_UVM_PAGEABLE_MEM_ACCESS, &pa) == 0 && pa.rmStatus == SD_NV_OK);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	memset(p, 1, len);
	base = used(0);
	st = uvm_migrate(fd, (unsigned long long)(unsigned long)p, len);
	printf("uvmhmm: pageable memory access %u, migrate status %#x, the driver holds %llu more\n",
	       pa.pageableMemAccess, st, used(0) - base);
	held_until_killed();
}

/*
 * uvmsparse: sparse mappings of 2 GiB spans of one external range on GPU gpu, each
 * making 272 KiB of page tables: the first, then the first again ("uvmsparse: again:
 * status 0xS, the driver holds B more"), then the next ones up to max or a refusal
 * ("uvmsparse: N spans, then status 0xS, the driver holds B more"), the range freed
 * ("uvmsparse: range freed, the driver holds B more"), each followed by path's first
 * line (the driver's figures are gpu's); then two spans of a new range, "held", waits.
 */
static void uvmsparse(int max, const char *path, int gpu)
{
	struct sd_uvm_register_gpu reg = { .rmCtrlFd = ctl };
	const unsigned long long va = 0x100000000000ULL, span = 2ULL << 30;
	unsigned long long base;
	unsigned int st;
	int fd, n;

	CHECK(max > 1 && max <= 1024 && gpu >= 0 && gpu <= 1);
	(void)uvm_start(NULL, &fd);
	if (gpu) {
		sd_gpu_uuid(gpu, reg.gpu_uuid);
		CHECK(ioctl(fd, SD_UVM_REGISTER_GPU, &reg) == 0 && reg.rmStatus == SD_NV_OK);
	}
	base = used(gpu);
	uvm_range(fd, va, max * span);
	CHECK(uvm_sparse(fd, va, span, gpu) == SD_NV_OK);
	st = uvm_sparse(fd, va, span, gpu);
	printf("uvmsparse: again: status %#x, the driver holds %llu more\n", st, used(gpu) - base);
	say_first_line(path);
	for (n = 1; n < max; n++) {
		st = uvm_sparse(fd, va + n * span, span, gpu);
		if (st != SD_NV_OK)
			break;
	}
	printf("uvmsparse: %d spans, then status %#x, the driver holds %llu more\n", n, st,
	       used(gpu) - base);
	say_first_line(path);
	uvm_free_range(fd, va, max * span);
	printf("uvmsparse: range freed, the driver holds %llu more\n", used(gpu) - base);
	say_first_line(path);
	uvm_range(fd, va, 2 * span);
	CHECK(uvm_sparse(fd, va, span, gpu) == SD_NV_OK &&
	      uvm_sparse(fd, va + span, span, gpu) == SD_NV_OK);
	held_until_killed();
}

/*
 * uvmhold: registers GPU 0 with a va_space and maps rounds of mib MiB (uvm_rounds);
 * prints "uvmhold: N mapped, the driver holds X MiB more", after the first range's
 * UVM_FREE "uvmhold: one range freed, the driver holds Y MiB more", and once the
 * va_space is closed "uvmhold: closed, the driver holds Z MiB more", each followed by
 * path's first line (say_first_line); then "held", waits.
 */
static void uvmhold(unsigned long long mib, int rounds, const char *path)
{
	const unsigned long long base_va = 0x7e0000000000ULL, base = used(0);
	unsigned int c;
	int fd, n;

	c = uvm_start(NULL, &fd);
	n = uvm_rounds("uvmhold", fd, c, mib, rounds, base_va);
	CHECK(rmfree(c, c) == SD_NV_OK);
	printf("uvmhold: %d mapped, the driver holds %llu MiB more\n", n, (used(0) - base) / MiB);
	say_first_line(path);
	uvm_free_range(fd, base_va, mib * MiB);
	printf("uvmhold: one range freed, the driver holds %llu MiB more\n", (used(0) - base) / MiB);
	say_first_line(path);
	CHECK(close(fd) == 0);
	printf("uvmhold: closed, the driver holds %llu MiB more\n", (used(0) - base) / MiB);
	say_first_line(path);
	held_until_killed();
}

/*
 * uvmkeep: maps rounds of mib MiB as uvmhold does, then frees its client and closes
 * every file of the RM driver (/dev/nvidiactl, /dev/nvidia0): what it holds, it holds
 * through its va_space on /dev/nvidia-uvm alone. Prints "uvmkeep: N mapped, only
 * /dev/nvidia-uvm open", "held", waits; with GO, hands the file to a child first
 * (hand_to_child) and exits once GO exists.
 */
static void uvmkeep(unsigned long long mib, int rounds, const char *go)
{
	unsigned int c;
	int gpu, fd, n;

	c = uvm_start(&gpu, &fd);
	n = uvm_rounds("uvmkeep", fd, c, mib, rounds, 0x7d0000000000ULL);
	CHECK(rmfree(c, c) == SD_NV_OK);
	CHECK(close(ctl) == 0 && close(gpu) == 0);
	printf("uvmkeep: %d mapped, only /dev/nvidia-uvm open\n", n);
	if (go)
		hand_to_child("uvmkeep", go, false);
	held_until_killed();
}

/* uvmshare's child: MIB MiB of its own on a client of a new /dev/nvidiactl. */
static void charge_of_its_own(long mib, int pipe_fd)
{
	(void)pipe_fd;
	mib_on_gpu0(mib, 0);
}

/*
 * uvmshare: MIB MiB mapped through a va_space (uvm_rounds, one round), then a child
 * that inherits every file and makes a charge of its own (MIB MiB on a client of a new
 * /dev/nvidiactl): both hold the va_space's file. Prints "uvmshare: child C", "held",
 * waits; the child waits too.
 */
static void uvmshare(unsigned long long mib)
{
	unsigned int c;
	int fd;

	c = uvm_start(NULL, &fd);
	CHECK(uvm_rounds("uvmshare", fd, c, mib, 1, 0x7b0000000000ULL) == 1);
	printf("uvmshare: child %d\n", (int)child_ready(charge_of_its_own, mib));
	held_until_killed();
}

/*
 * uvmlater: the files opened and MIB MiB allocated now (before cgpu_km loads, say: no
 * record names that memory), the work once GO exists: a map of that memory, then MIB
 * MiB more allocated on GPU 0, mapped through nvidia-uvm and its handle freed, then
 * objects under the devices made before (below). Writes "old map 0xS", "alloc 0xS map
 * 0xS free 0xS", "late" and each of those objects' status, and "done" to OUT, then
 * waits.
 */
static void uvmlater(unsigned long long mib, const char *go, const char *out)
{
	const unsigned long long va = 0x7c0000000000ULL, len = mib * MiB;
	struct sd_memory_alloc m = { .owner = 0x1234, .size = len };
	struct sd_channel_group_alloc g = { .engineType = 1 };
	struct sd_nv2080_alloc s1 = { 0 };
	unsigned int old, old1, old2, old3, c, h = 0x2001, ost, ast, mst = ~0u, fst = ~0u, late[9], i;
	int fd;
	FILE *f;

	start();
	open_gpu(0);
	open_gpu(1);
	fd = uvm_space();
	uvm_range(fd, va, len);
	uvm_range(fd, va + len, len);
	old = client_on_gpu(0);
	CHECK(alloc(0, old, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
	/* On GPU 1 too, and a device there with no subdevice (another client's: one a GPU). */
	old1 = client_on_gpu(1);
	old2 = client_with_device(0, 1, 0x1100);
	old3 = client_on_gpu(0);
	held_until(go);
	ost = uvm_map(fd, va + len, len, old, 0x2001);
	c = client_on_gpu(0);
	h = 0x2000;
	m.size = len;
	ast = alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
	if (ast == SD_NV_OK) {
		mst = uvm_map(fd, va, len, c, 0x2000);
		fst = rmfree(c, 0x2000);
	}
	/*
	 * Under the devices made before: 32 MiB under GPU 0's subdevice, 32 MiB under GPU 1's
	 * device, 128 MiB more there, a channel group on GPU 0, 32 MiB under the device with
	 * no subdevice, twice; then a subdevice under that one, and 32 MiB under it again;
	 * last a channel group under another device of GPU 0 (the forms of the others kept).
	 */
	const struct {
		unsigned int client, parent, handle, cls, mib;
	} later[9] = {
		{ old, 0x1001, 0x2100, SD_NV01_MEMORY_LOCAL_USER, 32 },
		{ old1, 0x1000, 0x2100, SD_NV01_MEMORY_LOCAL_USER, 32 },
		{ old1, 0x1000, 0x2101, SD_NV01_MEMORY_LOCAL_USER, 128 },
		{ old, 0x1000, 0x4000, SD_KEPLER_CHANNEL_GROUP_A, 0 },
		{ old2, 0x1100, 0x2102, SD_NV01_MEMORY_LOCAL_USER, 32 },
		{ old2, 0x1100, 0x2102, SD_NV01_MEMORY_LOCAL_USER, 32 },
		{ old2, 0x1100, 0x1101, SD_NV20_SUBDEVICE_0, 0 },
		{ old2, 0x1100, 0x2102, SD_NV01_MEMORY_LOCAL_USER, 32 },
		{ old3, 0x1000, 0x4000, SD_KEPLER_CHANNEL_GROUP_A, 0 },
	};
	for (i = 0; i < 9; i++) {
		void *params = later[i].cls == SD_KEPLER_CHANNEL_GROUP_A ? (void *)&g :
			later[i].cls == SD_NV20_SUBDEVICE_0 ? (void *)&s1 : (void *)&m;

		m.size = later[i].mib * MiB;
		h = later[i].handle;
		late[i] = alloc(i % 4, later[i].client, later[i].parent, &h, later[i].cls, params);
	}
	f = fopen(out, "w");
	CHECK(f != NULL);
	fprintf(f, "old map %#x\nalloc %#x map %#x free %#x\nlate", ost, ast, mst, fst);
	for (i = 0; i < 9; i++)
		fprintf(f, " %#x", late[i]);
	fprintf(f, "\ndone\n");
	closed_until_killed(f);
}

/*
 * inflight MIB GO: (cgpu_km enforce=1) MIB MiB on GPU 0, then the driver's two files
 * (/dev/nvidiactl, /dev/nvidia0) sent over a socket pair to the end a child holds,
 * which never reads them (the child holds no driver file itself): "inflight: child C",
 * "held"; once GO exists the parent exits. Then no process holds the files, which keep
 * the memory while they are in flight, until the child dies.
 */
static void inflight(unsigned long long mib, const char *go)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	int sv[2], gpu;
	pid_t child;

	gpu = open("/dev/nvidia0", O_RDWR);
	CHECK(gpu >= 0);
	mib_on_gpu0(mib, 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		close(ctl);
		close(gpu);
		close(sv[0]);
		for (;;)
			pause();
	}
	close(sv[1]);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(cm), (int[2]){ ctl, gpu }, 2 * sizeof(int));
	CHECK(sendmsg(sv[0], &msg, 0) == 1);
	printf("inflight: child %d\nheld\n", (int)child);
	fflush(stdout);
	wait_for(go);
	exit(0);
}

/*
 * reopen MIB GO OUT: (cgpu_km enforce=1) MIB MiB on GPU 0, then "held"; once GO exists
 * (after a hot update), a second /dev/nvidiactl opened and closed, and MIB MiB asked
 * again under the first; then the first MIB MiB freed and MIB MiB asked again:
 * "reopen: again 0xS, freed 0xS, then 0xS, the driver holds B" and "done" in OUT. Once
 * GO.2 exists (after a second one), its client freed: "client freed 0xS, the driver
 * holds B" and "done2" in OUT. What the process held before the update is charged
 * until the driver lets go of it, not until some file of the process that cgpu_km saw
 * opened after it closes; and given back when the driver frees it.
 */
static void reopen(unsigned long long mib, const char *go, const char *out)
{
	struct sd_memory_alloc m = { .owner = 0x1234, .size = mib * MiB };
	unsigned int c, h = 0x2000, st, fst, st2;
	char go2[4096];
	FILE *f;
	int fd;

	snprintf(go2, sizeof(go2), "%s.2", go);
	open_gpu(0);
	c = mib_on_gpu0(mib, 0);
	held_until(go);
	fd = open("/dev/nvidiactl", O_RDWR);
	CHECK(fd >= 0);
	close(fd);
	h = 0x2001;
	m = (struct sd_memory_alloc){ .owner = 0x1234, .size = mib * MiB };
	st = alloc(1, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
	fst = rmfree(c, 0x2000);
	h = 0x2001;
	m = (struct sd_memory_alloc){ .owner = 0x1234, .size = mib * MiB };
	st2 = alloc(2, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
	f = fopen(out, "w");
	CHECK(f != NULL);
	fprintf(f, "reopen: again 0x%x, freed 0x%x, then 0x%x, the driver holds %llu\ndone\n", st, fst,
		st2, used(0));
	fflush(f);
	wait_for(go2);
	fst = rmfree(c, c);
	fprintf(f, "client freed 0x%x, the driver holds %llu\ndone2\n", fst, used(0));
	closed_until_killed(f);
}

/*
 * uvmremap MIB GO OUT FILE: (cgpu_km enforce=1) as libcuda holds memory through a hot
 * update: MIB MiB A and B on GPU 0 mapped through nvidia-uvm, A's handle freed (its
 * mapping alone holds it), and 2 x MIB MiB C not mapped: "held". Once GO exists: A's
 * range freed and MIB MiB asked; B's handle freed; B's range freed and MIB MiB asked.
 * Writes to OUT, FILE being path's first line at that point: "A unmapped: FILE", "again
 * 0xS", "B freed: FILE", "B unmapped: FILE", "then 0xS", "done"; then waits.
 */
static void uvmremap(unsigned long long mib, const char *go, const char *out, const char *path)
{
	const unsigned long long va = 0x7b0000000000ULL, len = mib * MiB;
	struct sd_memory_alloc m = { .owner = 0x1234, .size = len };
	unsigned int c, h, st, st2;
	char line[256];
	FILE *f;
	int fd;

	c = uvm_start(NULL, &fd);
	for (h = 0x2000; h <= 0x2001; h++) {
		unsigned int want = h;

		m.size = len;
		CHECK(alloc(0, c, 0x1000, &want, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
		uvm_range(fd, va + (h - 0x2000) * len, len);
		CHECK(uvm_map(fd, va + (h - 0x2000) * len, len, c, h) == SD_NV_OK);
	}
	CHECK(rmfree(c, 0x2000) == SD_NV_OK);
	h = 0x2002;
	m.size = 2 * len;
	CHECK(alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
	held_until(go);
	f = fopen(out, "w");
	CHECK(f != NULL);
	uvm_free_range(fd, va, len);
	fprintf(f, "A unmapped: %s\n", first_line(path, line, sizeof(line)));
	h = 0x2003;
	m.size = len;
	st = alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
	fprintf(f, "again 0x%x\n", st);
	CHECK(rmfree(c, 0x2001) == SD_NV_OK);
	fprintf(f, "B freed: %s\n", first_line(path, line, sizeof(line)));
	uvm_free_range(fd, va + len, len);
	fprintf(f, "B unmapped: %s\n", first_line(path, line, sizeof(line)));
	h = 0x2004;
	m.size = len;
	st2 = alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
	fprintf(f, "then 0x%x\ndone\n", st2);
	closed_until_killed(f);
}

/*
 * frozendup MIB GO OUT: (cgpu_km enforce=1) MIB MiB on GPU 0 and a va_space: "held". Once
 * GO exists (cgpu_km frozen for a hot update): a duplicate of it in its own client, a
 * map of it through nvidia-uvm and a channel group; "dup 0xS map 0xS group 0xS" to OUT
 * (a group made is freed). Once GO.2 exists (the update
 * committed): the memory freed, "freed 0xS: FILE" (path's first line) and "done" to OUT;
 * then waits.
 */
static void frozendup(unsigned long long mib, const char *go, const char *out, const char *path)
{
	const unsigned long long va = 0x7a0000000000ULL, len = mib * MiB;
	struct sd_memory_alloc m = { .owner = 0x1234, .size = len };
	struct sd_channel_group_alloc g = { .engineType = 1 };
	unsigned int c, h = 0x2000, dst, mst, gst, fst;
	char go2[4096], line[256];
	FILE *f;
	int fd;

	snprintf(go2, sizeof(go2), "%s.2", go);
	c = uvm_start(NULL, &fd);
	CHECK(alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_OK);
	uvm_range(fd, va, len);
	held_until(go);
	dst = dup_on(ctl, c, 0x1000, 0x2001, c, 0x2000);
	mst = uvm_map(fd, va, len, c, 0x2000);
	h = 0x3000;
	gst = alloc(0, c, 0x1000, &h, SD_KEPLER_CHANNEL_GROUP_A, &g);
	if (gst == SD_NV_OK)
		CHECK(rmfree(c, 0x3000) == SD_NV_OK);
	f = fopen(out, "w");
	CHECK(f != NULL);
	fprintf(f, "dup 0x%x map 0x%x group 0x%x\n", dst, mst, gst);
	fflush(f);
	wait_for(go2);
	fst = rmfree(c, 0x2000);
	fprintf(f, "freed 0x%x: %s\ndone\n", fst, first_line(path, line, sizeof(line)));
	closed_until_killed(f);
}

/*
 * forkhold MIB GO: (cgpu_km enforce=1) MIB MiB on GPU 0, then a child that inherits the
 * driver's files and holds them: "forkhold: child C", "held"; once GO exists the parent
 * exits, and the child goes on holding the memory through the files until killed.
 */
static void forkhold(unsigned long long mib, const char *go, bool stay)
{
	open_gpu(0);
	mib_on_gpu0(mib, 0);
	hand_to_child(stay ? "forkclose" : "forkhold", go, stay);
}

/* parentrace: the subdevice its second thread allocates under, and when to stop. */
static unsigned int pr_client;
static volatile int pr_done;
static volatile unsigned int pr_asked;
static unsigned int pr_status[4];

/* parentrace's second thread: BIG MiB under subdevice 0x1001, freed if made, until done. */
static void *parent_racer(void *arg)
{
	unsigned long long big = *(unsigned long long *)arg;
	struct sd_memory_alloc m;
	unsigned int h, st;

	pin(1);
	while (!pr_done) {
		h = 0x5000;
		m = (struct sd_memory_alloc){ .owner = 0x1234, .size = big * MiB };
		st = alloc(pr_asked % 4, pr_client, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, &m);
		pr_asked++;
		/* Freed with its device if the first thread was quicker. */
		if (st == SD_NV_OK)
			rmfree(pr_client, 0x5000);
		pr_status[st == SD_NV_OK ? 0 : st == SD_NV_ERR_NO_MEMORY ? 1 :
			  st == SD_NV_ERR_INVALID_OBJECT_PARENT ? 2 : 3]++;
	}
	return NULL;
}

/*
 * N rounds of: device 0x1000 on GPU 0, its first subdevice 0x1001 (which GPU the
 * device is on is asked of the driver once it is made), the device freed; all the while
 * a second thread asks for BIG MiB under 0x1001, whose handle it knows before the
 * subdevice's allocation returns. Prints "parentrace: N rounds, A asked: M made, R
 * refused (no memory), P no parent, O other".
 */
static void parentrace(int rounds, unsigned long long big)
{
	struct sd_nv0080_alloc d = { .deviceId = 0 };
	struct sd_nv2080_alloc sub = { 0 };
	unsigned int h;
	pthread_t t;
	int r;

	open_gpu(0);
	start();
	CHECK(alloc(0, 0, 0, &pr_client, SD_NV01_ROOT, NULL) == SD_NV_OK);
	pin(0);
	CHECK(pthread_create(&t, NULL, parent_racer, &big) == 0);
	for (r = 0; r < rounds; r++) {
		/* The racer asks at least twice a round, in whatever state it finds. */
		unsigned int want = pr_asked + 2;

		h = 0x1000;
		CHECK(alloc(r % 4, pr_client, pr_client, &h, SD_NV01_DEVICE_0, &d) == SD_NV_OK);
		h = 0x1001;
		CHECK(alloc(r % 4, pr_client, 0x1000, &h, SD_NV20_SUBDEVICE_0, &sub) == SD_NV_OK);
		CHECK(rmfree(pr_client, 0x1000) == SD_NV_OK);
		while (pr_asked < want)
			sched_yield();
	}
	pr_done = 1;
	CHECK(pthread_join(t, NULL) == 0);
	printf("parentrace: %d rounds, %u asked: %u made, %u refused (no memory), %u no parent, %u other\n",
	       rounds, pr_asked, pr_status[0], pr_status[1], pr_status[2], pr_status[3]);
}

/* leaderexit's second thread: once the main thread has exited, "held", then waits. */
static void *leader_gone(void *arg)
{
	char path[64], st[512], *state;
	FILE *f;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", getpid());
	for (;;) {
		f = fopen(path, "r");
		CHECK(f && fgets(st, sizeof(st), f));
		fclose(f);
		state = strrchr(st, ')');
		if (state && state[1] == ' ' && state[2] == 'Z')
			break;
		usleep(1000);
	}
	held_until_killed();
}

/*
 * MIB MiB on GPU 0, then the main thread exits (pthread_exit) while a second one goes
 * on with the process's files: "held" once the main thread is a zombie.
 */
static void leaderexit(unsigned long long mib)
{
	pthread_t t;

	open_gpu(0);
	mib_on_gpu0(mib, 0);
	CHECK(pthread_create(&t, NULL, leader_gone, NULL) == 0);
	pthread_exit(NULL);
}

static void uvm(void)
{
	struct sd_uvm_initialize p = { .flags = 0 };
	unsigned int st[3];
	int fd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC), tools, unknown;

	CHECK(fd >= 0);
	CHECK(ioctl(fd, SD_UVM_INITIALIZE, &p) == 0);
	st[0] = p.rmStatus;
	p.rmStatus = ~0u;
	CHECK(ioctl(fd, SD_UVM_INITIALIZE, &p) == 0);
	st[1] = p.rmStatus;
	p.flags = 1;
	CHECK(ioctl(fd, SD_UVM_INITIALIZE, &p) == 0);
	st[2] = p.rmStatus;
	CHECK(ioctl(fd, SD_UVM_DEINITIALIZE, 0) == 0);
	unknown = ioctl(fd, 0x30000999, &p) == -1 ? errno : 0;
	tools = open("/dev/nvidia-uvm-tools", O_RDWR | O_CLOEXEC);
	CHECK(tools >= 0);
	printf("uvm: initialize 0x%x, again 0x%x, other flags 0x%x, unknown errno %d, tools open\n",
	       st[0], st[1], st[2], unknown);
	close(tools);
	close(fd);
}

static void check(void)
{
	struct sd_card_info ci[SD_MAX_DEVICES];
	struct sd_memory_alloc m, *um;
	struct sd_nv0080_alloc d = { .deviceId = 1 };
	struct sd_nvos21 p21;
	struct sd_xfer x;
	unsigned long long base = used(0);
	unsigned int c, c2, h;
	int gpu0, ctl2, i, ngpus = 0;
	char *buf;

	start();
	CHECK(base == 0);
	CHECK(esc(ctl, SD_ESC_CARD_INFO, ci, sizeof(ci)) == 0);
	for (i = 0; i < SD_MAX_DEVICES && ci[i].valid; i++, ngpus++)
		CHECK(ci[i].vendor_id == 0x10de && ci[i].minor_number == (unsigned int)i && ci[i].bus == 0x10 + i);
	CHECK(ngpus >= 2);
	CHECK(esc(ctl, SD_ESC_CARD_INFO, ci, sizeof(ci[0])) == -1 && errno == EINVAL);

	/* A device needs its /dev/nvidiaN open (here GPU 1 is not). */
	gpu0 = open("/dev/nvidia0", O_RDWR);
	CHECK(gpu0 >= 0);
	c = client_on_gpu(0);
	h = 0x1100;
	CHECK(alloc(0, c, c, &h, SD_NV01_DEVICE_0, &d) == SD_NV_ERR_INSUFFICIENT_PERMISSIONS);

	/* Video memory in every form: 100 MiB, 3 MiB (two 2 MiB pages), 1 MiB, 7 MiB. */
	buf = malloc(4096 + 8);
	CHECK(buf);
	um = (struct sd_memory_alloc *)buf;
	memset(buf, 0, 4096);
	um->owner = 0x1234;
	um->size = 100 * MiB;
	h = 0x2000;
	CHECK(alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, um) == SD_NV_OK);
	CHECK(um->size == 100 * MiB && um->limit == 100 * MiB - 1);
	/* The driver handed back the page size it chose: ask for the default again. */
	um->attr = 0;
	um->size = 3 * MiB;
	h = 0x2001;
	CHECK(alloc(1, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, um) == SD_NV_OK);
	CHECK(um->size == 4 * MiB);
	um->attr = 0;
	um->size = 1 * MiB;
	h = 0x2002;
	CHECK(alloc(2, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, um) == SD_NV_OK);
	/* Unaligned class parameters are read as they lie. */
	um->attr = 0;
	memmove(buf + 3, um, sizeof(*um));
	((struct sd_memory_alloc *)(buf + 3))->size = 7 * MiB;
	h = 0;
	CHECK(alloc(3, c, 0x1001, &h, SD_NV01_MEMORY_LOCAL_USER, buf + 3) == SD_NV_OK && h != 0);
	memset(buf, 0, 4096);
	um->owner = 0x1234;
	um->size = MiB;
	CHECK(used(0) == (100 + 4 + 1 + 8) * MiB);
	printf("rawalloc: %llu MiB held on GPU 0 as the driver counts it\n", used(0) / MiB);

	/* Bad inputs and their documented answers. */
	memset(&m, 0, sizeof(m));
	m.owner = 0;
	m.size = MiB;
	h = 0x3000;
	CHECK(alloc(0, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_ERR_INVALID_OWNER);
	m.owner = 1;
	m.size = ~0ULL;
	CHECK(alloc(1, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_ERR_NO_MEMORY);
	m.size = 2048 * MiB;
	CHECK(alloc(1, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_ERR_NO_MEMORY);
	m.size = MiB;
	m.attr = 1u << SD_ATTR_LOCATION_SHIFT;
	CHECK(alloc(1, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, &m) == SD_NV_ERR_INVALID_ARGUMENT);
	CHECK(alloc(1, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, NULL) == SD_NV_ERR_INVALID_ARGUMENT);
	CHECK(alloc(1, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, (void *)16) == SD_NV_ERR_INVALID_ADDRESS);
	CHECK(alloc(1, c, 0x1000, &h, 0xc2, &m) == SD_NV_ERR_INVALID_CLASS);
	h = 0x2000;
	CHECK(alloc(1, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, um) == SD_NV_ERR_INSERT_DUPLICATE_NAME);
	h = 0x3000;
	CHECK(alloc(1, c, 0x7777, &h, SD_NV01_MEMORY_LOCAL_USER, um) == SD_NV_ERR_INVALID_OBJECT_PARENT);
	CHECK(alloc(1, 0x5555, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, um) == SD_NV_ERR_INVALID_CLIENT);
	memset(&p21, 0, sizeof(p21));
	CHECK(esc(ctl, SD_ESC_RM_ALLOC, &p21, 40) == -1 && errno == EINVAL);
	CHECK(esc(gpu0, SD_ESC_RM_ALLOC, &p21, sizeof(p21)) == -1 && errno == EINVAL);
	CHECK(esc(ctl, SD_ESC_RM_ALLOC, NULL, sizeof(p21)) == -1 && errno == EFAULT);
	CHECK(esc(ctl, 0x2A, &p21, sizeof(p21)) == -1 && errno == EINVAL);
	x = (struct sd_xfer){ .cmd = SD_ESC_RM_ALLOC, .size = SD_MAX_IOCTL_SIZE + 1, .ptr = (unsigned long)&p21 };
	CHECK(esc(ctl, SD_ESC_IOCTL_XFER_CMD, &x, sizeof(x)) == -1 && errno == EINVAL);
	x.size = sizeof(p21);
	x.ptr = 8;
	CHECK(esc(ctl, SD_ESC_IOCTL_XFER_CMD, &x, sizeof(x)) == -1 && errno == EFAULT);
	/* Another file's client is not this file's. */
	ctl2 = open("/dev/nvidiactl", O_RDWR);
	CHECK(ctl2 >= 0);
	{
		struct sd_nvos00 f = { .hRoot = c, .hObjectOld = 0x2000 };

		CHECK(esc(ctl2, SD_ESC_RM_FREE, &f, sizeof(f)) == 0 && f.status == SD_NV_ERR_INVALID_CLIENT);
	}
	c2 = c;
	{
		struct sd_nvos21 q = { .hObjectNew = c2, .hClass = SD_NV01_ROOT_CLIENT };

		CHECK(esc(ctl2, SD_ESC_RM_ALLOC, &q, sizeof(q)) == 0 && q.status == SD_NV_ERR_INSERT_DUPLICATE_NAME);
	}
	close(ctl2);

	/* Freeing: one object, a double free, a parent with its children, the client. */
	CHECK(rmfree(c, 0x2001) == SD_NV_OK && used(0) == (100 + 1 + 8) * MiB);
	CHECK(rmfree(c, 0x2001) == SD_NV_ERR_OBJECT_NOT_FOUND);
	CHECK(rmfree(c, 0x1001) == SD_NV_OK && used(0) == 100 * MiB);
	CHECK(rmfree(c, c) == SD_NV_OK && used(0) == 0);
	CHECK(rmfree(c, c) == SD_NV_ERR_INVALID_CLIENT);

	/* Closing the file frees every client it made. */
	c = client_on_gpu(0);
	um->attr = 0;
	um->size = 5 * MiB;
	h = 0x2000;
	CHECK(alloc(3, c, 0x1000, &h, SD_NV01_MEMORY_LOCAL_USER, um) == SD_NV_OK);
	CHECK(used(0) == 6 * MiB);
	close(ctl);
	CHECK(used(0) == 0);
	free(buf);
	printf("rawalloc: check passed\n");
}

/* mmap of fd: 0 when mapped (and unmapped again), else errno. */
static int map_errno(int fd, size_t len, int flags, off_t off)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, off);

	if (m == MAP_FAILED)
		return errno;
	munmap(m, len);
	return 0;
}

static void engine(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int ctl = open("/dev/nvidiactl", O_RDWR), a = open("/dev/nvidia0", O_RDWR),
	    b = open("/dev/nvidia0", O_RDWR), ro = open("/dev/nvidia0", O_RDONLY);
	struct sd_engine *ea, *eb;
	unsigned long long was;

	CHECK(ctl >= 0 && a >= 0 && b >= 0 && ro >= 0);
	CHECK(map_errno(ctl, pg, MAP_SHARED, 0) == EINVAL);
	CHECK(map_errno(a, pg, MAP_SHARED, (off_t)pg) == EINVAL);
	CHECK(map_errno(a, 2 * pg, MAP_SHARED, 0) == EINVAL);
	CHECK(map_errno(a, pg / 2, MAP_SHARED, 0) == 0);	/* mmap rounds it up to the page */
	CHECK(map_errno(a, pg, MAP_PRIVATE, 0) == EINVAL);
	CHECK(map_errno(ro, pg, MAP_SHARED, 0) == EACCES);	/* writable shared needs O_RDWR */
	ea = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, a, 0);
	eb = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, b, 0);
	CHECK(ea != MAP_FAILED && eb != MAP_FAILED && ea != eb);
	/* One page behind both opens; a time already past, so nothing waits on it. */
	was = ea->busy_until;
	ea->busy_until = was + 1;
	CHECK(eb->busy_until == was + 1);
	eb->busy_until = was;
	munmap(ea, pg);
	munmap(eb, pg);
	close(ctl);
	close(a);
	close(b);
	close(ro);
	printf("engine: GPU 0's page shared by two opens; nvidiactl, offset, size, private, read-only refused\n");
}

int main(int argc, char **argv)
{
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "hold"))
		hold(strtoull(argv[2], NULL, 10), argc == 4 ? strtoul(argv[3], NULL, 10) : 0);
	else if (argc == 3 && !strcmp(argv[1], "dup"))
		dups(strtoull(argv[2], NULL, 10));
	else if (argc == 4 && !strcmp(argv[1], "dupof"))
		dupof(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
	else if (argc == 3 && !strcmp(argv[1], "press"))
		press(strtoull(argv[2], NULL, 10));
	else if (argc == 3 && !strcmp(argv[1], "churn"))
		churn(strtoull(argv[2], NULL, 10));
	else if (argc == 3 && !strcmp(argv[1], "leaderexit"))
		leaderexit(strtoull(argv[2], NULL, 0));
	else if (argc == 3 && !strcmp(argv[1], "small"))
		small(atoi(argv[2]));
	else if ((argc == 3 || argc == 4) && !strcmp(argv[1], "loop"))
		loop(strtoull(argv[2], NULL, 10), argc == 4 ? atoi(argv[3]) : 0);
	else if (argc == 5 && !strcmp(argv[1], "race"))
		race(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10), atoi(argv[4]));
	else if (argc == 5 && !strcmp(argv[1], "devrace"))
		devrace(atoi(argv[2]), argv[3], argv[4]);
	else if (argc == 2 && !strcmp(argv[1], "register"))
		registers();
	else if (argc == 2 && !strcmp(argv[1], "dupfollow"))
		dupfollow();
	else if (argc == 4 && !strcmp(argv[1], "dupchurn"))
		dupchurn(atol(argv[2]), argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "uvmchurn"))
		uvmchurn(atol(argv[2]), argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "dmabuf"))
		dmabufs(strtoull(argv[2], NULL, 10), atoi(argv[3]));
	else if (argc == 4 && !strcmp(argv[1], "forkhold"))
		forkhold(strtoull(argv[2], NULL, 10), argv[3], false);
	else if (argc == 4 && !strcmp(argv[1], "parentrace"))
		parentrace(atoi(argv[2]), strtoull(argv[3], NULL, 0));
	else if (argc == 2 && !strcmp(argv[1], "dropdouble"))
		dropdouble();
	else if (argc == 3 && !strcmp(argv[1], "uvmshare"))
		uvmshare(strtoull(argv[2], NULL, 0));
	else if (argc == 4 && !strcmp(argv[1], "forkclose"))
		forkhold(strtoull(argv[2], NULL, 10), argv[3], true);
	else if (argc == 4 && !strcmp(argv[1], "rmfree")) {
		start();
		printf("rmfree: status 0x%x\n", rmfree(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10)));
	} else if (argc == 4 && !strcmp(argv[1], "inflight"))
		inflight(strtoull(argv[2], NULL, 10), argv[3]);
	else if (argc == 5 && !strcmp(argv[1], "reopen"))
		reopen(strtoull(argv[2], NULL, 10), argv[3], argv[4]);
	else if (argc == 6 && !strcmp(argv[1], "frozendup"))
		frozendup(strtoull(argv[2], NULL, 10), argv[3], argv[4], argv[5]);
	else if (argc == 6 && !strcmp(argv[1], "uvmremap"))
		uvmremap(strtoull(argv[2], NULL, 10), argv[3], argv[4], argv[5]);
	else if (argc == 5 && !strcmp(argv[1], "uvmlater"))
		uvmlater(strtoull(argv[2], NULL, 10), argv[3], argv[4]);
	else if ((argc == 3 || argc == 4) && !strcmp(argv[1], "uvmalias"))
		uvmalias("uvmalias", false, false, atoi(argv[2]), argc == 4 ? argv[3] : NULL);
	else if (argc >= 3 && argc <= 5 && !strcmp(argv[1], "uvmsparse"))
		uvmsparse(atoi(argv[2]), argc >= 4 ? argv[3] : NULL, argc == 5 ? atoi(argv[4]) : 0);
	else if ((argc == 3 || argc == 4) && !strcmp(argv[1], "uvmpool"))
		uvmtables("uvmpool", true, atoi(argv[2]), argc == 4 ? argv[3] : NULL);
	else if ((argc == 3 || argc == 4) && !strcmp(argv[1], "uvmdpr"))
		uvmtables("uvmdpr", false, atoi(argv[2]), argc == 4 ? argv[3] : NULL);
	else if (argc == 3 && !strcmp(argv[1], "uvmmanaged"))
		uvmmanaged(atoi(argv[2]));
	else if (argc == 3 && !strcmp(argv[1], "uvmhmm"))
		uvmhmm(atoi(argv[2]));
	else if ((argc == 4 || argc == 5) && !strcmp(argv[1], "uvmsys"))
		uvmalias("uvmsys", true, atoi(argv[3]), atoi(argv[2]), argc == 5 ? argv[4] : NULL);
	else if ((argc == 4 || argc == 5) && !strcmp(argv[1], "uvmhold"))
		uvmhold(strtoull(argv[2], NULL, 10), atoi(argv[3]), argc == 5 ? argv[4] : NULL);
	else if ((argc == 4 || argc == 5) && !strcmp(argv[1], "uvmkeep"))
		uvmkeep(strtoull(argv[2], NULL, 10), atoi(argv[3]), argc == 5 ? argv[4] : NULL);
	else if (argc == 2 && !strcmp(argv[1], "devcount"))
		devcount();
	else if (argc == 4 && !strcmp(argv[1], "frozenkinds"))
		frozenkinds(argv[2], argv[3]);
	else if ((argc == 3 || argc == 5) && !strcmp(argv[1], "clientvas"))
		clientvas(strtoul(argv[2], NULL, 10), argc == 5 ? argv[3] : NULL,
			  argc == 5 ? argv[4] : NULL);
	else if (argc == 3 && !strcmp(argv[1], "vaspaces"))
		vaspaces(strtoul(argv[2], NULL, 10));
	else if (argc == 4 && !strcmp(argv[1], "ranges"))
		ranges(strtoul(argv[2], NULL, 10), argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "rangerace"))
		rangerace(atoi(argv[2]), argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "rangehold"))
		rangehold(argv[2], argv[3]);
	else if (argc == 3 && !strcmp(argv[1], "uvmretain"))
		uvmretain(strtoul(argv[2], NULL, 10));
	else if (argc == 2 && !strcmp(argv[1], "chanhold"))
		chanhold();
	else if (argc == 3 && !strcmp(argv[1], "uvmforeign"))
		uvmforeign(strtoul(argv[2], NULL, 10));
	else if (argc == 3 && !strcmp(argv[1], "uvmhandoff"))
		uvmhandoff(strtoul(argv[2], NULL, 10));
	else if (argc == 3 && !strcmp(argv[1], "uvmchan"))
		uvmchan(strtoul(argv[2], NULL, 10));
	else if (argc == 4 && !strcmp(argv[1], "channels"))
		channels(strtoul(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
	else if (argc == 2 && !strcmp(argv[1], "uncharged"))
		uncharged();
	else if (argc == 2 && !strcmp(argv[1], "uvm"))
		uvm();
	else if (argc == 2 && !strcmp(argv[1], "engine"))
		engine();
	else if (argc == 2 && !strcmp(argv[1], "check"))
		check();
	else {
		fprintf(stderr, "usage: rawalloc check | rawalloc hold MIB | rawalloc loop MIB [GPU] | rawalloc dup MIB | rawalloc dupof C M | rawalloc churn MIB | rawalloc press MIB | rawalloc uvm | rawalloc engine | rawalloc race FILL BIG N | rawalloc register | rawalloc dupfollow | rawalloc dupchurn N MEMINFO | rawalloc uvmchurn N MEMINFO | rawalloc dmabuf MIB N | rawalloc uvmhold MIB N [FILE] | rawalloc uvmalias MAX [FILE] | rawalloc uvmkeep MIB N [GO] | rawalloc uvmlater MIB GO OUT | rawalloc uvmremap MIB GO OUT FILE | rawalloc frozendup MIB GO OUT FILE | rawalloc uncharged | rawalloc channels MAX FILL | rawalloc small MAX | rawalloc leaderexit MIB | rawalloc forkclose MIB GO | rawalloc uvmshare MIB | rawalloc parentrace N BIG | rawalloc dropdouble | rawalloc chanhold | rawalloc uvmforeign C | rawalloc uvmhandoff N | rawalloc ranges MAX MEMINFO | rawalloc rangehold GO OUT | rawalloc rangerace N MEMINFO\n");
		return 2;
	}
	return 0;
}
