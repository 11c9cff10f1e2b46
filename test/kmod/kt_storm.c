// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kt storm SECONDS PROCS CGROUP:ID...: PROCS workers per container charge and
 * uncharge random sizes on every GPU the container has, over one or two files,
 * while the parent SIGKILLs workers at random and starts new ones. Meanwhile every
 * meminfo must add up (Free + the PID lines = memsize) and name only live workers;
 * at the end every ledger must be back to Free = memsize with no PID line.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kt.h"

#define MAX_CG 64
#define MAX_WORKERS 512
#define FILES 2

struct stats {
	unsigned long charges, enomem, uncharges, reopens, voluntary, kills, errors;
};

struct storm {
	int ncg, procs;
	const char *cg[MAX_CG];
	const char *id[MAX_CG];
	char *dirs[MAX_CG * CGPU_MAX_GPUS];	/* every instance of the containers */
	int ndirs;
	pid_t pid[MAX_WORKERS];		/* 0: slot free; worker w belongs to cg w / procs */
	struct stats *st;		/* shared with the workers */
	unsigned long checks;
	int failed;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Small sizes mostly, now and then up to a quarter of the budget. */
static uint64_t rnd_size(uint64_t *s, uint64_t memsize)
{
	uint64_t cap = rnd(s) % 4 ? (1ULL << 20) : memsize / 4;

	return 1 + rnd(s) % (cap ? cap : 1);
}

static void worker_fail(struct stats *st, const char *what, int err)
{
	__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "storm worker %d: %s: %s\n", getpid(), what, kt_errname(err));
	_exit(3);
}

struct wfile {
	int fd;
	uint32_t n, gpu[CGPU_MAX_GPUS];
	uint64_t memsize[CGPU_MAX_GPUS], held[CGPU_MAX_GPUS];
};

static void wfile_open(struct wfile *f, struct stats *st)
{
	struct cgpu_attach a;
	struct cgpu_query q;
	int err = kt_open(&f->fd);

	if (!err)
		err = kt_attach(f->fd, &a);
	if (err)
		worker_fail(st, "open and attach", err);
	f->n = a.ngpus;
	for (uint32_t i = 0; i < f->n; i++) {
		err = kt_query(f->fd, i, &q);
		if (err)
			worker_fail(st, "query", err);
		f->gpu[i] = q.gpu;
		f->memsize[i] = q.memsize;
		f->held[i] = 0;
	}
}

static void worker_step(struct wfile *f, uint64_t *s, struct stats *st)
{
	uint32_t i = rnd(s) % f->n;
	struct cgpu_charge c;
	int err;

	if (f->held[i] && rnd(s) % 2) {
		uint64_t bytes = 1 + rnd(s) % f->held[i];

		err = kt_charge(f->fd, CGPU_IOC_UNCHARGE, f->gpu[i], bytes, &c);
		if (err)
			worker_fail(st, "uncharge of what the file holds", err);
		f->held[i] -= bytes;
		__atomic_fetch_add(&st->uncharges, 1, __ATOMIC_RELAXED);
		return;
	}
	err = kt_charge(f->fd, CGPU_IOC_CHARGE, f->gpu[i], rnd_size(s, f->memsize[i]), &c);
	if (err == ENOMEM) {
		__atomic_fetch_add(&st->enomem, 1, __ATOMIC_RELAXED);
		return;
	}
	if (err)
		worker_fail(st, "charge", err);
	if (c.used > c.memsize || c.memsize != f->memsize[i])
		worker_fail(st, "charge answer out of bounds", EIO);
	f->held[i] += c.bytes;
	__atomic_fetch_add(&st->charges, 1, __ATOMIC_RELAXED);
}

static void worker(const char *cg, struct stats *st)
{
	uint64_t s = ((uint64_t)getpid() << 32) ^ kt_now_ns() ^ 0x9e3779b97f4a7c15ULL;
	struct wfile files[FILES];
	int err = kt_join_cgroup(cg);

	if (err)
		worker_fail(st, "join cgroup", err);
	/* A hundred busy workers on two CPUs must not starve the parent that kills them. */
	if (nice(19) < 0)
		worker_fail(st, "nice", errno);
	for (;;) {
		int n = 1 + (int)(rnd(&s) % FILES);

		for (int k = 0; k < n; k++)
			wfile_open(&files[k], st);
		for (int ops = (int)(rnd(&s) % 200); ops > 0; ops--)
			worker_step(&files[rnd(&s) % n], &s, st);
		/* Closing releases whatever is still held. */
		for (int k = 0; k < n; k++)
			close(files[k].fd);
		__atomic_fetch_add(&st->reopens, 1, __ATOMIC_RELAXED);
		if (rnd(&s) % 16 == 0)
			_exit(0);
	}
}

static void spawn(struct storm *t, int w)
{
	pid_t pid = fork();

	if (pid < 0)
		kt_die("fork: %s", strerror(errno));
	if (pid == 0)
		worker(t->cg[w / t->procs], t->st);
	t->pid[w] = pid;
}

static int live(struct storm *t, pid_t pid)
{
	for (int w = 0; w < t->ncg * t->procs; w++)
		if (t->pid[w] == pid)
			return 1;
	return 0;
}

