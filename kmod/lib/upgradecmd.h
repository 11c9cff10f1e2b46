/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The /proc/cgpu_km/upgrade command language (docs/upgrade.md). One command per write:
 *   0 | 1                    whether unloading may delete instances (0: refused)
 *   freeze [to=<version>]    start a hot update on the running module (to the version
 *                            named, for the status), or abort it:
 *   thaw
 *   format <n>               the state format of the lines that follow (first)
 *   from <version>           the version of the module that wrote the state
 *   default_memsize <bytes>
 *   gpu <gpu> max_inst=<n> policy=<n> prio_ratio=<n>
 *   add <gpu> <id> ...       an instance, in inst_ctl's syntax
 *   bind <gpu> <id> <pid>    the instance's container: the cgroup of task pid now
 *   charge <gpu> <id> <pid> <bytes> [start=<ns>] [channels=<n>] [keep=1]   what a
 *                            process held (video memory; channel groups and channels,
 *                            counted for max_channels): a reservation only that process
 *                            (pid and start time) takes back; keep=1 (format 4): kept
 *                            until its instance is deleted, whoever holds what
 *   obj <gpu> <id> <pid> <bytes> client=<h> handle=<h> parent=<h> [grand=<h>] [start=<ns>]
 *                            (format 4) video memory of that process's charge, one
 *                            object alone under its handle: the charge gives its bytes
 *                            back once the driver frees the handle, its parent, its
 *                            parent's parent (grand) or its client
 *   obj <gpu> <id> <pid> <bytes> map=<h> [start=<ns>]   (format 5) memory of that
 *                            process's charge held by nvidia-uvm's duplicate h for a
 *                            mapping (named by the handle alone: nvidia-uvm has one
 *                            RM client): given back once nvidia-uvm frees it
 *   ... same=1               (format 5, on either obj) the same memory as the process's
 *                            obj line before it, with the same bytes: given back once
 *                            every line of it is
 *   commit                   the state is complete: processes may attach
 * A frozen module prints its state as exactly these lines, so the dump of the old
 * module is what the tool writes into the new one. Ranges that need no kernel state
 * are checked here; the module checks the rest.
 */
#ifndef CGPU_LIB_UPGRADECMD_H
#define CGPU_LIB_UPGRADECMD_H
#include "instctl.h"

enum cgpu_upd_op {
	CGPU_UPD_UNPIN = 1,
	CGPU_UPD_FREEZE,
	CGPU_UPD_THAW,
	CGPU_UPD_COMMIT,
	CGPU_UPD_FORMAT,
	CGPU_UPD_DEFAULT_MEMSIZE,
	CGPU_UPD_GPU,
	CGPU_UPD_ADD,
	CGPU_UPD_CHARGE,
	CGPU_UPD_FROM,
	CGPU_UPD_BIND,
	CGPU_UPD_OBJ,
};

struct cgpu_upd {
	enum cgpu_upd_op op;
	cgpu_u64 value;			/* UNPIN 0/1, FORMAT >= 1, DEFAULT_MEMSIZE bytes */
	cgpu_u64 gpu;			/* GPU, CHARGE, OBJ */
	cgpu_u32 max_inst, policy, prio_ratio;	/* GPU: each given exactly once */
	char id[CGPU_ID_LEN + 1];	/* CHARGE, OBJ */
	cgpu_u64 pid, bytes;		/* CHARGE, OBJ: 1..CGPU_PID_MAX, 0..CGPU_MAX_BYTES (OBJ: not 0) */
	cgpu_u64 start;			/* CHARGE, OBJ: the process's start time, 0: not given */
	cgpu_u64 channels;		/* CHARGE: 0..CGPU_CHANNELS_MAX; bytes or channels not 0 */
	cgpu_u64 keep;			/* CHARGE: 1: kept until its instance goes; 0: not given */
	cgpu_u64 client, handle, parent, grand;	/* OBJ: RM's handles, 1..2^32-1 (grand 0: none) */
	cgpu_u64 map;			/* OBJ: nvidia-uvm's duplicate (then no RM handles), 0: none */
	cgpu_u64 same;			/* OBJ: 1: the same memory as the process's obj line before */
	struct cgpu_cmd add;		/* ADD, BIND */
	char version[CGPU_VERSION_MAX + 1];	/* FREEZE (empty: not given), FROM */
};

/* Parses one command of len bytes (one trailing newline allowed); fills *u on success. */
enum cgpu_rc cgpu_parse_upgrade(const char *buf, unsigned long len, struct cgpu_upd *u);

#endif
