// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kt badioctl MEMSIZE: every malformed /dev/cgpu call, made from inside a container
 * whose only instance is on GPU 0 with MEMSIZE bytes. Each must fail with its errno
 * and leave the ledger exactly as it was (checked by a query after every call); the
 * scheduler's calls must also leave the container neither waiting nor holding.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "kt.h"

#define MIB (1ULL << 20)

struct bad {
	int fd;		/* attached once the attach checks are done */
	uint64_t used;	/* what the ledger must show after every call */
	int failed;
};

static int raw(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

static void expect(struct bad *b, const char *what, int want, int got)
{
	struct cgpu_query q;
	int qerr = b->fd >= 0 ? kt_query(b->fd, 0, &q) : 0;
	int ok = got == want && (b->fd < 0 || (!qerr && q.used == b->used));

	printf("%s %-52s want %-8s got %s", ok ? "ok  " : "FAIL", what, kt_errname(want),
	       kt_errname(got));
	if (b->fd >= 0)
		printf(" (used %llu, expected %llu)", qerr ? 0ULL : (unsigned long long)q.used,
		       (unsigned long long)b->used);
	printf("\n");
	b->failed += !ok;
}

static struct cgpu_charge charge_arg(uint32_t gpu, uint64_t bytes)
{
	struct cgpu_charge c = { .abi_version = CGPU_ABI_VERSION, .gpu = gpu, .bytes = bytes };

	return c;
}

/* Before attach: nothing but NOP and ATTACH is served. */
static void unattached(struct bad *b, int fd, char *ro_page)
{
	struct cgpu_attach a = { .abi_version = CGPU_ABI_VERSION };
	struct cgpu_charge c = charge_arg(0, MIB);
	struct cgpu_query q = { .abi_version = CGPU_ABI_VERSION };
	struct cgpu_slice s = { .abi_version = CGPU_ABI_VERSION, .timeout_ms = 1 };
	void *m;

	expect(b, "NOP", 0, raw(fd, CGPU_IOC_NOP, NULL));
	expect(b, "QUERY before ATTACH", ENOTCONN, raw(fd, CGPU_IOC_QUERY, &q));
	expect(b, "SLICE_WAIT before ATTACH", ENOTCONN, raw(fd, CGPU_IOC_SLICE_WAIT, &s));
	m = mmap(NULL, CGPU_STATUS_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	expect(b, "mmap before ATTACH", ENOTCONN, m == MAP_FAILED ? errno : 0);
	expect(b, "CHARGE before ATTACH", ENOTCONN, raw(fd, CGPU_IOC_CHARGE, &c));
	expect(b, "UNCHARGE before ATTACH", ENOTCONN, raw(fd, CGPU_IOC_UNCHARGE, &c));
	expect(b, "HANDOVER before ATTACH", ENOTCONN, raw(fd, CGPU_IOC_HANDOVER, NULL));
	a.abi_version = CGPU_ABI_VERSION + 1;
	expect(b, "ATTACH abi_version+1", EINVAL, raw(fd, CGPU_IOC_ATTACH, &a));
	a.abi_version = 0;
	expect(b, "ATTACH abi_version 0", EINVAL, raw(fd, CGPU_IOC_ATTACH, &a));
	a.abi_version = CGPU_ABI_VERSION;
	a.flags = 1;
	expect(b, "ATTACH flags 1", EINVAL, raw(fd, CGPU_IOC_ATTACH, &a));
	expect(b, "ATTACH NULL", EFAULT, raw(fd, CGPU_IOC_ATTACH, NULL));
	expect(b, "ATTACH kernel address", EFAULT,
	       raw(fd, CGPU_IOC_ATTACH, (void *)0xffff888000000000UL));
	a.flags = 0;
	memcpy(ro_page, &a, sizeof(a));
	mprotect(ro_page, 4096, PROT_READ);
	expect(b, "ATTACH read-only argument", EFAULT, raw(fd, CGPU_IOC_ATTACH, ro_page));
	expect(b, "still unattached after it", ENOTCONN, raw(fd, CGPU_IOC_QUERY, &q));
	expect(b, "ATTACH", 0, kt_attach(fd, &a));
	expect(b, "ATTACH again", EBUSY, kt_attach(fd, &a));
	expect(b, "HANDOVER with no update under way", EALREADY, raw(fd, CGPU_IOC_HANDOVER, NULL));
}

static void numbers(struct bad *b)
{
	struct cgpu_charge c = charge_arg(0, MIB);
	char big[256] = { 0 };

	memcpy(big, &c, sizeof(c));
	expect(b, "unknown function 11", ENOTTY, raw(b->fd, _IO(CGPU_IOC_MAGIC, 11), NULL));
	expect(b, "INST_STAT as _IOR", EINVAL,
	       raw(b->fd, _IOR(CGPU_IOC_MAGIC, 10, struct cgpu_inst_stat), big));
	expect(b, "INST_STAT, short struct (32)", EINVAL,
	       raw(b->fd, _IOC(_IOC_READ | _IOC_WRITE, CGPU_IOC_MAGIC, 10, 32), big));
	expect(b, "HANDOVER with a size", EINVAL, raw(b->fd, _IOWR(CGPU_IOC_MAGIC, 9, c), &c));
	expect(b, "SLICE_WAIT without a struct", EINVAL, raw(b->fd, _IO(CGPU_IOC_MAGIC, 5), NULL));
	expect(b, "SLICE_END, short struct (32)", EINVAL,
	       raw(b->fd, _IOC(_IOC_READ | _IOC_WRITE, CGPU_IOC_MAGIC, 6, 32), big));
	expect(b, "SCHED_STAT as _IOR", EINVAL,
	       raw(b->fd, _IOR(CGPU_IOC_MAGIC, 8, struct cgpu_sched_stat), big));
	expect(b, "unknown function 255", ENOTTY, raw(b->fd, _IOWR(CGPU_IOC_MAGIC, 255, c), &c));
	expect(b, "another type's number", ENOTTY, raw(b->fd, _IOWR('x', 3, c), &c));
	expect(b, "number 0", ENOTTY, raw(b->fd, 0, &c));
	expect(b, "CHARGE, short struct (16)", EINVAL,
	       raw(b->fd, _IOC(_IOC_READ | _IOC_WRITE, CGPU_IOC_MAGIC, 3, 16), big));
	expect(b, "CHARGE, oversized struct (64)", EINVAL,
	       raw(b->fd, _IOC(_IOC_READ | _IOC_WRITE, CGPU_IOC_MAGIC, 3, 64), big));
	expect(b, "CHARGE as _IOW", EINVAL, raw(b->fd, _IOW(CGPU_IOC_MAGIC, 3, c), &c));
	expect(b, "CHARGE as _IOR", EINVAL, raw(b->fd, _IOR(CGPU_IOC_MAGIC, 3, c), &c));
	expect(b, "UNCHARGE, oversized struct (255)", EINVAL,
	       raw(b->fd, _IOC(_IOC_READ | _IOC_WRITE, CGPU_IOC_MAGIC, 4, 255), big));
	expect(b, "QUERY, short struct (8)", EINVAL,
	       raw(b->fd, _IOC(_IOC_READ | _IOC_WRITE, CGPU_IOC_MAGIC, 2, 8), big));
	expect(b, "NOP with a size", EINVAL, raw(b->fd, _IOWR(CGPU_IOC_MAGIC, 0, int), big));
	expect(b, "ATTACH, oversized struct (64)", EINVAL,
	       raw(b->fd, _IOC(_IOC_READ | _IOC_WRITE, CGPU_IOC_MAGIC, 1, 64), big));
}

static void versions(struct bad *b)
{
	struct cgpu_charge c = charge_arg(0, MIB);
	struct cgpu_query q = { .abi_version = 0 };
	struct cgpu_inst_stat is = { .abi_version = CGPU_ABI_VERSION + 1 };

	c.abi_version = CGPU_ABI_VERSION + 1;
	expect(b, "CHARGE abi_version+1", EINVAL, raw(b->fd, CGPU_IOC_CHARGE, &c));
	expect(b, "UNCHARGE abi_version+1", EINVAL, raw(b->fd, CGPU_IOC_UNCHARGE, &c));
	expect(b, "QUERY abi_version 0", EINVAL, raw(b->fd, CGPU_IOC_QUERY, &q));
	expect(b, "INST_STAT abi_version+1", EINVAL, raw(b->fd, CGPU_IOC_INST_STAT, &is));
	expect(b, "INST_STAT NULL", EFAULT, raw(b->fd, CGPU_IOC_INST_STAT, NULL));
}

/*
 * The scheduler's calls: malformed ones refused before anything changes; the status
 * page only as one read-only, unforkable page at offset 0.
 */
static void sched_calls(struct bad *b, char *ro_page)
{
	struct cgpu_slice s = { .abi_version = CGPU_ABI_VERSION, .timeout_ms = 1 };
	struct cgpu_sched_stat st = { .abi_version = CGPU_ABI_VERSION };
	struct cgpu_inst_stat is = { .abi_version = CGPU_ABI_VERSION, .id = "000000000000" };
	struct cgpu_slice w;
	char *m;

	w = s, w.abi_version = CGPU_ABI_VERSION + 1;
	expect(b, "SLICE_WAIT abi_version+1", EINVAL, raw(b->fd, CGPU_IOC_SLICE_WAIT, &w));
	w = s, w.flags = CGPU_SLICE_MORE;
	expect(b, "SLICE_WAIT flags MORE", EINVAL, raw(b->fd, CGPU_IOC_SLICE_WAIT, &w));
	w = s, w.timeout_ms = 0;
	expect(b, "SLICE_WAIT timeout 0", EINVAL, raw(b->fd, CGPU_IOC_SLICE_WAIT, &w));
	w = s, w.timeout_ms = CGPU_SLICE_TIMEOUT_MAX_MS + 1;
	expect(b, "SLICE_WATCH timeout past the maximum", EINVAL,
	       raw(b->fd, CGPU_IOC_SLICE_WATCH, &w));
	w = s, w.flags = CGPU_SLICE_STALE;
	expect(b, "SLICE_END flags STALE (out only)", EINVAL, raw(b->fd, CGPU_IOC_SLICE_END, &w));
	w = s, w.gpu = 1;
	expect(b, "SLICE_WAIT on GPU 1 (not the container's)", ERANGE,
	       raw(b->fd, CGPU_IOC_SLICE_WAIT, &w));
	w = s, w.gpu = UINT32_MAX;
	expect(b, "SLICE_END on GPU 2^32-1", ERANGE, raw(b->fd, CGPU_IOC_SLICE_END, &w));
	expect(b, "SLICE_WAIT NULL", EFAULT, raw(b->fd, CGPU_IOC_SLICE_WAIT, NULL));
	mprotect(ro_page, 4096, PROT_READ | PROT_WRITE);
	memcpy(ro_page, &s, sizeof(s));
	mprotect(ro_page, 4096, PROT_READ);
	expect(b, "SLICE_WAIT read-only argument", EFAULT, raw(b->fd, CGPU_IOC_SLICE_WAIT, ro_page));
	mprotect(ro_page, 4096, PROT_READ | PROT_WRITE);
	memcpy(ro_page, &is, sizeof(is));
	mprotect(ro_page, 4096, PROT_READ);
	/* The answer is proven writable before the instance is looked for. */
	expect(b, "INST_STAT read-only argument (no such id)", EFAULT,
	       raw(b->fd, CGPU_IOC_INST_STAT, ro_page));
	st.slot = 1;
	expect(b, "SCHED_STAT slot 1", ERANGE, raw(b->fd, CGPU_IOC_SCHED_STAT, &st));
	st.slot = 0, st.abi_version = 0;
	expect(b, "SCHED_STAT abi_version 0", EINVAL, raw(b->fd, CGPU_IOC_SCHED_STAT, &st));
	w = s;
	expect(b, "SLICE_END without a slice", 0, raw(b->fd, CGPU_IOC_SLICE_END, &w));
	expect(b, "... answers STALE", CGPU_SLICE_STALE, (int)w.flags);
	st.abi_version = CGPU_ABI_VERSION;
	expect(b, "SCHED_STAT", 0, raw(b->fd, CGPU_IOC_SCHED_STAT, &st));
	expect(b, "... nobody waiting after the refused calls", 0, (int)st.waiting);
	expect(b, "... nobody holding after the refused calls", 0, (int)st.holding);

	m = mmap(NULL, CGPU_STATUS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	expect(b, "mmap the status page writable", EACCES, m == MAP_FAILED ? errno : 0);
	m = mmap(NULL, CGPU_STATUS_SIZE, PROT_READ, MAP_SHARED, b->fd, CGPU_STATUS_SIZE);
	expect(b, "mmap at offset 4096", EINVAL, m == MAP_FAILED ? errno : 0);
	m = mmap(NULL, 2 * CGPU_STATUS_SIZE, PROT_READ, MAP_SHARED, b->fd, 0);
	expect(b, "mmap two pages", EINVAL, m == MAP_FAILED ? errno : 0);
	m = mmap(NULL, CGPU_STATUS_SIZE, PROT_READ, MAP_PRIVATE, b->fd, 0);
	expect(b, "mmap read-only, private", 0, m == MAP_FAILED ? errno : 0);
	if (m != MAP_FAILED) {
		expect(b, "mprotect it writable", EACCES,
		       mprotect(m, CGPU_STATUS_SIZE, PROT_READ | PROT_WRITE) ? errno : 0);
		munmap(m, CGPU_STATUS_SIZE);
	}
	m = mmap(NULL, CGPU_STATUS_SIZE, PROT_READ, MAP_SHARED, b->fd, 0);
	expect(b, "mmap read-only, shared", 0, m == MAP_FAILED ? errno : 0);
	if (m != MAP_FAILED) {
		const struct cgpu_status_page *p = (const void *)m;

		expect(b, "... abi_version", CGPU_ABI_VERSION, (int)p->abi_version);
		expect(b, "... ngpus", 2, (int)p->ngpus);
		munmap(m, CGPU_STATUS_SIZE);
	}
}

static void pointers(struct bad *b, char *ro_page, char *edge)
{
	struct cgpu_charge c = charge_arg(0, MIB);

	expect(b, "CHARGE NULL", EFAULT, raw(b->fd, CGPU_IOC_CHARGE, NULL));
	expect(b, "CHARGE address 1", EFAULT, raw(b->fd, CGPU_IOC_CHARGE, (void *)1));
	expect(b, "CHARGE kernel address", EFAULT,
	       raw(b->fd, CGPU_IOC_CHARGE, (void *)0xffff888000000000UL));
	expect(b, "QUERY NULL", EFAULT, raw(b->fd, CGPU_IOC_QUERY, NULL));
	/* Readable, not writable: nothing may be charged for an answer that cannot land. */
	mprotect(ro_page, 4096, PROT_READ | PROT_WRITE);
	memcpy(ro_page, &c, sizeof(c));
	mprotect(ro_page, 4096, PROT_READ);
	expect(b, "CHARGE read-only argument", EFAULT, raw(b->fd, CGPU_IOC_CHARGE, ro_page));
	expect(b, "UNCHARGE read-only argument", EFAULT, raw(b->fd, CGPU_IOC_UNCHARGE, ro_page));
	/* The struct's last bytes lie on an unmapped page. */
	memcpy(edge - 16, &c, 16);
	expect(b, "CHARGE struct across the end of a mapping", EFAULT,
	       raw(b->fd, CGPU_IOC_CHARGE, edge - 16));
}

static void sizes(struct bad *b, uint64_t memsize)
{
	struct cgpu_charge c;
	int second, err;

	expect(b, "CHARGE 0 bytes", EINVAL, kt_charge(b->fd, CGPU_IOC_CHARGE, 0, 0, &c));
	expect(b, "CHARGE 2^63 bytes", EINVAL,
	       kt_charge(b->fd, CGPU_IOC_CHARGE, 0, 1ULL << 63, &c));
	expect(b, "CHARGE 2^64-1 bytes", EINVAL,
	       kt_charge(b->fd, CGPU_IOC_CHARGE, 0, UINT64_MAX, &c));
	expect(b, "CHARGE 2^63-1 bytes (used + it wraps)", ENOMEM,
	       kt_charge(b->fd, CGPU_IOC_CHARGE, 0, (1ULL << 63) - 1, &c));
	expect(b, "CHARGE one byte past memsize", ENOMEM,
	       kt_charge(b->fd, CGPU_IOC_CHARGE, 0, memsize - b->used + 1, &c));
	expect(b, "UNCHARGE 0 bytes", EINVAL, kt_charge(b->fd, CGPU_IOC_UNCHARGE, 0, 0, &c));
	expect(b, "UNCHARGE one byte more than held", EINVAL,
	       kt_charge(b->fd, CGPU_IOC_UNCHARGE, 0, b->used + 1, &c));
	expect(b, "UNCHARGE 2^64-1 bytes", EINVAL,
	       kt_charge(b->fd, CGPU_IOC_UNCHARGE, 0, UINT64_MAX, &c));
	/* What a file holds is its own: another file of this process holds nothing. */
	if (kt_open(&second) || kt_attach(second, &(struct cgpu_attach){ 0 }))
		kt_die("second file: cannot open and attach");
	expect(b, "UNCHARGE on a file that charged nothing", EINVAL,
	       kt_charge(second, CGPU_IOC_UNCHARGE, 0, 1, &c));
	close(second);
	err = kt_charge(b->fd, CGPU_IOC_CHARGE, 0, memsize - b->used, &c);
	if (!err && c.used != memsize)
		err = EIO;	/* the answer must show the container full */
	if (!err)
		err = kt_charge(b->fd, CGPU_IOC_UNCHARGE, 0, memsize - b->used, &c);
	expect(b, "CHARGE up to memsize exactly, then back", 0, err);
}

static void ranges(struct bad *b)
{
	struct cgpu_charge c;
	struct cgpu_query q;

	expect(b, "CHARGE on GPU 1 (not the container's)", ERANGE,
	       kt_charge(b->fd, CGPU_IOC_CHARGE, 1, MIB, &c));
	expect(b, "CHARGE on GPU 16", ERANGE, kt_charge(b->fd, CGPU_IOC_CHARGE, 16, MIB, &c));
	expect(b, "UNCHARGE on GPU 2^32-1", ERANGE,
	       kt_charge(b->fd, CGPU_IOC_UNCHARGE, UINT32_MAX, MIB, &c));
	expect(b, "QUERY slot 1", ERANGE, kt_query(b->fd, 1, &q));
	expect(b, "QUERY slot 2^32-1", ERANGE, kt_query(b->fd, UINT32_MAX, &q));
}

int kt_badioctl(int argc, char **argv)
{
	struct bad b = { .fd = -1 };
	struct cgpu_charge c;
	uint64_t memsize;
	char *pages;
	int fd;

	if (argc != 2)
		kt_die("usage: kt badioctl MEMSIZE");
	memsize = kt_size(argv[1]);
	if (memsize < 4 * MIB)
		kt_die("badioctl needs a memsize of at least 4 MiB");
	setvbuf(stdout, NULL, _IOLBF, 0);
	pages = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED || munmap(pages + 2 * 4096, 4096))
		kt_die("mmap failed");
	if (kt_open(&fd))
		kt_die("cannot open " CGPU_DEVICE_PATH);

	unattached(&b, fd, pages);
	b.fd = fd;
	b.used = MIB;
	expect(&b, "CHARGE 1 MiB (the baseline)", 0, kt_charge(fd, CGPU_IOC_CHARGE, 0, MIB, &c));
	numbers(&b);
	versions(&b);
	pointers(&b, pages, pages + 2 * 4096);
	sizes(&b, memsize);
	ranges(&b);
	sched_calls(&b, pages);
	b.used = 0;
	expect(&b, "UNCHARGE the baseline", 0, kt_charge(fd, CGPU_IOC_UNCHARGE, 0, MIB, &c));
	close(fd);
	printf("badioctl: %d check(s) failed\n", b.failed);
	return b.failed ? 1 : 0;
}
