/* SPDX-License-Identifier: MIT */
/*
 * For programs that compile libcgpu's gate and launch hooks (src/gate.c,
 * src/hook_launch.c) without the rest of libcgpu or a cgpu_km: what the rest
 * of libcgpu provides them with, and the kernel's status page as a fixture.
 * The program defines link_call, the kernel's answers to the slow path.
 */
#ifndef CGPU_GATE_FIXTURE_H
#define CGPU_GATE_FIXTURE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create */
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devmap.h"
#include "gate.h"
#include "link.h"

/* The driver's entry points: the program sets those it uses. */
#include "real_defs.h"

int cgpu_cuda_ready(void)
{
	return 1;
}

void cgpu_say_once(int *said, const char *fmt, ...)
{
	va_list ap;

	if (*said)
		return;
	*said = 1;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The container's GPUs are host GPUs 0..n-1, which are CUDA devices 0..n-1. */
static unsigned fixture_gpus;

int devmap_cuda(CUdevice dev)
{
	return dev >= 0 && (unsigned)dev < fixture_gpus ? dev : -1;
}

int link_ready(void)
{
	return -1;
}

/*
 * The status page of a container with n GPUs: a memfd mapped read-only, as
 * libcgpu maps /dev/cgpu's, and the gate set up on it as ATTACH does. Returns
 * the page writable, as the kernel writes it.
 */
static struct cgpu_status_page *status_page_fixture(unsigned n)
{
	struct cgpu_query kq[CGPU_MAX_GPUS];
	struct cgpu_status_page *w;
	const struct cgpu_status_page *ro;
	int fd = memfd_create("cgpu-status-fixture", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, CGPU_STATUS_SIZE))
		exit(2);
	w = mmap(NULL, CGPU_STATUS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ro = mmap(NULL, CGPU_STATUS_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED || ro == MAP_FAILED)
		exit(2);
	w->abi_version = CGPU_ABI_VERSION;
	w->ngpus = n;
	for (unsigned i = 0; i < n; i++)
		kq[i] = (struct cgpu_query){ .gpu = i, .sched_id = 1 + i };
	fixture_gpus = n;
	gate_init(ro, kq, n);
	if (gate_state != 1)
		exit(2);
	return w;
}

#endif
