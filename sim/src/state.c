// SPDX-License-Identifier: MIT
/*
 * Shared state file of the simulated node. Created once under flock, with its
 * configuration frozen at creation. Each process claims a slot and holds an
 * OFD write lock on one byte per slot: the kernel drops the lock when the
 * process dies however it dies, which is how others learn to reap its memory
 * (PIDs cannot tell, since containers have their own PID namespaces).
 */
#define _GNU_SOURCE
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rmclient.h"

#define SIM_MAGIC 0x31534d5355504743ULL	/* "CGPUSMS1" */
#define SIM_VERSION 3
/* Slot liveness locks live far past the end of the file. */
#define SIM_LOCK_BASE (1LL << 40)

static struct sim_state *g_state;
static int g_fd = -1;
static int g_slot = -1;
static pid_t g_pid;
static pthread_mutex_t g_open_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_thread_lock = PTHREAD_MUTEX_INITIALIZER;

static void after_fork_child(void)
{
	pthread_mutex_init(&g_open_lock, NULL);
	pthread_mutex_init(&g_thread_lock, NULL);
}

__attribute__((constructor)) static void state_atfork(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

uint64_t sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static unsigned long env_ulong(const char *name, unsigned long def,
			       unsigned long min, unsigned long max)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		fprintf(stderr, "cgpu-sim: ignoring %s=%s (want %lu..%lu)\n",
			name, s, min, max);
		return def;
	}
	return v;
}

static void init_fresh(struct sim_state *s)
{
	unsigned long n = env_ulong("CGPU_SIM_GPUS", SIM_DEFAULT_GPUS, 0,
				    SIM_MAX_GPUS);
	unsigned long mib = env_ulong("CGPU_SIM_MEM_MIB", SIM_DEFAULT_MEM_MIB,
				      1, 1UL << 24);

	/* The driver's node is the node: a process without access to it sees the same. */
	if (sim_rm_loaded())
		n = (unsigned long)sim_rm_gpus();
	s->ngpus = (uint32_t)n;
	for (unsigned long i = 0; i < n; i++)
		s->gpu[i].total = sim_rm_loaded() ? sim_rm_total((int)i) : (uint64_t)mib << 20;
	s->version = SIM_VERSION;
	__atomic_store_n(&s->magic, SIM_MAGIC, __ATOMIC_RELEASE);
}

static const char *state_path(void)
{
	const char *p = getenv("CGPU_SIM_STATE");

	return p && *p ? p : SIM_DEFAULT_STATE;
}

