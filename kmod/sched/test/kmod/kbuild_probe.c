// SPDX-License-Identifier: GPL-2.0
/*
 * Built by `make kbuild` only: links cgs.c into a throwaway module so the
 * kernel's own compiler flags (no FPU, no libc, -Werror) judge it.
 */
#include <linux/module.h>
#include "cgs.h"

static struct cgs probe;
static struct cgs_inst probe_slots[CGPU_MAX_INST_MAX];

static int __init cgs_probe_init(void)
{
	cgs_init(&probe, probe_slots, CGPU_MAX_INST_MAX, 0);
	return cgs_join(&probe, 0, 1, false, 0);
}

static void __exit cgs_probe_exit(void)
{
}

module_init(cgs_probe_init);
module_exit(cgs_probe_exit);
MODULE_LICENSE("GPL");
