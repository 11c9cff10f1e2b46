// SPDX-License-Identifier: GPL-2.0
/*
 * The module's shared state (cgpu.h). Every file reads it, so it is defined in a file
 * of its own at the bottom of the layers (docs/kmod.md) rather than in main.c at the top.
 */
#include "cgpu.h"

struct cgpu_km cgpu = {
	.ctl_mutex = __MUTEX_INITIALIZER(cgpu.ctl_mutex),
	.reg_lock = __MUTEX_INITIALIZER(cgpu.reg_lock),
};
