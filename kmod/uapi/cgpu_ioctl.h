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
 * Fields once reserved (out: 0) may be given a meaning without a new number:
 * an old caller ignores them (QUERY's sched_id, module 0.2.0). A new call is a
 * new number in the same version (HANDOVER); a module answers ENOTTY for a
 * number it does not know. Which ABI versions a module serves is in its
 * modinfo (cgpu_abi) and in /proc/cgpu_km/upgrade.
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
#include "cgpu_procfs.h"	/* CGPU_ID_LEN, the policy numbers */

#define CGPU_ABI_VERSION	1
#define CGPU_DEVICE_PATH	"/dev/cgpu"
#define CGPU_IOC_MAGIC		0xC6

/* Longest GPU count the module accepts as its ngpus parameter. */
#define CGPU_MAX_GPUS		16

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
 * cgpu_km charges this container's allocations at the NVIDIA driver's ioctl entry
 * (enforce=1, attached): what the process allocates is charged there, so libcgpu
 * charges nothing itself (it would count every byte twice). A module that does not
 * know this flag never sets it, and libcgpu then charges, as before.
 */
#define CGPU_QUERY_DRIVER_CHARGED	(1u << 1)

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
	__u32 sched_id;			/* out: the instance's id in the compute scheduler of
					 * this GPU (never 0); 0 from a module before 0.2.0 */
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

/*
 * Compute slices (docs/scheduler.md). One container at a time holds each GPU
 * and only it submits work, until its deadline; then its processes stop
 * submitting, let their queued work drain and end their part of the slice, and
 * the next container is chosen. Under policy 5 every container with a weight
 * may submit at any time.
 *
 * The status page: mmap(NULL, CGPU_STATUS_SIZE, PROT_READ, MAP_SHARED, fd, 0)
 * on an attached file (ENOTCONN before ATTACH; EACCES for a writable
 * mapping, EINVAL for another offset or a longer length). The kernel keeps it
 * current; a process may submit to GPU g while
 *	status->gpu[g].go == the go word its SLICE_WAIT returned,
 * which costs one load and no system call. go is 0 while nobody may submit.
 * A reader that wants several fields consistent uses seq: read it (retry
 * while odd), read the fields, read it again and retry if it moved.
 */
#define CGPU_STATUS_SIZE	4096
/* go = (hold << 32) | sched id; under policy 5 the id part is this. */
#define CGPU_SCHED_ID_OPEN	0xffffffffu

struct cgpu_sched_status {
	__u32 seq;			/* odd while the kernel updates this entry */
	__u32 policy;			/* 0..5 */
	__u64 go;			/* see above */
	__u64 deadline;			/* CLOCK_MONOTONIC ns: the holder's slice ends */
	__u64 gen;			/* moves whenever holder or deadline change */
	__u32 holder;			/* sched id of the holder until it releases; 0: none */
	__u32 open;			/* 1 under policy 5: no slicing */
	__u32 reserved[6];
};

/* flags of the status page */
#define CGPU_STATUS_HANDOVER	(1u << 0)	/* the module does hot updates (below) */

struct cgpu_status_page {
	__u32 abi_version;		/* CGPU_ABI_VERSION */
	__u32 ngpus;			/* entries in use in gpu[] */
	__u32 flags;			/* CGPU_STATUS_*; 0 from a module without hot updates */
	__u32 upgrade;			/* 1 while a hot update waits for this file */
	__u32 reserved[12];
	struct cgpu_sched_status gpu[CGPU_MAX_GPUS];	/* by host GPU index */
};

/* flags of struct cgpu_slice */
#define CGPU_SLICE_MORE		(1u << 0)	/* in, END: this process has more work */
#define CGPU_SLICE_STALE	(1u << 1)	/* out, END: the slice had been taken back */
#define CGPU_SLICE_TIMEOUT_MAX_MS	10000u

/*
 * CGPU_IOC_SLICE_WAIT: sleep until the container may submit to host GPU gpu,
 * at most timeout_ms (1..CGPU_SLICE_TIMEOUT_MAX_MS); the file takes part in
 * the slice from then on (out: go, deadline). ETIMEDOUT: still waiting, call
 * again. EINTR (or a restart): a signal came; the file no longer waits.
 * A file that took part in the current slice and calls WAIT after its
 * deadline has ended its part (used 0). One WAIT at a time per file and GPU
 * (EBUSY). ENOENT: the instance was deleted.
 *
 * CGPU_IOC_SLICE_END: this file's work of the slice named by go has drained:
 * used_ns is the GPU time it took, flags CGPU_SLICE_MORE if it has more.
 * When every file of the container that took part has ended, the slice
 * passes on. Out: CGPU_SLICE_STALE when that slice was no longer current
 * (taken back after the grace period, or the file never took part).
 *
 * CGPU_IOC_SLICE_WATCH: sleep until status->gpu[gpu].go differs from go, at
 * most timeout_ms; out: the current go and deadline. ETIMEDOUT, EINTR as WAIT.
 *
 * A file that closes (exit, SIGKILL) ends its part and stops waiting. A
 * container that does not end its slice within the grace period after the
 * deadline loses it (counted in takebacks) and the others go on.
 */
struct cgpu_slice {
	__u32 abi_version;		/* in */
	__u32 gpu;			/* in: host GPU index; ERANGE if not the container's */
	__u32 flags;			/* in/out: CGPU_SLICE_* */
	__u32 timeout_ms;		/* in: WAIT, WATCH */
	__u64 go;			/* out: WAIT, WATCH; in: END, WATCH */
	__u64 deadline;			/* out: WAIT, WATCH */
	__u64 used_ns;			/* in: END */
};

/*
 * CGPU_IOC_SCHED_STAT: the scheduler's view of the attached container's
 * slot-th GPU (as QUERY's slot). Times in ns since the instance was added.
 */
struct cgpu_sched_stat {
	__u32 abi_version;		/* in */
	__u32 slot;			/* in */
	__u32 gpu;			/* out */
	__u32 sched_id;			/* out */
	__u32 policy;			/* out */
	__u32 weight;			/* out */
	__u32 waiting;			/* out: files of the container waiting for a slice */
	__u32 holding;			/* out: files taking part in its current slice */
	__u64 quantum_ns;		/* out: slice length */
	__u64 grace_ns;			/* out: how long past its deadline a slice may drain */
	__u64 charged_ns;		/* out: time held, drains included */
	__u64 used_ns;			/* out: GPU time its processes reported */
	__u64 prio_ns;			/* out: part of charged_ns held as high priority */
	__u64 grants;			/* out: slices granted */
	__u64 takebacks;		/* out: slices taken back after the grace period */
};

/*
 * CGPU_IOC_INST_STAT: the scheduler's figures of any instance, for the host's
 * monitoring (docker cgpu stat): on any open file, attached or not, for a
 * caller with CAP_SYS_ADMIN in the initial user namespace (EPERM otherwise,
 * also when the file was opened by one without). ENODEV: no such GPU.
 * EINVAL: id is not 12 lowercase hex digits and a NUL. ENOENT: no such
 * instance on that GPU. sched is filled as SCHED_STAT fills it (its
 * abi_version is CGPU_ABI_VERSION, its slot 0). A module older than this ioctl answers ENOTTY.
 */
struct cgpu_inst_stat {
	__u32 abi_version;		/* in */
	__u32 gpu;			/* in: host GPU index */
	char  id[CGPU_ID_LEN + 4];	/* in: the instance's short id, NUL-terminated */
	struct cgpu_sched_stat sched;	/* out */
	__u64 last_second_used_ns;	/* out: used_ns reported in the last complete
					 * second of CLOCK_MONOTONIC (a slice counts in
					 * the second it ended in, whole) */
	__u64 age_ns;			/* out: since the instance was added */
};

/*
 * Hot update (a module with CGPU_STATUS_HANDOVER). When an operator freezes the
 * module to replace it, the status page's upgrade turns 1 and poll() on the
 * file reports POLLPRI; from then on open, ATTACH, CHARGE, UNCHARGE,
 * SLICE_WAIT and SLICE_WATCH answer EAGAIN and change nothing, and every GPU's
 * go word is 0. An attached process then calls
 *
 * CGPU_IOC_HANDOVER: what this file holds is kept for the process (a
 * reservation, still counted in the container's use) and the file holds
 * nothing any more. The process closes the file and drops its mapping of the
 * status page, then opens /dev/cgpu again until ATTACH succeeds (EAGAIN, or no
 * device for a moment, while the update runs): that ATTACH, from the same
 * process (thread group), takes the reservation back, on the new module or on
 * the old one if the update was called off. A reservation nobody takes back
 * is released some seconds after the update (the module's reclaim_s).
 * EALREADY: no update is waiting (it was called off before the call): keep
 * the file, nothing changed.
 */
#define CGPU_IOC_NOP		_IO(CGPU_IOC_MAGIC, 0)	/* does nothing: a cost baseline */
#define CGPU_IOC_ATTACH		_IOWR(CGPU_IOC_MAGIC, 1, struct cgpu_attach)
#define CGPU_IOC_QUERY		_IOWR(CGPU_IOC_MAGIC, 2, struct cgpu_query)
#define CGPU_IOC_CHARGE		_IOWR(CGPU_IOC_MAGIC, 3, struct cgpu_charge)
#define CGPU_IOC_UNCHARGE	_IOWR(CGPU_IOC_MAGIC, 4, struct cgpu_charge)
#define CGPU_IOC_SLICE_WAIT	_IOWR(CGPU_IOC_MAGIC, 5, struct cgpu_slice)
#define CGPU_IOC_SLICE_END	_IOWR(CGPU_IOC_MAGIC, 6, struct cgpu_slice)
#define CGPU_IOC_SLICE_WATCH	_IOWR(CGPU_IOC_MAGIC, 7, struct cgpu_slice)
#define CGPU_IOC_SCHED_STAT	_IOWR(CGPU_IOC_MAGIC, 8, struct cgpu_sched_stat)
#define CGPU_IOC_HANDOVER	_IO(CGPU_IOC_MAGIC, 9)
#define CGPU_IOC_INST_STAT	_IOWR(CGPU_IOC_MAGIC, 10, struct cgpu_inst_stat)

#endif /* CGPU_IOCTL_H */
