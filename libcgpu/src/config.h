/* SPDX-License-Identifier: MIT */
/*
 * The container's memory settings, read from the environment once (never on
 * a hot path). Rules of SPEC.md and docs/contracts.md section 1.
 */
#ifndef CGPU_CONFIG_H
#define CGPU_CONFIG_H

#include <stdint.h>

#define CGPU_LIST_MAX 16

struct cgpu_config {
	int disabled;		/* CGPU_DISABLE=true */
	int limited;		/* the environment sets a budget */
	int in_bytes;		/* list is CGPU_MEM_LIMIT_BYTES, not GiB */
	int n;			/* list length */
	uint64_t list[CGPU_LIST_MAX];
	uint64_t mem_dev;	/* ALIYUN_COM_GPU_MEM_DEV, GiB; 0: from the GPU */
	char error[160];	/* non-empty: malformed, enforce budget 0 */
};

/* getenv-like lookup, so tests can feed any environment. */
void cgpu_config_parse(struct cgpu_config *c,
		       const char *(*get)(const char *name));
/* Whether every GPU gets the same value (so list positions do not matter). */
int cgpu_config_uniform(const struct cgpu_config *c);
/* Bytes the container may hold on the GPU at list position pos (its index
 * among the container's GPUs) whose memory is total bytes. */
uint64_t cgpu_config_budget(const struct cgpu_config *c, int pos,
			    uint64_t total);

#endif