/* Reaps every exited worker; starts a new one in its place unless stopping. */
static void reap(struct storm *t, int options, int respawn)
{
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, options)) > 0) {
		for (int w = 0; w < t->ncg * t->procs; w++) {
			if (t->pid[w] != pid)
				continue;
			t->pid[w] = 0;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				t->st->voluntary++;
			else if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
				t->failed++;
			if (respawn)
				spawn(t, w);
		}
	}
}

static int read_u64_file(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	unsigned long long x = 0;
	int ok = f && fscanf(f, "%llu", &x) == 1;

	if (f)
		fclose(f);
	*v = x;
	return ok ? 0 : -1;
}

/*
 * One instance's ledger: Free + the PID lines = memsize; PID lines only for live
 * workers (or none at all when final).
 */
static void check_ledger(struct storm *t, const char *dir, int final)
{
	char path[512], line[256];
	uint64_t memsize, free_b = 0, sum = 0;
	int have_free = 0, pids = 0, bad_pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memsize", dir);
	if (read_u64_file(path, &memsize)) {
		printf("storm: cannot read %s\n", path);
		t->failed++;
		return;
	}
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	f = fopen(path, "r");
	if (!f) {
		printf("storm: cannot read %s\n", path);
		t->failed++;
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		int pid;

		if (sscanf(line, "Free: %llu", &a) == 1) {
			free_b = a;
			have_free = 1;
		} else if (sscanf(line, "PID: %d Mem: %llu", &pid, &a) == 2) {
			sum += a;
			pids++;
			bad_pid |= !live(t, pid);
		} else {
			bad_pid = 1;
		}
	}
	fclose(f);
	t->checks++;
	if (!have_free || free_b + sum != memsize || bad_pid || (final && (pids || sum))) {
		printf("storm: %s: Free %llu + PID lines %llu (%d) vs memsize %llu%s%s\n", dir,
		       (unsigned long long)free_b, (unsigned long long)sum, pids,
		       (unsigned long long)memsize, bad_pid ? ", a PID line of no live worker" : "",
		       final ? " (final)" : "");
		t->failed++;
	}
}

static void check_all(struct storm *t, int final)
{
	for (int d = 0; d < t->ndirs; d++)
		check_ledger(t, t->dirs[d], final);
}

static void find_dirs(struct storm *t)
{
	char dir[256];
	struct stat st;

	for (int c = 0; c < t->ncg; c++)
		for (int g = 0; g < CGPU_MAX_GPUS; g++) {
			snprintf(dir, sizeof(dir), "/proc/cgpu_km/%d/%s", g, t->id[c]);
			if (!stat(dir, &st))
				t->dirs[t->ndirs++] = strdup(dir);
		}
	if (!t->ndirs)
		kt_die("no instance of these containers in /proc/cgpu_km");
}

int kt_storm(int argc, char **argv)
{
	struct storm t = { 0 };
	uint64_t s = kt_now_ns() | 1, end, next_check = 0;
	int seconds, nw;

	if (argc < 4)
		kt_die("usage: kt storm SECONDS PROCS CGROUP:ID...");
	seconds = (int)kt_num(argv[1], 3600);
	t.procs = (int)kt_num(argv[2], 65);
	t.ncg = argc - 3;
	if (t.procs < 1 || t.ncg > MAX_CG || t.ncg * t.procs > MAX_WORKERS)
		kt_die("too many workers");
	for (int c = 0; c < t.ncg; c++) {
		char *colon = strrchr(argv[3 + c], ':');

		if (!colon)
			kt_die("not CGROUP:ID: %s", argv[3 + c]);
		*colon = '\0';
		t.cg[c] = argv[3 + c];
		t.id[c] = colon + 1;
	}
	t.st = mmap(NULL, sizeof(*t.st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t.st == MAP_FAILED)
		kt_die("mmap: %s", strerror(errno));
	setvbuf(stdout, NULL, _IOLBF, 0);
	find_dirs(&t);
	nw = t.ncg * t.procs;
	for (int w = 0; w < nw; w++)
		spawn(&t, w);
	end = kt_now_ns() + (uint64_t)seconds * 1000000000ULL;
	while (kt_now_ns() < end) {
		int w = (int)(rnd(&s) % (uint64_t)nw);

		usleep(2000 + rnd(&s) % 20000);
		if (t.pid[w] && !kill(t.pid[w], SIGKILL))
			t.st->kills++;
		reap(&t, WNOHANG, 1);
		if (kt_now_ns() >= next_check) {
			check_all(&t, 0);
			next_check = kt_now_ns() + 200000000ULL;
		}
	}
	for (int w = 0; w < nw; w++)
		if (t.pid[w])
			kill(t.pid[w], SIGKILL);
	reap(&t, 0, 0);
	check_all(&t, 1);
	printf("storm: %d s, %d workers on %d ledgers: %lu charges, %lu ENOMEM, %lu uncharges, %lu file cycles, "
	       "%lu SIGKILLs, %lu clean exits, %lu ledger checks, %lu worker errors, %d failures\n",
	       seconds, nw, t.ndirs, t.st->charges, t.st->enomem, t.st->uncharges, t.st->reopens,
	       t.st->kills, t.st->voluntary, t.checks, t.st->errors, t.failed);
	return t.failed || t.st->errors || !t.st->charges || !t.st->kills ? 1 : 0;
}
