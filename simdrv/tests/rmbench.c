// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cost of one driver call, timed from user space with nothing but the public ABI
 * (static, as rawalloc): what cgpu_km's hook on the driver's ioctl adds
 * (simdrv/tests/enforce-bench.sh runs it with cgpu_km loaded and not).
 *   rmbench KIND ITERS BATCHES   prints "rmbench: KIND N ns/op (median M)": of BATCHES
 *                                batches of ITERS calls, each timed whole, the fastest
 *                                batch's and the median's time per call
 * The fastest batch is the figure: what else the guest runs (a timer's tick) only
 * adds to a batch, so the fastest of many short batches is the calls' own cost; under
 * QEMU's -icount 0 (bench/enforce.sh) a guest ns is one instruction, so "ns" counts
 * instructions there.
 * KIND:
 *   control  NV_ESC_RM_CONTROL, the escape libcuda issues most: it reaches RM's entry,
 *            where the hook sits, which lets it pass without reading it; the hook's
 *            least cost on an RM call. The stand-in serves no control (RM's answer
 *            to an escape it does not know, -EINVAL, is expected), so the driver's
 *            own work is small and that cost shows
 *   object   NV_ESC_RM_ALLOC + NV_ESC_RM_FREE of a client (NV01_ROOT): the hook reads
 *            the block and lets it pass
 *   vidmem   NV_ESC_RM_ALLOC + NV_ESC_RM_FREE of 2 MiB of video memory
 *            (NV01_MEMORY_LOCAL_USER) on GPU 0 under a subdevice: in a limited
 *            container charged and given back; else the hook's most work for a call
 *            it lets pass (the caller's container looked up)
 * Every call uses NVOS64, the block libcuda's allocations use; any status but NV_OK
 * ends it with exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "../lib/abi.h"

#define MiB (1ULL << 20)
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "rmbench:%d: failed: %s (errno %d)\n", __LINE__, #c, errno); exit(1); } } while (0)

static int ctl;
static unsigned int client;

static int esc(unsigned int nr, void *p, unsigned int size)
{
	return ioctl(ctl, _IOC(_IOC_READ | _IOC_WRITE, SD_IOCTL_MAGIC, nr, size), p);
}

static unsigned int alloc(unsigned int root, unsigned int parent, unsigned int h,
			  unsigned int cls, void *params)
{
	struct sd_nvos64 p = { .hRoot = root, .hObjectParent = parent, .hObjectNew = h,
		.hClass = cls, .pAllocParms = (unsigned long)params };

	CHECK(esc(SD_ESC_RM_ALLOC, &p, sizeof(p)) == 0);
	CHECK(p.status == SD_NV_OK);
	return p.hObjectNew;
}

static void rmfree(unsigned int root, unsigned int obj)
{
	struct sd_nvos00 p = { .hRoot = root, .hObjectOld = obj };

	CHECK(esc(SD_ESC_RM_FREE, &p, sizeof(p)) == 0);
	CHECK(p.status == SD_NV_OK);
}

static void control(void)
{
	struct sd_nvos54 p = { .hClient = client, .hObject = client };

	CHECK(esc(SD_ESC_RM_CONTROL, &p, sizeof(p)) == -1 && errno == EINVAL);
}

static void object(void)
{
	unsigned int c = alloc(0, 0, 0, SD_NV01_ROOT, NULL);

	rmfree(c, c);
}

static void vidmem(void)
{
	struct sd_memory_alloc m = { .owner = 0x1234, .size = 2 * MiB };

	alloc(client, 0x1001, 0x2000, SD_NV01_MEMORY_LOCAL_USER, &m);
	rmfree(client, 0x2000);
}

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sd_nv0080_alloc d = { .deviceId = 0 };
	struct sd_nv2080_alloc s = { 0 };
	unsigned long long *ns;
	void (*op)(void);
	long iters, batches;

	if (argc != 4 || (iters = atol(argv[2])) <= 0 || (batches = atol(argv[3])) <= 0) {
		fprintf(stderr, "usage: rmbench control|object|vidmem ITERS BATCHES\n");
		return 2;
	}
	if (!strcmp(argv[1], "control"))
		op = control;
	else if (!strcmp(argv[1], "object"))
		op = object;
	else if (!strcmp(argv[1], "vidmem"))
		op = vidmem;
	else
		return fprintf(stderr, "rmbench: unknown kind %s\n", argv[1]), 2;
	ns = calloc(batches, sizeof(*ns));
	CHECK(ns);
	/* libcuda's opening sequence: its device on GPU 0, the GPU's node held open. */
	CHECK(open("/dev/nvidia0", O_RDWR) >= 0);
	ctl = open("/dev/nvidiactl", O_RDWR);
	CHECK(ctl >= 0);
	{
		struct sd_rm_api_version v = { .cmd = SD_VERSION_CMD_QUERY };

		CHECK(esc(SD_ESC_CHECK_VERSION_STR, &v, sizeof(v)) == 0);
		CHECK(v.reply == SD_VERSION_REPLY_RECOGNIZED);
	}
	client = alloc(0, 0, 0, SD_NV01_ROOT, NULL);
	alloc(client, client, 0x1000, SD_NV01_DEVICE_0, &d);
	alloc(client, 0x1000, 0x1001, SD_NV20_SUBDEVICE_0, &s);
	/* One batch unmeasured: first faults and cold caches are no one's cost. */
	for (long i = 0; i < iters; i++)
		op();
	for (long b = 0; b < batches; b++) {
		unsigned long long t0 = now_ns();

		for (long i = 0; i < iters; i++)
			op();
		ns[b] = (now_ns() - t0) / iters;
	}
	qsort(ns, batches, sizeof(*ns), cmp);
	printf("rmbench: %s %llu ns/op (median %llu)\n", argv[1], ns[0], ns[batches / 2]);
	return 0;
}
