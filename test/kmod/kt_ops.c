// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kt ops [-c CGROUP] OP...: one process working /dev/cgpu step by step, so shell
 * tests can put it in a cgroup, hold its charges and read meminfo meanwhile.
 *   open | close | attach | query SLOT | charge GPU SIZE | uncharge GPU SIZE |
 *   fill GPU STEP (charge STEP until refused) | ready | hold FILE (until FILE is gone) |
 *   handover (CGPU_IOC_HANDOVER) | pollpri MS (poll() for POLLPRI: OK, or ETIMEDOUT) |
 *   inststat GPU ID (CGPU_IOC_INST_STAT of instance ID, given as is, at most 16 bytes) |
 *   many N (open and attach N more files, kept open until exit, stopping at the first
 *   refusal: prints how many attached)
 * An op followed by =ERRNAME must fail with that errno; any other op must succeed.
 * Prints one line per op; exits 1 at the first op whose outcome was not the expected.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kt.h"

#define KT_MAX_FDS 16

struct ops {
	int fds[KT_MAX_FDS];
	int nfds;
	char **argv;
	int argc, i;
};

static const char *next_arg(struct ops *o, const char *op)
{
	if (o->i >= o->argc)
		kt_die("%s: missing argument", op);
	return o->argv[o->i++];
}

static int cur_fd(struct ops *o, const char *op)
{
	if (!o->nfds)
		kt_die("%s: no open file (use open)", op);
	return o->fds[o->nfds - 1];
}

static int op_charge(struct ops *o, const char *op, char *out, size_t len)
{
	uint32_t gpu = (uint32_t)kt_num(next_arg(o, op), UINT32_MAX + 1ULL);
	uint64_t bytes = kt_size(next_arg(o, op));
	unsigned long cmd = strcmp(op, "charge") ? CGPU_IOC_UNCHARGE : CGPU_IOC_CHARGE;
	struct cgpu_charge c;
	int err = kt_charge(cur_fd(o, op), cmd, gpu, bytes, &c);

	if (!err)
		snprintf(out, len, " used=%llu memsize=%llu", (unsigned long long)c.used,
			 (unsigned long long)c.memsize);
	return err;
}

static int op_fill(struct ops *o, const char *op, char *out, size_t len)
{
	uint32_t gpu = (uint32_t)kt_num(next_arg(o, op), UINT32_MAX + 1ULL);
	uint64_t step = kt_size(next_arg(o, op)), total = 0;
	struct cgpu_charge c;
	int err;

	while (!(err = kt_charge(cur_fd(o, op), CGPU_IOC_CHARGE, gpu, step, &c)))
		total += step;
	snprintf(out, len, " charged=%llu stop=%s", (unsigned long long)total, kt_errname(err));
	return err == ENOMEM ? 0 : err;
}

static int op_query(struct ops *o, const char *op, char *out, size_t len)
{
	uint32_t slot = (uint32_t)kt_num(next_arg(o, op), UINT32_MAX + 1ULL);
	struct cgpu_query q;
	char uuid[33];
	int err = kt_query(cur_fd(o, op), slot, &q);

	if (err)
		return err;
	for (int i = 0; i < 16; i++)
		snprintf(uuid + 2 * i, 3, "%02x", q.uuid[i]);
	snprintf(out, len, " gpu=%u memsize=%llu used=%llu weight=%u highprio=%u uuid=%s%s",
		 q.gpu, (unsigned long long)q.memsize, (unsigned long long)q.used, q.weight,
		 q.flags & CGPU_QUERY_HIGHPRIO ? 1 : 0, uuid,
		 q.flags & CGPU_QUERY_DRIVER_CHARGED ? " driver_charged" : "");
	return 0;
}

static int op_inststat(struct ops *o, const char *op, char *out, size_t len)
{
	struct cgpu_inst_stat a = { .abi_version = CGPU_ABI_VERSION };
	const struct cgpu_sched_stat *s = &a.sched;
	const char *id;

	a.gpu = (uint32_t)kt_num(next_arg(o, op), UINT32_MAX + 1ULL);
	id = next_arg(o, op);
	/* Longer ids fill the array without a NUL: the kernel must refuse them. */
	memcpy(a.id, id, strnlen(id, sizeof(a.id)));
	if (ioctl(cur_fd(o, op), CGPU_IOC_INST_STAT, &a) < 0)
		return errno;
	snprintf(out, len, " gpu=%u sched_id=%u policy=%u weight=%u waiting=%u holding=%u "
		 "quantum_ns=%llu charged_ns=%llu used_ns=%llu prio_ns=%llu grants=%llu "
		 "takebacks=%llu last_second_used_ns=%llu age_ns=%llu",
		 s->gpu, s->sched_id, s->policy, s->weight, s->waiting, s->holding,
		 (unsigned long long)s->quantum_ns, (unsigned long long)s->charged_ns,
		 (unsigned long long)s->used_ns, (unsigned long long)s->prio_ns,
		 (unsigned long long)s->grants, (unsigned long long)s->takebacks,
		 (unsigned long long)a.last_second_used_ns, (unsigned long long)a.age_ns);
	return 0;
}

