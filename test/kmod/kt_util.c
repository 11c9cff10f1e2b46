// SPDX-License-Identifier: GPL-2.0 OR MIT
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "kt.h"

void kt_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "kt: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

int kt_open(int *fd)
{
	*fd = open(CGPU_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	return *fd < 0 ? errno : 0;
}

static int kt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

int kt_attach(int fd, struct cgpu_attach *a)
{
	memset(a, 0, sizeof(*a));
	a->abi_version = CGPU_ABI_VERSION;
	return kt_ioctl(fd, CGPU_IOC_ATTACH, a);
}

int kt_query(int fd, uint32_t slot, struct cgpu_query *q)
{
	memset(q, 0, sizeof(*q));
	q->abi_version = CGPU_ABI_VERSION;
	q->slot = slot;
	return kt_ioctl(fd, CGPU_IOC_QUERY, q);
}

int kt_charge(int fd, unsigned long cmd, uint32_t gpu, uint64_t bytes, struct cgpu_charge *c)
{
	memset(c, 0, sizeof(*c));
	c->abi_version = CGPU_ABI_VERSION;
	c->gpu = gpu;
	c->bytes = bytes;
	return kt_ioctl(fd, cmd, c);
}

/* Writing 0 to cgroup.procs moves the writer itself. */
int kt_join_cgroup(const char *dir)
{
	char path[4096];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write(fd, "0", 1) != 1)
		err = errno;
	close(fd);
	return err;
}

const char *kt_errname(int e)
{
	static const struct { int e; const char *name; } names[] = {
		{ 0, "OK" }, { EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EFAULT, "EFAULT" },
		{ EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
		{ EINVAL, "EINVAL" }, { ENOSPC, "ENOSPC" }, { ERANGE, "ERANGE" },
		{ ENOMEM, "ENOMEM" }, { ENOTTY, "ENOTTY" }, { EACCES, "EACCES" },
		{ ENOTCONN, "ENOTCONN" }, { EIO, "EIO" }, { EBADF, "EBADF" },
		{ ETIMEDOUT, "ETIMEDOUT" }, { EINTR, "EINTR" }, { EAGAIN, "EAGAIN" },
		{ EALREADY, "EALREADY" }, { EPROTO, "EPROTO" }, { ENXIO, "ENXIO" },
		{ ESRCH, "ESRCH" }, { EMFILE, "EMFILE" },
	};
	static char other[32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	snprintf(other, sizeof(other), "errno%d", e);
	return other;
}

uint64_t kt_num(const char *s, uint64_t limit)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v >= limit)
		kt_die("not a number below %llu: '%s'", (unsigned long long)limit, s);
	return v;
}

uint64_t kt_size(const char *s)
{
	static const char units[] = "KMG";
	size_t n = strlen(s);
	const char *u = n ? strchr(units, s[n - 1]) : NULL;
	char num[32];
	uint64_t v;

	if (!u || !*u)
		return kt_num(s, UINT64_MAX);
	if (n - 1 >= sizeof(num))
		kt_die("size too long: '%s'", s);
	memcpy(num, s, n - 1);
	num[n - 1] = '\0';
	v = kt_num(num, UINT64_MAX >> (10 * (u - units + 1)));
	return v << (10 * (u - units + 1));
}

uint64_t kt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
