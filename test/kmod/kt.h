/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* kt: the kernel suite's driver for /dev/cgpu, run inside the test VM. */
#ifndef KT_H
#define KT_H

#include <stdint.h>
#include "../../kmod/uapi/cgpu_ioctl.h"

#define KT_GIB (1ULL << 30)

/* Each returns 0 or the errno of the failed call. */
int kt_open(int *fd);
int kt_attach(int fd, struct cgpu_attach *a);
int kt_query(int fd, uint32_t slot, struct cgpu_query *q);
int kt_charge(int fd, unsigned long cmd, uint32_t gpu, uint64_t bytes, struct cgpu_charge *c);
int kt_join_cgroup(const char *dir);

const char *kt_errname(int e);
/* A size: decimal bytes, or with a K, M or G (binary) suffix. Exits on garbage. */
uint64_t kt_size(const char *s);
/* An unsigned decimal number below limit. Exits on garbage. */
uint64_t kt_num(const char *s, uint64_t limit);
void kt_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
uint64_t kt_now_ns(void);

int kt_ops(int argc, char **argv);
int kt_storm(int argc, char **argv);
int kt_badioctl(int argc, char **argv);
int kt_bench(int argc, char **argv);
int kt_write(int argc, char **argv);
int kt_sched(int argc, char **argv);

#endif