static int op_many(struct ops *o, const char *op, char *out, size_t len)
{
	uint64_t n = kt_num(next_arg(o, op), 1000000), done = 0;
	struct rlimit rl = { .rlim_cur = n + 64, .rlim_max = n + 64 };
	struct cgpu_attach a;
	int fd, err = 0;

	/* Room for them all (as root); where the limit is higher already, it stays. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < n + 64) {
		rl.rlim_cur = rl.rlim_max = n + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	while (done < n && !(err = kt_open(&fd))) {
		err = kt_attach(fd, &a);
		if (err) {
			close(fd);
			break;
		}
		done++;
	}
	snprintf(out, len, " attached=%llu", (unsigned long long)done);
	return err;
}

static int run_op(struct ops *o, const char *op, char *out, size_t len)
{
	struct cgpu_attach a;
	struct stat st;
	int err;

	if (!strcmp(op, "open")) {
		if (o->nfds == KT_MAX_FDS)
			kt_die("open: too many files");
		err = kt_open(&o->fds[o->nfds]);
		o->nfds += !err;
		return err;
	}
	if (!strcmp(op, "close")) {
		int fd = cur_fd(o, op);

		o->nfds--;
		return close(fd) ? errno : 0;
	}
	if (!strcmp(op, "attach")) {
		err = kt_attach(cur_fd(o, op), &a);
		if (!err)
			snprintf(out, len, " id=%.12s ngpus=%u", a.id, a.ngpus);
		return err;
	}
	if (!strcmp(op, "query"))
		return op_query(o, op, out, len);
	if (!strcmp(op, "charge") || !strcmp(op, "uncharge"))
		return op_charge(o, op, out, len);
	if (!strcmp(op, "fill"))
		return op_fill(o, op, out, len);
	if (!strcmp(op, "inststat"))
		return op_inststat(o, op, out, len);
	if (!strcmp(op, "many"))
		return op_many(o, op, out, len);
	if (!strcmp(op, "handover"))
		return ioctl(cur_fd(o, op), CGPU_IOC_HANDOVER) < 0 ? errno : 0;
	if (!strcmp(op, "pollpri")) {
		struct pollfd p = { .fd = cur_fd(o, op), .events = POLLPRI };
		int n = poll(&p, 1, (int)kt_num(next_arg(o, op), 600001));

		if (n < 0)
			return errno;
		return n && (p.revents & POLLPRI) ? 0 : ETIMEDOUT;
	}
	if (!strcmp(op, "ready")) {
		snprintf(out, len, " pid=%d", getpid());
		return 0;
	}
	if (!strcmp(op, "hold")) {
		const char *file = next_arg(o, op);

		while (stat(file, &st) == 0)
			usleep(10000);
		return 0;
	}
	kt_die("unknown op '%s'", op);
}

int kt_ops(int argc, char **argv)
{
	struct ops o = { .argv = argv, .argc = argc, .i = 1 };
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.i + 1 < argc && !strcmp(argv[o.i], "-c")) {
		err = kt_join_cgroup(argv[o.i + 1]);
		if (err)
			kt_die("joining cgroup %s: %s", argv[o.i + 1], strerror(err));
		o.i += 2;
	}
	while (o.i < argc) {
		const char *op = argv[o.i++], *want = "OK";
		char out[512] = "";

		err = run_op(&o, op, out, sizeof(out));
		if (o.i < argc && argv[o.i][0] == '=')
			want = argv[o.i++] + 1;
		printf("%s %s%s\n", op, kt_errname(err), out);
		if (strcmp(want, kt_errname(err))) {
			printf("MISMATCH: %s wanted %s, got %s\n", op, want, kt_errname(err));
			return 1;
		}
	}
	return 0;
}
