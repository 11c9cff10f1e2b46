/* SPDX-License-Identifier: GPL-2.0 */
/* What each /proc/cgpu_km file is: name, mode and how it reads and writes. */
#ifndef CGPU_KM_NODES_H
#define CGPU_KM_NODES_H

#include <linux/types.h>
#include "cgpu.h"

struct cgpu_node_desc {
	const char *name;
	umode_t mode;
	/* Per-instance: a process in a container may read only its own container's. */
	bool inst_scoped;
	bool admin_only;	/* open: CAP_SYS_ADMIN in the initial user namespace */
	/* A number node has get (and set if writable); a text node has show (and write). */
	int (*get)(void *obj, u64 *v);
	int (*set)(void *obj, u64 v);
	int (*show)(struct seq_file *m, void *obj);
	int (*write)(void *obj, const char *buf, size_t len);
};

extern const struct cgpu_node_desc cgpu_top_nodes[CGPU_TOP_NODES];
extern const struct cgpu_node_desc cgpu_gpu_nodes[CGPU_GPU_NODES];
extern const struct cgpu_node_desc cgpu_inst_nodes[CGPU_INST_NODES];

#endif