static int make_parent_dir(const char *path)
{
	char dir[4096];
	char *slash;

	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int map_file(void)
{
	const char *path = state_path();
	struct stat st;
	void *m;
	int fd, err = 0;

	err = make_parent_dir(path);
	if (err)
		return err;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	/* Whoever finds the file empty initialises it; the rest wait here. */
	if (flock(fd, LOCK_EX) || fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	if (st.st_size == 0) {
		fchmod(fd, 0666);
		if (ftruncate(fd, sizeof(struct sim_state))) {
			err = -errno;
			goto fail;
		}
	} else if ((size_t)st.st_size != sizeof(struct sim_state)) {
		err = -EPROTO;
		goto fail;
	}
	m = mmap(NULL, sizeof(struct sim_state), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	/* A zero magic under the flock means the creator died half-way. */
	if (((struct sim_state *)m)->magic == 0)
		init_fresh(m);
	flock(fd, LOCK_UN);
	if (((struct sim_state *)m)->magic != SIM_MAGIC ||
	    ((struct sim_state *)m)->version != SIM_VERSION) {
		munmap(m, sizeof(struct sim_state));
		close(fd);
		return -EPROTO;
	}
	g_state = m;
	g_fd = fd;
	return 0;
fail:
	close(fd);
	return err;
}

static int slot_lock(int i, short type, int cmd)
{
	struct flock fl = {
		.l_type = type,
		.l_whence = SEEK_SET,
		.l_start = SIM_LOCK_BASE + i,
		.l_len = 1,
	};

	if (fcntl(g_fd, cmd, &fl))
		return -errno;
	return cmd == F_OFD_GETLK ? fl.l_type : 0;
}

static void reap_slot(struct sim_state *s, int i)
{
	for (uint32_t g = 0; g < s->ngpus; g++) {
		s->gpu[g].used -= s->slot[i].used[g];
		s->slot[i].used[g] = 0;
	}
	s->slot[i].in_use = 0;
	s->slot[i].pid = 0;
}

void sim_reap_dead_locked(void)
{
	struct sim_state *s = g_state;

	for (int i = 0; i < SIM_MAX_SLOTS; i++) {
		if (!s->slot[i].in_use || i == g_slot)
			continue;
		if (slot_lock(i, F_WRLCK, F_OFD_GETLK) == F_UNLCK)
			reap_slot(s, i);
	}
}

/*
 * Not a process-shared pthread mutex: glibc tells its owners apart by TID,
 * and TIDs repeat across containers' PID namespaces. flock tells them apart
 * by open file, and the kernel drops it when its holder dies. Threads of one
 * process share the open file, so they exclude each other with g_thread_lock.
 */
void sim_state_lock(void)
{
	pthread_mutex_lock(&g_thread_lock);
	if (g_pid != getpid()) {
		/* A fork child must not share its parent's open file. */
		pthread_mutex_unlock(&g_thread_lock);
		sim_state_open();
		pthread_mutex_lock(&g_thread_lock);
	}
	while (flock(g_fd, LOCK_EX) && errno == EINTR)
		;
}

void sim_state_unlock(void)
{
	flock(g_fd, LOCK_UN);
	pthread_mutex_unlock(&g_thread_lock);
}

/* Caller holds the state lock. A process takes a slot only once it holds
 * memory, so readers such as NVML never take one. */
static int claim_slot_locked(void)
{
	struct sim_state *s = g_state;
	int err = -EAGAIN;

	sim_reap_dead_locked();
	for (int i = 0; i < SIM_MAX_SLOTS; i++) {
		if (s->slot[i].in_use)
			continue;
		err = slot_lock(i, F_WRLCK, F_OFD_SETLK);
		if (err)
			continue;
		memset(&s->slot[i], 0, sizeof(s->slot[i]));
		s->slot[i].in_use = 1;
		s->slot[i].pid = getpid();
		g_slot = i;
		return 0;
	}
	return err;
}

static void drop_inherited(void)
{
	/* The parent's slot, lock and memory stay the parent's. */
	if (g_fd >= 0)
		close(g_fd);
	if (g_state)
		munmap(g_state, sizeof(struct sim_state));
	g_state = NULL;
	g_fd = -1;
	g_slot = -1;
}

int sim_state_open(void)
{
	int err = 0;

	if (sim_rm_loaded())
		return 0;
	pthread_mutex_lock(&g_open_lock);
	if (g_state && g_pid != getpid())
		drop_inherited();
	if (!g_state) {
		err = map_file();
		g_pid = getpid();
	}
	pthread_mutex_unlock(&g_open_lock);
	return err;
}

struct sim_state *sim_state(void)
{
	return g_state;
}

int sim_gpu_count(void)
{
	return sim_rm_loaded() ? sim_rm_gpus() : (int)g_state->ngpus;
}

void sim_phys_info(int phys, uint64_t *total, uint64_t *used)
{
	struct sim_gpu *g;

	if (sim_rm_loaded()) {
		*total = sim_rm_total(phys);
		*used = sim_rm_used(phys);
		return;
	}
	g = &g_state->gpu[phys];
	sim_state_lock();
	sim_reap_dead_locked();
	*total = g->total;
	*used = g->used;
	sim_state_unlock();
}

int sim_phys_users(int phys, uint32_t *pid, uint64_t *bytes, int max)
{
	struct sim_slot *sl;
	int n = 0;

	if (sim_rm_loaded())
		return sim_rm_clients(phys, pid, bytes, max);
	sl = g_state->slot;
	sim_state_lock();
	sim_reap_dead_locked();
	for (int i = 0; i < SIM_MAX_SLOTS && n < max; i++) {
		if (!sl[i].in_use || !sl[i].used[phys])
			continue;
		pid[n] = (uint32_t)sl[i].pid;
		bytes[n++] = sl[i].used[phys];
	}
	sim_state_unlock();
	return n;
}

struct sd_engine *sim_engine(int phys)
{
	return sim_rm_loaded() ? sim_rm_engine(phys) : &g_state->gpu[phys].engine;
}

uint64_t sim_ctx_reserve(void)
{
	static uint64_t bytes = ~0ULL;

	/* Without the driver the model holds no context memory: the state file's
	 * figures are the allocations' alone (libcgpu's host tests rest on it). */
	if (!sim_rm_loaded())
		return 0;
	if (__atomic_load_n(&bytes, __ATOMIC_ACQUIRE) == ~0ULL)
		__atomic_store_n(&bytes, (uint64_t)env_ulong("CGPU_SIM_CTX_RESERVE_MIB",
			SIM_CTX_RESERVE_MIB, 0, 1UL << 20) << 20, __ATOMIC_RELEASE);
	return bytes;
}

int sim_phys_reserve(int phys, uint64_t bytes)
{
	struct sim_state *s = g_state;
	struct sim_gpu *g;
	int err = 0;

	if (sim_rm_loaded())
		return sim_rm_take(phys, bytes);
	g = &s->gpu[phys];
	sim_state_lock();
	if (g_slot < 0)
		err = claim_slot_locked();
	if (!err && g->used + bytes > g->total)
		sim_reap_dead_locked();
	if (err || g->used + bytes > g->total) {
		err = -ENOMEM;
	} else {
		g->used += bytes;
		s->slot[g_slot].used[phys] += bytes;
	}
	sim_state_unlock();
	return err;
}

void sim_phys_release(int phys, uint64_t bytes)
{
	struct sim_state *s = g_state;

	if (sim_rm_loaded()) {
		sim_rm_give(phys, bytes);
		return;
	}
	sim_state_lock();
	s->gpu[phys].used -= bytes;
	s->slot[g_slot].used[phys] -= bytes;
	sim_state_unlock();
}
