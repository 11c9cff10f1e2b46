/* SPDX-License-Identifier: MIT */
/*
 * Kernel mode's attachment to cgpu_km: the process's one /dev/cgpu file, the
 * module's QUERY answers for the container's GPUs and the status page, kept
 * across a hot update of the module (docs/upgrade.md, docs/libcgpu.md).
 */
#ifndef CGPU_LINK_H
#define CGPU_LINK_H

#include <stdint.h>

#include "cgpu_ioctl.h"

/* Attaches this process: 0; -ENOENT when it is in no registered container;
 * else -errno. While a hot update is under way it waits for it (bounded). */
int link_attach(void);
/* 0 when attached, attaching first in a fork child; -1 when it cannot. */
int link_ready(void);
void link_after_fork_child(void);

/* The container's GPUs (slots), as the module answered QUERY at attach. */
unsigned link_slots(void);
const struct cgpu_query *link_query(unsigned slot);

/* An ioctl on the attached file, -errno. During a hot update it waits for
 * the process to be attached again (bounded) and is made there; -EAGAIN if
 * that does not happen in time. */
int link_call(unsigned long req, void *arg);
/* UNCHARGE of bytes on slot, which never waits: during a hot update it is
 * kept and made once the process is attached again. */
int link_uncharge(unsigned slot, uint64_t bytes);

#endif
