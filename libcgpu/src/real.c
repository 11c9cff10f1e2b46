// SPDX-License-Identifier: MIT
/*
 * Finding the driver's real entry points, and handing out ours on the three
 * ways a program finds a driver function: the exported symbol (LD_PRELOAD
 * puts ours first), dlsym on the driver's handle, and cuGetProcAddress.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hook.h"
#include "budget.h"
#include "track.h"
#include "devmap.h"

enum { LIB_CUDA, LIB_NVML };

#include "real_defs.h"

struct hook {
	const char *name;
	void *fn;		/* ours; NULL for entry points we only call */
	void **real;
	int lib;
	const char *base;	/* cuGetProcAddress name */
	int version;
	int ptds;
};

static const struct hook hooks[] = {
#define HOOK_CU(n, b, v, p) { #n, (void *)n, (void **)&real_##n, LIB_CUDA, #b, v, p },
#define USE_CU(n) { #n, NULL, (void **)&real_##n, LIB_CUDA, NULL, 0, 0 },
#define HOOK_NV(n) { #n, (void *)n, (void **)&real_##n, LIB_NVML, NULL, 0, 0 },
#define USE_NV(n) { #n, NULL, (void **)&real_##n, LIB_NVML, NULL, 0, 0 },
#include "hooks.def"
#undef HOOK_CU
#undef USE_CU
#undef HOOK_NV
#undef USE_NV
};
#define NHOOKS (sizeof(hooks) / sizeof(hooks[0]))

void cgpu_say_once(int *said, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (__atomic_exchange_n(said, 1, __ATOMIC_ACQ_REL))
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0)
		return;
}

typedef void *(*dlsym_fn)(void *, const char *);

/* glibc's own dlsym: versioned lookup, so our dlsym is never found. */
static dlsym_fn real_dlsym(void)
{
	static dlsym_fn fn;
	dlsym_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);

	if (unlikely(!f)) {
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!f)
			f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		__atomic_store_n(&fn, f, __ATOMIC_RELEASE);
	}
	return f;
}

