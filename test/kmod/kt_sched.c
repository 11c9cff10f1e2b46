// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kt sched [-c CGROUP] OP ...: the compute scheduler's ioctls and status page, from
 * a process inside a container (its cgroup). The GPU is not touched: a slice is
 * "used" by sleeping through it, so the kernel's decisions can be timed alone.
 *
 *   slice GPU SECONDS DRAIN_US  the ideal client: wait for a slice, hold it until the
 *                               status page ends it (renewals included), "drain" for
 *                               DRAIN_US, end it with more work, again until SECONDS
 *                               are over; prints held_ns, slices, waited_ns and the
 *                               status-page checks that failed (bad=), and its
 *                               own wall time
 *   hold GPU                    take one slice and never end it; prints "holding"
 *                               then sleeps until killed
 *   wait GPU [TIMEOUT_MS]       one SLICE_WAIT (default 10000 ms); prints its errno,
 *                               how long it took and how long another holder's slice
 *                               had left when it began (left_ms, -1 if none)
 *   stat                        SCHED_STAT of slot 0 as key=value
 *   page GPU                    the status page's entry for GPU as key=value
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "kt.h"

struct client {
	int fd;
	uint32_t id;
	const volatile struct cgpu_status_page *page;
};

static void setup(struct client *c)
{
	struct cgpu_attach a;
	struct cgpu_query q;
	void *p;

	if (kt_open(&c->fd) || kt_attach(c->fd, &a) || kt_query(c->fd, 0, &q))
		kt_die("open, attach or query failed: %s", strerror(errno));
	c->id = q.sched_id;
	p = mmap(NULL, CGPU_STATUS_SIZE, PROT_READ, MAP_SHARED, c->fd, 0);
	if (p == MAP_FAILED)
		kt_die("mmap of the status page: %s", strerror(errno));
	c->page = p;
}

