/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Types, limits and result codes of cgpu_km's pure logic. The files under lib/ include
 * nothing but each other and uapi/cgpu_procfs.h (which includes nothing), so the same
 * objects build into the module and into the user-space unit tests and fuzz target; the
 * kernel glue maps cgpu_rc to errno.
 */
#ifndef CGPU_LIB_TYPES_H
#define CGPU_LIB_TYPES_H

/* The ranges and defaults user space checks too. */
#include "../uapi/cgpu_procfs.h"

typedef unsigned long long cgpu_u64;
typedef unsigned int cgpu_u32;
typedef unsigned char cgpu_u8;

enum cgpu_rc {
	CGPU_OK = 0,
	CGPU_RC_INVAL,	/* malformed or out of range */
	CGPU_RC_NOMEM,	/* the charge would pass memsize */
	CGPU_RC_NOSPC,	/* weight or instance count past max_inst */
	CGPU_RC_BUSY,	/* a limit below what is in use */
};

#define CGPU_UUID_BYTES		16
/* A module version in the upgrade node: 1..CGPU_VERSION_MAX of [0-9A-Za-z.+~_-]. */
#define CGPU_VERSION_MAX	32
#define CGPU_CMD_MAX_LEN	256	/* longer writes to the tree are refused unread */
#define CGPU_PID_MAX		4194304	/* the kernel's PID_MAX_LIMIT */
/*
 * Files attached to one instance at once (and processes with a part in its ledger):
 * every file costs kernel memory and a line of meminfo, and /dev/cgpu is open to all,
 * so a container may not attach more (EMFILE). A CUDA process attaches one or two.
 */
#define CGPU_INST_FILES_MAX	1024
/* Objects cgpu_km tracks on one driver file (nvhook.c): past it the file allocates no more. */
#define CGPU_FILE_OBJS_MAX	16384
/*
 * Channel groups and channels one container holds on one GPU at most, whatever
 * max_channels says: its files' tracked objects, which a hot update's state may carry.
 */
#define CGPU_CHANNELS_MAX	(CGPU_INST_FILES_MAX * CGPU_FILE_OBJS_MAX)

#endif