static int resolve(int lib)
{
	const char *so = lib == LIB_CUDA ? "libcuda.so.1" : "libnvidia-ml.so.1";
	void *h = dlopen(so, RTLD_LAZY | RTLD_NOLOAD);

	if (!h)
		h = dlopen(so, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return -1;
	for (size_t i = 0; i < NHOOKS; i++)
		if (hooks[i].lib == lib)
			*hooks[i].real = real_dlsym()(h, hooks[i].name);
	return 0;
}

/* Every lock libcgpu's tables share between threads is taken before fork
 * (maps and pools first, the leaf locks last), so a child never inherits one
 * held by a thread that does not exist in it. */
static void fork_prepare(void)
{
	track_fork(TRACK_FORK_PREPARE);
	ledger_fork(TRACK_FORK_PREPARE);
	devmap_fork(TRACK_FORK_PREPARE);
}

static void fork_parent(void)
{
	devmap_fork(TRACK_FORK_PARENT);
	ledger_fork(TRACK_FORK_PARENT);
	track_fork(TRACK_FORK_PARENT);
}

static void fork_child(void)
{
	devmap_fork(TRACK_FORK_CHILD);
	ledger_fork(TRACK_FORK_CHILD);
	track_fork(TRACK_FORK_CHILD);
}

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static void do_setup(void)
{
	ledger_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void cgpu_setup(void)
{
	pthread_once(&setup_once, do_setup);
}

static int cuda_state, nvml_state;	/* 0 unknown, 1 ready, -1 no library */
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;

static void init_cuda(void)
{
	cgpu_setup();
	__atomic_store_n(&cuda_state, resolve(LIB_CUDA) ? -1 : 1,
			 __ATOMIC_RELEASE);
}

static void init_nvml(void)
{
	cgpu_setup();
	__atomic_store_n(&nvml_state, resolve(LIB_NVML) ? -1 : 1,
			 __ATOMIC_RELEASE);
}

int cgpu_cuda_ready(void)
{
	if (likely(__atomic_load_n(&cuda_state, __ATOMIC_ACQUIRE) == 1))
		return 1;
	pthread_once(&cuda_once, init_cuda);
	return __atomic_load_n(&cuda_state, __ATOMIC_ACQUIRE) == 1;
}

int cgpu_nvml_ready(void)
{
	if (likely(__atomic_load_n(&nvml_state, __ATOMIC_ACQUIRE) == 1))
		return 1;
	pthread_once(&nvml_once, init_nvml);
	return __atomic_load_n(&nvml_state, __ATOMIC_ACQUIRE) == 1;
}

static int from_lib(const void *p, int lib)
{
	const char *prefix = lib == LIB_CUDA ? "libcuda.so" : "libnvidia-ml.so";
	Dl_info info;
	const char *base;

	if (!dladdr(p, &info) || !info.dli_fname)
		return 0;
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	return !strncmp(base, prefix, strlen(prefix));
}

/*
 * dlsym on a library handle (the CUDA runtime's way into libcuda): a driver
 * function we handle comes back as ours. RTLD_DEFAULT and RTLD_NEXT go
 * straight to glibc as a tail call, so glibc still sees the caller's own
 * return address, which RTLD_NEXT and scoping depend on; with libcgpu
 * preloaded, RTLD_DEFAULT finds our exports first anyway.
 */
CGPU_EXPORT void *dlsym(void *handle, const char *name)
{
	dlsym_fn rd = real_dlsym();
	void *r;

	if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
		return rd(handle, name);
	r = rd(handle, name);
	if (!r || !((name[0] == 'c' && name[1] == 'u') ||
			     !strncmp(name, "nvml", 4)))
		return r;
	for (size_t i = 0; i < NHOOKS; i++) {
		const struct hook *h = &hooks[i];

		if (h->fn && r != h->fn && !strcmp(h->name, name) &&
		    from_lib(r, h->lib))
			return h->fn;
	}
	return r;
}

static int said_variant;

/*
 * The variant cuGetProcAddress(symbol, version, flags) means is picked by
 * NVIDIA's rule (newest not newer than version; per-thread variants alone in
 * per-thread mode when the symbol has any). A driver older than a variant
 * libcgpu knows answers with an older one (libcuda 535 hands out the v1
 * cuGraphAddNode for CUDA 12.3, whose _v2 takes one more argument), so the
 * driver's export at the address it answered names the variant, and that
 * variant's hook is returned. Failing that, ours replaces the driver's only
 * if the driver has the variant and resolves it, in that variant's own stream
 * mode, to the same address, so a newer variant we do not know, or a
 * per-thread one we lack, stays the driver's.
 */
void *cgpu_procaddr_substitute(const char *symbol, void *pfn, int version,
			       cuuint64_t flags)
{
	const struct hook *best = NULL, *exact = NULL;
	int ptds = !!(flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	int has_ptds = 0;
	void *same = NULL;

	for (size_t i = 0; i < NHOOKS; i++)
		if (hooks[i].fn && hooks[i].base && hooks[i].ptds &&
		    !strcmp(hooks[i].base, symbol))
			has_ptds = 1;
	for (size_t i = 0; i < NHOOKS; i++) {
		const struct hook *h = &hooks[i];

		if (!h->fn || !h->base || h->ptds != (ptds && has_ptds) ||
		    strcmp(h->base, symbol) || h->version > version)
			continue;
		if (!best || h->version > best->version)
			best = h;
		if (*h->real == pfn && (!exact || h->version > exact->version))
			exact = h;
	}
	if (exact)
		return exact->fn;
	if (!best)
		return pfn;
	/* Asked with best's own stream mode: a per-thread lookup that best (a
	 * legacy-stream hook) would answer must resolve to the legacy variant. */
	if (!best->ptds)
		flags &= ~(cuuint64_t)CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	if (real_cuGetProcAddress_v2)
		real_cuGetProcAddress_v2(symbol, &same, best->version, flags, NULL);
	else if (real_cuGetProcAddress)
		real_cuGetProcAddress(symbol, &same, best->version, flags);
	if (same == pfn && *best->real)
		return best->fn;
	cgpu_say_once(&said_variant,
		      "cgpu: %s for CUDA %d resolves to a driver variant libcgpu does not know; it is not limited",
		      symbol, version);
	return pfn;
}