static int slice_call(int fd, unsigned long cmd, struct cgpu_slice *s)
{
	s->abi_version = CGPU_ABI_VERSION;
	return ioctl(fd, cmd, s) < 0 ? errno : 0;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int op_slice(struct client *c, uint32_t gpu, uint64_t seconds, uint64_t drain_us)
{
	const volatile struct cgpu_sched_status *st = &c->page->gpu[gpu];
	uint64_t start = kt_now_ns(), end = start + seconds * 1000000000ULL;
	uint64_t held = 0, waited = 0, slices = 0, stale = 0, bad = 0;

	while (kt_now_ns() < end) {
		struct cgpu_slice s = { .gpu = gpu, .timeout_ms = 1000 };
		uint64_t t0 = kt_now_ns(), granted, go;
		int err = slice_call(c->fd, CGPU_IOC_SLICE_WAIT, &s);

		if (err == ETIMEDOUT)
			continue;
		if (err)
			kt_die("SLICE_WAIT: %s", kt_errname(err));
		granted = kt_now_ns();
		waited += granted - t0;
		slices++;
		go = s.go;
		/* The fast path's condition holds for a fresh grant, and names us. */
		if (!st->open && granted < s.deadline && (st->go != go || (uint32_t)go != c->id)) {
			printf("bad: granted go=%llx, page go=%llx, my id %u\n",
			       (unsigned long long)go, (unsigned long long)st->go, c->id);
			bad++;
		}
		do {
			s.go = go;
			s.timeout_ms = 1000;
			err = slice_call(c->fd, CGPU_IOC_SLICE_WATCH, &s);
		} while (err == ETIMEDOUT && kt_now_ns() < end);
		if (err && err != ETIMEDOUT)
			kt_die("SLICE_WATCH: %s", kt_errname(err));
		/* Only the timer at the deadline (or a take-back after it) ends a slice here. */
		if (!err && st->holder == c->id && kt_now_ns() < s.deadline) {
			printf("bad: slice ended %lld ns before its deadline\n",
			       (long long)(s.deadline - kt_now_ns()));
			bad++;
		}
		sleep_until(kt_now_ns() + drain_us * 1000);
		s.go = go;
		s.flags = CGPU_SLICE_MORE;
		s.used_ns = kt_now_ns() - granted;
		err = slice_call(c->fd, CGPU_IOC_SLICE_END, &s);
		if (err)
			kt_die("SLICE_END: %s", kt_errname(err));
		stale += !!(s.flags & CGPU_SLICE_STALE);
		held += kt_now_ns() - granted;
	}
	printf("wall_ns=%llu held_ns=%llu slices=%llu waited_ns=%llu stale=%llu bad=%llu\n",
	       (unsigned long long)(kt_now_ns() - start), (unsigned long long)held,
	       (unsigned long long)slices, (unsigned long long)waited,
	       (unsigned long long)stale, (unsigned long long)bad);
	return bad ? 1 : 0;
}

static int op_hold(struct client *c, uint32_t gpu)
{
	struct cgpu_slice s = { .gpu = gpu, .timeout_ms = 10000 };
	int err;

	while ((err = slice_call(c->fd, CGPU_IOC_SLICE_WAIT, &s)) == ETIMEDOUT)
		;
	if (err)
		kt_die("SLICE_WAIT: %s", kt_errname(err));
	printf("holding pid=%d go=%llx\n", getpid(), (unsigned long long)s.go);
	for (;;)
		pause();
}

static int op_stat(struct client *c)
{
	struct cgpu_sched_stat s = { .abi_version = CGPU_ABI_VERSION };

	if (ioctl(c->fd, CGPU_IOC_SCHED_STAT, &s) < 0)
		kt_die("SCHED_STAT: %s", kt_errname(errno));
	printf("gpu=%u sched_id=%u policy=%u weight=%u waiting=%u holding=%u quantum_ns=%llu "
	       "grace_ns=%llu charged_ns=%llu used_ns=%llu prio_ns=%llu grants=%llu takebacks=%llu\n",
	       s.gpu, s.sched_id, s.policy, s.weight, s.waiting, s.holding,
	       (unsigned long long)s.quantum_ns, (unsigned long long)s.grace_ns,
	       (unsigned long long)s.charged_ns, (unsigned long long)s.used_ns,
	       (unsigned long long)s.prio_ns, (unsigned long long)s.grants,
	       (unsigned long long)s.takebacks);
	return 0;
}

static int op_page(struct client *c, uint32_t gpu)
{
	const volatile struct cgpu_sched_status *st = &c->page->gpu[gpu];
	struct cgpu_sched_status v;
	uint32_t seq;

	do {
		while ((seq = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE)) & 1)
			;
		memcpy(&v, (const void *)st, sizeof(v));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (st->seq != seq);
	printf("abi=%u ngpus=%u my_id=%u policy=%u open=%u holder=%u go=%llx gen=%llu\n",
	       c->page->abi_version, c->page->ngpus, c->id, v.policy, v.open, v.holder,
	       (unsigned long long)v.go, (unsigned long long)v.gen);
	return 0;
}

int kt_sched(int argc, char **argv)
{
	struct client c;
	const char *op;
	int i = 1, err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (i + 1 < argc && !strcmp(argv[i], "-c")) {
		err = kt_join_cgroup(argv[i + 1]);
		if (err)
			kt_die("joining cgroup %s: %s", argv[i + 1], strerror(err));
		i += 2;
	}
	if (i >= argc)
		kt_die("sched: which op?");
	op = argv[i++];
	setup(&c);
	if (!strcmp(op, "slice") && argc - i == 3)
		return op_slice(&c, (uint32_t)kt_num(argv[i], CGPU_MAX_GPUS),
				kt_num(argv[i + 1], 3600), kt_num(argv[i + 2], 1000000));
	if (!strcmp(op, "hold") && argc - i == 1)
		return op_hold(&c, (uint32_t)kt_num(argv[i], CGPU_MAX_GPUS));
	if (!strcmp(op, "wait") && (argc - i == 1 || argc - i == 2)) {
		struct cgpu_slice s = {
			.gpu = (uint32_t)kt_num(argv[i], CGPU_MAX_GPUS),
			.timeout_ms = argc - i == 2 ? (uint32_t)kt_num(argv[i + 1], 10001) : 10000,
		};

		const volatile struct cgpu_sched_status *st = &c.page->gpu[s.gpu];
		uint64_t t0 = kt_now_ns(), deadline = st->deadline;
		uint32_t holder = st->holder;
		int err = slice_call(c.fd, CGPU_IOC_SLICE_WAIT, &s);

		printf("wait %s ms=%llu left_ms=%lld\n", kt_errname(err),
		       (unsigned long long)((kt_now_ns() - t0) / 1000000),
		       holder && holder != c.id ? (long long)(deadline - t0) / 1000000 : -1LL);
		return 0;
	}
	if (!strcmp(op, "stat") && argc == i)
		return op_stat(&c);
	if (!strcmp(op, "page") && argc - i == 1)
		return op_page(&c, (uint32_t)kt_num(argv[i], CGPU_MAX_GPUS));
	kt_die("sched: bad op or arguments");
}
