/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The inst_ctl command language (docs/contracts.md):
 *   add <gpu> <id> [memsize=<bytes>] [weight=<n>] [highprio=0|1] [uuid=GPU-<uuid>]
 *   del <gpu> <id>
 *   bind <gpu> <id> <pid>
 * This parser checks syntax and the ranges that need no kernel state; the GPU's
 * existence and the weight against max_inst are the registry's to check.
 */
#ifndef CGPU_LIB_INSTCTL_H
#define CGPU_LIB_INSTCTL_H
#include "types.h"

enum cgpu_cmd_op { CGPU_CMD_ADD = 1, CGPU_CMD_DEL, CGPU_CMD_BIND };

enum cgpu_cmd_has {
	CGPU_HAS_MEMSIZE = 1u << 0,
	CGPU_HAS_WEIGHT = 1u << 1,
	CGPU_HAS_HIGHPRIO = 1u << 2,
	CGPU_HAS_UUID = 1u << 3,
};

struct cgpu_cmd {
	enum cgpu_cmd_op op;
	cgpu_u64 gpu;
	char id[CGPU_ID_LEN + 1];	/* NUL-terminated short id */
	cgpu_u32 has;			/* CGPU_HAS_* given in the command */
	cgpu_u64 memsize;		/* 1..CGPU_MAX_BYTES */
	cgpu_u64 weight;
	cgpu_u32 highprio;		/* 0 or 1 */
	cgpu_u8 uuid[CGPU_UUID_BYTES];
	cgpu_u64 pid;			/* BIND: 1..CGPU_PID_MAX */
};

/* Parses one command of len bytes (one trailing newline allowed); fills *cmd on success. */
enum cgpu_rc cgpu_parse_cmd(const char *buf, unsigned long len, struct cgpu_cmd *cmd);

/* "GPU-" then 8-4-4-4-12 hex digits, either case, exactly len bytes. */
enum cgpu_rc cgpu_parse_gpu_uuid(const char *s, unsigned long len, cgpu_u8 out[CGPU_UUID_BYTES]);

/* 12..64 lowercase hex digits, exactly len bytes; copies the first 12 and a NUL. */
enum cgpu_rc cgpu_parse_container_id(const char *s, unsigned long len,
				     char out[CGPU_ID_LEN + 1]);

#endif
