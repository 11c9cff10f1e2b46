// SPDX-License-Identifier: MIT
/*
 * The attachment to cgpu_km (link.h), and how it survives a hot update.
 *
 * Every ioctl runs under the read side of one lock whose write side only the
 * watcher takes, to change the file: no call ever reaches a closed (or
 * reused) descriptor. The watcher, a thread started at the first attach to a
 * module that does hot updates (all signals blocked), sleeps in poll() on the
 * file. When the module freezes for an update, it
 *   - hands the process's charges over (HANDOVER: they stay counted, as the
 *     process's reservation) and closes the file, after replacing the status
 *     page's mapping in place by an empty page: the gate's fast path reads
 *     "no slice" from it and never faults;
 *   - opens /dev/cgpu until ATTACH succeeds, on the new module or on the old
 *     one if the update was called off, which gives the reservation back;
 *   - maps the new status page at the same address, makes the uncharges that
 *     came meanwhile, and lets the calls that waited go on, on the new file.
 * Meanwhile charges, queries and slice calls wait for it (WAIT_S at most;
 * then memory is refused and gating stops), and uncharges are kept.
 */
#define _GNU_SOURCE
#include "link.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hook.h"
#include "gate.h"

/* How long a call waits for the process to be attached again. */
#define WAIT_S 60
/* How long the watcher tries to attach again before it gives up. */
#define REATTACH_S 120

/* Writer-preferring: a stream of calls must not keep the watcher out. */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static int kfd = -1;				/* rw */
static unsigned kn;				/* fixed once attached */
static struct cgpu_query kq[CGPU_MAX_GPUS];	/* fixed once attached */
static void *page;				/* the status page's mapping */

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;			/* gen moved or lost was set */
static pthread_once_t cv_once = PTHREAD_ONCE_INIT;
static unsigned gen;				/* m, and rw written: each re-attach */
static int lost;				/* m: no module took the process back */
static uint64_t pending[CGPU_MAX_GPUS];	/* m: uncharges kept, by slot */
static int kick_fd = -1;			/* eventfd: a call met a frozen module */
static int watching;

static int said_lost, said_pending, said_page;

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

static void init_cv(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &a);
	pthread_condattr_destroy(&a);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* One try: an attached file and its QUERY answers, or -errno (*opened: of ATTACH). */
