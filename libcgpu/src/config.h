/* SPDX-License-Identifier: MIT */
/*
 * The process's settings, read from the environment once (never on a hot
 * path): CGPU_DISABLE and CGPU_MEM_LIMIT_BYTES, the bytes per GPU the runtime
 * decided (docs/contracts.md sections 1 and 6). The ALIYUN_* variables are
 * the runtime's to read: libcgpu does not scale GiB.
 */
#ifndef CGPU_CONFIG_H
#define CGPU_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "cgpu_ioctl.h"

/* One entry per GPU the module can keep; pkg/alloc's maxListItems. */
#define CGPU_LIST_MAX CGPU_MAX_GPUS
/* The kernel's memsize range ends here (docs/contracts.md section 2). */
#define CGPU_BYTES_MAX 9223372036854775807ULL

struct cgpu_config {
	int disabled;		/* CGPU_DISABLE is true */
	int n;			/* list length; 0: no budget */
	uint64_t list[CGPU_LIST_MAX];
	char error[256];	/* non-empty: malformed, enforce budget 0 */
};

/* getenv-like lookup, so tests can feed any environment. */
void cgpu_config_parse(struct cgpu_config *c,
		       const char *(*get)(const char *name));
/* Whether every GPU gets the same value (so list positions do not matter). */
int cgpu_config_uniform(const struct cgpu_config *c);
/* Bytes the container may hold on the GPU at list position pos (its index
 * among the container's GPUs); past the end the last value repeats. */
uint64_t cgpu_config_budget(const struct cgpu_config *c, int pos);

/*
 * The value rules, exactly as pkg/alloc/parse.go has them, with its reasons
 * (pkg/alloc/testdata/parse-cases.txt holds both to one table). Each returns
 * 0, or -1 with the reason in why.
 */
int cgpu_parse_bool(const char *s, int *out, char *why, size_t whylen);
/* s[0..len): a decimal number of min..max. */
int cgpu_parse_whole(const char *s, size_t len, uint64_t min, uint64_t max,
		     uint64_t *out, char *why, size_t whylen);
/* At most CGPU_LIST_MAX numbers of 0..max; *n = 0 when empty or any is 0
 * (off). */
int cgpu_parse_list(const char *s, uint64_t max, uint64_t list[CGPU_LIST_MAX],
		    int *n, char *why, size_t whylen);

#endif
