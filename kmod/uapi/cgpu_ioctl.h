/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The /dev/cgpu ioctl ABI: the one contract between cgpu_km and libcgpu.
 *
 * Identity never comes from the caller: the kernel finds the caller's container
 * from the caller's cgroup at CGPU_IOC_ATTACH and binds the open file to it.
 * Every later call on that file acts on that container only.
 *
 * Errors every call may return: ENOTTY for a number that is not ours; EINVAL for
 * one of ours with another size or direction, a wrong abi_version, or a size of
 * 0 or above 2^63-1 bytes; ENOTCONN before ATTACH; EFAULT when the argument
 * cannot be read or written back (nothing is changed then).
 *
 * Versioning: every struct starts with abi_version. The kernel refuses a
 * version it does not speak with EINVAL. A new field means a new struct size,
 * hence a new ioctl number (the size is encoded in it), so an old libcgpu keeps
 * working against a newer module as long as the old numbers are still served.
 */
#ifndef CGPU_IOCTL_H
#define CGPU_IOCTL_H

#ifdef __KERNEL__
#include <linux/ioctl.h>
#include <linux/types.h>
#else
#include <sys/ioctl.h>
#include <linux/types.h>
#endif

#define CGPU_ABI_VERSION	1
#define CGPU_DEVICE_PATH	"/dev/cgpu"
#define CGPU_IOC_MAGIC		0xC6

/* Longest GPU count the module accepts as its ngpus parameter. */
#define CGPU_MAX_GPUS		16
/* Short container id as Docker prints it; the procfs directory name. */
#define CGPU_ID_LEN		12

/*
 * CGPU_IOC_ATTACH: bind this open file to the caller's container.
 * ENOENT: the caller is in no registered container (it is not limited).
 * EBUSY: this file is already attached.
 */
struct cgpu_attach {
	__u32 abi_version;		/* in: CGPU_ABI_VERSION */
	__u32 flags;			/* in: 0 */
	char  id[CGPU_ID_LEN + 4];	/* out: NUL-terminated short id */
	__u32 ngpus;			/* out: GPUs the container has an instance on */
	__u32 reserved;			/* out: 0 */
};

#define CGPU_QUERY_HIGHPRIO	(1u << 0)

/*
 * CGPU_IOC_QUERY: limits of the attached container's slot-th GPU
 * (slot 0..ngpus-1, in ascending host GPU index). ERANGE: slot out of range.
 */
struct cgpu_query {
	__u32 abi_version;		/* in */
	__u32 slot;			/* in */
	__u32 gpu;			/* out: host GPU index (the /proc/cgpu_km/<gpu> dir) */
	__u32 flags;			/* out: CGPU_QUERY_* */
	__u8  uuid[16];			/* out: GPU UUID given at registration, zeros if none */
	__u64 memsize;			/* out: bytes the container may hold on this GPU */
	__u64 used;			/* out: bytes the whole container holds on it now */
	__u32 weight;			/* out */
	__u32 reserved;			/* out: 0 */
};

/*
 * CGPU_IOC_CHARGE / CGPU_IOC_UNCHARGE: bytes on host GPU `gpu`, recorded
 * against this file (its opener's PID in meminfo) and released when the file
 * closes. CHARGE: ENOMEM past memsize, nothing changed. UNCHARGE: EINVAL for
 * more than this file holds on that GPU. ERANGE: gpu not the container's.
 */
struct cgpu_charge {
	__u32 abi_version;		/* in */
	__u32 gpu;			/* in: host GPU index */
	__u64 bytes;			/* in: > 0 */
	__u64 used;			/* out: container's total on this GPU afterwards */
	__u64 memsize;			/* out: container's limit on this GPU */
};

#define CGPU_IOC_NOP		_IO(CGPU_IOC_MAGIC, 0)	/* does nothing: a cost baseline */
#define CGPU_IOC_ATTACH		_IOWR(CGPU_IOC_MAGIC, 1, struct cgpu_attach)
#define CGPU_IOC_QUERY		_IOWR(CGPU_IOC_MAGIC, 2, struct cgpu_query)
#define CGPU_IOC_CHARGE		_IOWR(CGPU_IOC_MAGIC, 3, struct cgpu_charge)
#define CGPU_IOC_UNCHARGE	_IOWR(CGPU_IOC_MAGIC, 4, struct cgpu_charge)

#endif /* CGPU_IOCTL_H */