static int try_attach(int *fdp, struct cgpu_query *q, unsigned *n, int *opened)
{
	struct cgpu_attach a = { .abi_version = CGPU_ABI_VERSION };
	int fd = open(CGPU_DEVICE_PATH, O_RDWR | O_CLOEXEC), err;

	*opened = fd >= 0;
	if (fd < 0)
		return -errno;
	err = xioctl(fd, CGPU_IOC_ATTACH, &a);
	*n = a.ngpus < CGPU_MAX_GPUS ? a.ngpus : CGPU_MAX_GPUS;
	for (unsigned i = 0; !err && i < *n; i++) {
		memset(&q[i], 0, sizeof(q[i]));
		q[i].abi_version = CGPU_ABI_VERSION;
		q[i].slot = i;
		err = xioctl(fd, CGPU_IOC_QUERY, &q[i]);
	}
	if (err) {
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}

/*
 * The module is being replaced: it said so (EAGAIN), or no module answers the
 * device for a moment: in a container the node stays (ENXIO), on the host it
 * goes with the old module (ENOENT from open, which otherwise means there is
 * no module at all: only retried when the process knows an update runs).
 */
static int update_under_way(int err, int opened, int updating)
{
	return err == -EAGAIN || (!opened && (err == -ENXIO || (updating && err == -ENOENT)));
}

/* try_attach until it succeeds or the update takes longer than secs. */
static int attach_until(int secs, int updating, int *fd, struct cgpu_query *q, unsigned *n)
{
	time_t end = now_s() + secs;
	long ms = 10;
	int err, opened;

	while ((err = try_attach(fd, q, n, &opened)) && update_under_way(err, opened, updating) &&
	       now_s() < end) {
		sleep_ms(ms);
		ms = ms < 100 ? ms * 2 : 100;
	}
	return err;
}

static void kick(void)
{
	uint64_t one = 1;

	if (kick_fd >= 0 && write(kick_fd, &one, sizeof(one)) < 0)
		return;	/* the counter is full: the watcher is woken already */
}

/* Uncharges kept during the update, made on fd. rw written, m held. */
static void flush_pending(int fd)
{
	for (unsigned i = 0; i < kn; i++) {
		struct cgpu_charge c = { .abi_version = CGPU_ABI_VERSION,
					 .gpu = kq[i].gpu, .bytes = pending[i] };

		if (pending[i] && xioctl(fd, CGPU_IOC_UNCHARGE, &c))
			cgpu_say_once(&said_pending,
				      "cgpu: %s: an uncharge kept during the module's update was refused",
				      CGPU_DEVICE_PATH);
		pending[i] = 0;
	}
}

/* The same GPUs, in the same order, as before the update. */
static int same_gpus(const struct cgpu_query *q, unsigned n)
{
	if (n != kn)
		return 0;
	for (unsigned i = 0; i < n; i++)
		if (q[i].gpu != kq[i].gpu || memcmp(q[i].uuid, kq[i].uuid, 16))
			return 0;
	return 1;
}

/*
 * rw written. The old module's page goes, replaced in one step, so the fast
 * path reads zeros from then on. Should that fail, the old mapping keeps the
 * old module's file open and the update is called off (its timeout).
 */
static void blank_page(void)
{
	if (page && mmap(page, CGPU_STATUS_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED, -1, 0) == MAP_FAILED)
		cgpu_say_once(&said_page, "cgpu: cannot let go of the status page (%s)",
			      strerror(errno));
}

static void give_back_lock(int fd, int attached)
{
	pthread_mutex_lock(&m);
	if (attached) {
		flush_pending(fd);
		__atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
	} else {
		lost = 1;
	}
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
	pthread_rwlock_unlock(&rw);
}

/* The module froze (or a call met it frozen): hand over, attach again. */
static void relink(void)
{
	struct cgpu_query q[CGPU_MAX_GPUS];
	unsigned n;
	int fd, err;

	pthread_rwlock_wrlock(&rw);
	err = xioctl(kfd, CGPU_IOC_HANDOVER, NULL);
	if (err) {
		/* EALREADY: called off before we looked; the file is still ours. */
		give_back_lock(kfd, 1);
		if (err != -EALREADY)
			sleep_ms(10);	/* no busy loop while the module refuses */
		return;
	}
	gate_suspend();
	blank_page();
	close(kfd);
	kfd = -1;
	pthread_rwlock_unlock(&rw);

	err = attach_until(REATTACH_S, 1, &fd, q, &n);
	pthread_rwlock_wrlock(&rw);
	if (!err && !same_gpus(q, n)) {
		close(fd);
		err = -ENODEV;
	}
	if (err) {
		cgpu_say_once(&said_lost,
			      "cgpu: cgpu_km was replaced and this container is not back (%s); GPU memory is refused",
			      strerror(-err));
		gate_stop();
		give_back_lock(-1, 0);
		return;
	}
	kfd = fd;
	if (page && mmap(page, CGPU_STATUS_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) ==
		    MAP_FAILED) {
		cgpu_say_once(&said_page, "cgpu: %s: cannot map the new status page (%s); GPU work is not gated",
			      CGPU_DEVICE_PATH, strerror(errno));
		gate_stop();
	} else {
		gate_relink(q, n);
	}
	give_back_lock(fd, 1);
}

static void *watcher(void *arg)
{
	struct pollfd p[2];
	uint64_t v;
	int dead;

	(void)arg;
	for (;;) {
		p[0] = (struct pollfd){ .fd = kfd, .events = POLLPRI };
		p[1] = (struct pollfd){ .fd = kick_fd, .events = POLLIN };
		if (poll(p, 2, -1) < 0)
			continue;
		if ((p[1].revents & POLLIN) && read(kick_fd, &v, sizeof(v)) < 0)
			continue;
		if (p[0].revents & POLLPRI || p[1].revents & POLLIN)
			relink();
		pthread_mutex_lock(&m);
		dead = lost;
		pthread_mutex_unlock(&m);
		if (dead)
			return NULL;
	}
}

static void start_watcher(void)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t t;

	kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (kick_fd < 0)
		return;
	sigfillset(&all);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	watching = !pthread_create(&t, &a, watcher, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
}

int link_attach(void)
{
	const struct cgpu_status_page *p;
	int fd, err;

	pthread_once(&cv_once, init_cv);
	err = attach_until(WAIT_S, 0, &fd, kq, &kn);
	if (err)
		return err;
	page = mmap(NULL, CGPU_STATUS_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (page == MAP_FAILED)
		page = NULL;
	p = page;
	__atomic_store_n(&kfd, fd, __ATOMIC_RELEASE);
	gate_init(p, kq, kn);
	if (p && (p->flags & CGPU_STATUS_HANDOVER))
		start_watcher();
	return 0;
}

/*
 * A fork child has neither its parent's file (closed), nor its mapping (the
 * kernel does not copy it), nor the watcher.
 */
void link_after_fork_child(void)
{
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&rw, &a);
	pthread_rwlockattr_destroy(&a);
	pthread_mutex_init(&m, NULL);
	init_cv();
	if (kfd >= 0)
		close(kfd);
	kfd = -1;
	if (kick_fd >= 0)
		close(kick_fd);
	kick_fd = -1;
	page = NULL;
	watching = lost = 0;
	memset(pending, 0, sizeof(pending));
}

int link_ready(void)
{
	static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
	int err = 0;

	if (likely(__atomic_load_n(&kfd, __ATOMIC_ACQUIRE) >= 0 || watching))
		return 0;
	pthread_mutex_lock(&once);
	if (__atomic_load_n(&kfd, __ATOMIC_ACQUIRE) < 0)
		err = link_attach();
	pthread_mutex_unlock(&once);
	return err ? -1 : 0;
}

unsigned link_slots(void)
{
	return kn;
}

const struct cgpu_query *link_query(unsigned slot)
{
	return &kq[slot];
}

/* Until the process is attached again after seen (0), or it will not be (-1). */
static int wait_relink(unsigned seen)
{
	struct timespec until;
	int r = 0;

	if (!watching)
		return -1;
	kick();
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += WAIT_S;
	pthread_mutex_lock(&m);
	while (gen == seen && !lost && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&cv, &m, &until);
	r = gen != seen ? 0 : -1;
	pthread_mutex_unlock(&m);
	return r;
}

int link_call(unsigned long req, void *arg)
{
	unsigned seen;
	int err;

	for (;;) {
		pthread_rwlock_rdlock(&rw);
		seen = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
		err = kfd >= 0 ? xioctl(kfd, req, arg) : -EAGAIN;
		pthread_rwlock_unlock(&rw);
		if (err != -EAGAIN || wait_relink(seen))
			return err;
	}
}

int link_uncharge(unsigned slot, uint64_t bytes)
{
	struct cgpu_charge c = { .abi_version = CGPU_ABI_VERSION, .gpu = kq[slot].gpu,
				 .bytes = bytes };
	unsigned seen;
	int err, kept, gone;

	for (;;) {
		pthread_rwlock_rdlock(&rw);
		seen = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
		err = kfd >= 0 ? xioctl(kfd, CGPU_IOC_UNCHARGE, &c) : -EAGAIN;
		pthread_rwlock_unlock(&rw);
		if (err != -EAGAIN || !watching)
			return err;
		pthread_mutex_lock(&m);
		/* Not attached again since: the watcher makes it when it is. */
		gone = lost;
		kept = gen == seen && !gone;
		if (kept)
			pending[slot] += bytes;
		pthread_mutex_unlock(&m);
		if (kept) {
			kick();
			return 0;
		}
		if (gone)
			return err;
	}
}
