/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The /proc/cgpu_km tree's ranges, defaults and policy numbers (docs/contracts.md §2):
 * what the module refuses and what user space checks before writing. It includes
 * nothing, so the module's pure logic (lib/, sched/) builds on it in user space too;
 * pkg/uapi is generated from it.
 */
#ifndef CGPU_PROCFS_H
#define CGPU_PROCFS_H

/* Short container id as Docker prints it; the procfs directory name. */
#define CGPU_ID_LEN		12
#define CGPU_FULL_ID_LEN	64	/* a Docker container id in hex */
#define CGPU_MAX_BYTES		0x7fffffffffffffffULL	/* sizes travel as signed 64 in Go */

#define CGPU_MAX_INST_MIN	1u
#define CGPU_MAX_INST_MAX	25u
#define CGPU_MAX_INST_DEFAULT	16u
/* The weight of an instance added without one, while the GPU has weight free. */
#define CGPU_WEIGHT_DEFAULT	1u

/* The scheduling policies, docs/scheduler.md. */
#define CGPU_POLICY_FAIR	0u	/* 1/max_inst each, busy or not */
#define CGPU_POLICY_PREEMPT	1u	/* idle skipped, N busy share 1/N */
#define CGPU_POLICY_WEIGHT	2u	/* weight shares, idle instances keep theirs */
#define CGPU_POLICY_FIXED	3u	/* weight/max_inst each, a hard cap */
#define CGPU_POLICY_SOFT	4u	/* weight shares among busy, idle time lent */
#define CGPU_POLICY_NATIVE	5u	/* no slicing */
#define CGPU_POLICY_MAX		CGPU_POLICY_NATIVE
#define CGPU_POLICY_DEFAULT	CGPU_POLICY_PREEMPT

#define CGPU_PRIO_RATIO_MIN	20u
#define CGPU_PRIO_RATIO_MAX	99u
#define CGPU_PRIO_RATIO_DEFAULT	30u

#endif /* CGPU_PROCFS_H */
