// SPDX-License-Identifier: MIT
/*
 * cudart-trace: NVIDIA's CUDA runtime (libcudart, Debian's 11.8 or 12.4,
 * linked when the suite builds this file) as a client of libcgpu. cudart finds
 * every driver function with cuGetProcAddress (it dlsyms only that), so this
 * program stands between cudart and whatever answers: it defines dlsym (an
 * executable comes first in the lookup order, before LD_PRELOAD), hands cudart
 * a recording cuGetProcAddress in place of the one it asked for, and records
 * each (symbol, CUDA version, flags) with the function cudart got back.
 *
 *   LD_PRELOAD=libcgpu.so cudart-trace LIBCGPU_PATH >trace
 *
 * Then every lookup is printed with what answered it, and the program fails
 * when cudart got the driver's function for an entry point that allocates,
 * frees, copies, sets memory, launches, or creates, destroys or resets a
 * context, unless the `unhooked` table below says why libcgpu leaves it
 * alone; when it got the driver's function for a name libcgpu hooks; when it
 * got libcgpu's hook of another variant than the one the driver itself answers
 * the same lookup with (asked directly, past libcgpu): a per-thread-stream
 * variant given the legacy stream's hook, or a v1 given a _v2's; when a name
 * the table lists came back hooked (the table would be out of date); or when
 * too few lookups passed through here to be cudart's.
 * Exit status: 0, or 1 on any failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few runtime functions used, as cuda_runtime_api.h declares them. */
typedef int cudaError_t;
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, int kind);
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMallocAsync(void **devPtr, size_t size, void *stream);
cudaError_t cudaFreeAsync(void *devPtr, void *stream);
cudaError_t cudaDeviceReset(void);
const char *cudaGetErrorName(cudaError_t error);

typedef int (*gpa1_fn)(const char *, void **, int, uint64_t);
typedef int (*gpa2_fn)(const char *, void **, int, uint64_t, int *);
typedef void *(*dlsym_fn)(void *, const char *);

#define MAX_LOOKUPS 4096

static struct lookup {
	char symbol[64];
	int version;
	uint64_t flags;
	void *fn;
} lookups[MAX_LOOKUPS];
static int nlookups, overflow;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static gpa1_fn next1;
static gpa2_fn next2;
static dlsym_fn glibc_dlsym, next_dlsym;

static int rec1(const char *, void **, int, uint64_t);
static int rec2(const char *, void **, int, uint64_t, int *);

/*
 * Records one answer; when cudart asks for cuGetProcAddress itself (it does,
 * and uses that one from then on), it gets the recorder again.
 */
static void record(const char *symbol, void **pfn, int version, uint64_t flags, int r)
{
	void *fn = r == 0 && pfn ? *pfn : NULL;

	pthread_mutex_lock(&lock);
	if (fn && symbol && !strcmp(symbol, "cuGetProcAddress")) {
		if (version >= 12000) {
			next2 = (gpa2_fn)fn;
			*pfn = (void *)rec2;
		} else {
			next1 = (gpa1_fn)fn;
			*pfn = (void *)rec1;
		}
	}
	if (nlookups < MAX_LOOKUPS) {
		struct lookup *l = &lookups[nlookups++];

		snprintf(l->symbol, sizeof(l->symbol), "%s", symbol ? symbol : "(null)");
		l->version = version;
		l->flags = flags;
		l->fn = fn;
	} else {
		overflow = 1;
	}
	pthread_mutex_unlock(&lock);
}

static int rec1(const char *symbol, void **pfn, int version, uint64_t flags)
{
	int r = next1(symbol, pfn, version, flags);

	record(symbol, pfn, version, flags, r);
	return r;
}

/* A symbol the driver does not have is a success with a status (or NULL) here. */
static int rec2(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
	int r = next2(symbol, pfn, version, flags, status);

	record(symbol, pfn, version, flags, r || (status && *status) ? -1 : 0);
	return r;
}

/*
 * glibc's dlsym (versioned lookup, so neither ours nor libcgpu's), and
 * libcgpu's when it is preloaded: cudart must meet libcgpu's dlsym as it would
 * without this program in between.
 */
static void find_dlsym(void *libcgpu)
{
	glibc_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!glibc_dlsym)
		glibc_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	next_dlsym = libcgpu ? (dlsym_fn)glibc_dlsym(libcgpu, "dlsym") : NULL;
	if (!next_dlsym)
		next_dlsym = glibc_dlsym;
}

/*
 * cudart calls dlsym once, on its handle of libcuda. (RTLD_NEXT through here
 * would search after this program, not after its caller: nothing here uses it.)
 */
void *dlsym(void *handle, const char *name)
{
	void *r;

	if (!next_dlsym)
		find_dlsym(NULL);
	r = next_dlsym(handle, name);
	if (!r)
		return r;
	pthread_mutex_lock(&lock);
	if (!strcmp(name, "cuGetProcAddress_v2")) {
		next2 = (gpa2_fn)r;
		r = (void *)rec2;
	} else if (!strcmp(name, "cuGetProcAddress")) {
		next1 = (gpa1_fn)r;
		r = (void *)rec1;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/*
 * The entry points that must come back hooked: what allocates, frees, copies,
 * sets or maps GPU memory, launches work, or creates, destroys or resets a
 * context (the name cudart got, without _v2/_v3/_ptds/_ptsz). cuGraphAddNode
 * adds allocation nodes as cuGraphAddMemAllocNode does.
 */
static const char *const must_hook =
	"^cu(Mem(Alloc|Free|Create|Release|Map|Unmap|cpy|set)|"
	"MemPool(Create|Destroy|TrimTo|SetAttribute)|DeviceSetMemPool|"
	"(Mipmapped)?Array(3D)?(Create|Destroy)|Launch|GraphLaunch|"
	"GraphAddMem(Alloc|Free)Node|GraphAddNode|DeviceGraphMemTrim|"
	"Graph(Upload|Instantiate|ExecDestroy)|GraphDestroy$|"
	"Ctx(Create|Destroy)|DevicePrimaryCtx(Retain|Release|Reset))";

/* Those libcgpu leaves to the driver, and why (docs/libcgpu.md). */
static const struct {
	const char *pattern;	/* extended regex on the name without suffixes */
	const char *why;
} unhooked[] = {
	{ "^cuMemcpy(|HtoD|DtoH|DtoD|HtoA|AtoH|AtoD|DtoA|AtoA|2D|2DUnaligned|3D|Peer|3DPeer)$"
	  "|^cuMemsetD(8|16|32|2D8|2D16|2D32)$",
	  "synchronous copy or memset: waits for the stream's gated work, copy engines" },
	{ "^cuMem(AllocHost|HostAlloc|FreeHost)$", "host memory" },
	{ "^cuLaunchCooperativeKernelMultiDevice$", "deprecated since CUDA 11.3, several GPUs" },
	{ "^cuCtxCreate$", "a new context holds no charged memory; cuCtxDestroy gives its charges back" },
	{ "^cuGraphAddMemFreeNode$",
	  "a graph's free frees no pages: they stay in the graph pool, charged until trimmed" },
};
#define NUNHOOKED (sizeof(unhooked) / sizeof(unhooked[0]))

static int matches(const char *pattern, const char *s)
{
	regex_t re;
	int m;

	if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB))
		abort();
	m = !regexec(&re, s, 0, NULL, 0);
	regfree(&re);
	return m;
}

static void strip_suffixes(char *name)
{
	static const char *const sfx[] = { "_ptds", "_ptsz", "_v2", "_v3", "_v4" };
	int again = 1;

	while (again) {
		again = 0;
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			size_t n = strlen(name), k = strlen(sfx[i]);

			if (n > k && !strcmp(name + n - k, sfx[i])) {
				name[n - k] = 0;
				again = 1;
			}
		}
	}
}

/*
 * Whether the driver itself (asked directly, past libcgpu) answers l with its
 * export named hook, the function libcgpu's hook of that name calls. By
 * address: the simulated driver gives variants without a difference one
 * function under several names. If not, why goes into buf.
 */
static int driver_answers(void *drv, gpa1_fn g1, gpa2_fn g2, const struct lookup *l,
			  const char *hook, char *buf, size_t n)
{
	void *fn = NULL;
	Dl_info info;
	int st = 0;

	if (g2)
		g2(l->symbol, &fn, l->version, l->flags, &st);
	else if (g1)
		g1(l->symbol, &fn, l->version, l->flags);
	if (fn && fn == glibc_dlsym(drv, hook))
		return 1;
	snprintf(buf, n, "the hook of another variant: the driver answers %s",
		 fn && dladdr(fn, &info) && info.dli_sname && info.dli_saddr == fn ?
			 info.dli_sname : "?");
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int main(int argc, char **argv)
{
	const char *libcgpu = argc > 1 ? argv[1] : NULL;
	void *hc = libcgpu ? dlopen(libcgpu, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	int version = 0, count = -1, fails = 0, hooked = 0, resolved = 0, ptds = 0, listed = 0;
	const char *runtime = "libcudart";
	char buf[64];
	void *p = NULL, *drv;
	gpa1_fn drv1;
	gpa2_fn drv2;
	Dl_info rt;

	if (libcgpu && !hc) {
		fprintf(stderr, "cudart-trace: %s is not loaded (LD_PRELOAD it)\n", libcgpu);
		return 1;
	}
	find_dlsym(hc);
	/* cudart unloads the driver when cuInit fails; its functions are named below. */
	drv = dlopen("libcuda.so.1", RTLD_LAZY);
	if (!drv) {
		fprintf(stderr, "cudart-trace: %s\n", dlerror());
		return 1;
	}
	/* The driver's own answers, past libcgpu (glibc's dlsym on the driver). */
	drv2 = (gpa2_fn)glibc_dlsym(drv, "cuGetProcAddress_v2");
	drv1 = (gpa1_fn)glibc_dlsym(drv, "cuGetProcAddress");
	/* Each runs cudart's initialisation, or reports why it stopped. */
	printf("# cudaRuntimeGetVersion: %s\n", cudaGetErrorName(cudaRuntimeGetVersion(&version)));
	printf("# cudaGetDeviceCount: %s\n", cudaGetErrorName(cudaGetDeviceCount(&count)));
	printf("# cudaMalloc: %s\n", cudaGetErrorName(cudaMalloc(&p, 1 << 20)));
	printf("# cudaMemcpy: %s\n", cudaGetErrorName(cudaMemcpy(p, buf, sizeof(buf), 1)));
	printf("# cudaMemset: %s\n", cudaGetErrorName(cudaMemset(p, 0, sizeof(buf))));
	printf("# cudaFree: %s\n", cudaGetErrorName(cudaFree(p)));
	printf("# cudaMallocAsync: %s\n", cudaGetErrorName(cudaMallocAsync(&p, 1 << 20, NULL)));
	printf("# cudaFreeAsync: %s\n", cudaGetErrorName(cudaFreeAsync(p, NULL)));
	printf("# cudaDeviceReset: %s\n", cudaGetErrorName(cudaDeviceReset()));

	pthread_mutex_lock(&lock);
	for (int i = 0; i < nlookups; i++) {
		const struct lookup *l = &lookups[i];
		char name[64], base[64], why[128];
		const char *owner = "-", *left = NULL, *fail = NULL;
		Dl_info info;
		int ours;

		ptds += !!(l->flags & 2);
		if (!l->fn) {
			printf("%s %d %llu -> none\n", l->symbol, l->version,
			       (unsigned long long)l->flags);
			continue;
		}
		resolved++;
		if (dladdr(l->fn, &info) && info.dli_fname)
			owner = base_name(info.dli_fname);
		snprintf(name, sizeof(name), "%s",
			 info.dli_sname && info.dli_saddr == l->fn ? info.dli_sname : "?");
		ours = hc && !strcmp(owner, "libcgpu.so");
		hooked += ours;
		snprintf(base, sizeof(base), "%s", name);
		strip_suffixes(base);
		if (ours && !driver_answers(drv, drv1, drv2, l, name, why, sizeof(why))) {
			fail = why;
		} else if (!ours && hc && glibc_dlsym(hc, name)) {
			fail = "libcgpu hooks it, cudart got the driver's";
		} else if (matches(must_hook, base)) {
			size_t u = 0;

			while (u < NUNHOOKED && !matches(unhooked[u].pattern, base))
				u++;
			if (ours && u < NUNHOOKED)
				fail = "hooked, but listed as left to the driver (update the list)";
			else if (!ours && u < NUNHOOKED)
				left = unhooked[u].why;
			else if (!ours)
				fail = "not hooked";
		}
		fails += !!fail;
		listed += !!left;
		printf("%s %d %llu -> %s:%s%s%s\n", l->symbol, l->version,
		       (unsigned long long)l->flags, owner, name,
		       fail ? " # FAIL: " : left ? " # left to the driver: " : "",
		       fail ? fail : left ? left : "");
	}
	if (dladdr((void *)cudaMalloc, &rt) && rt.dli_fname)
		runtime = base_name(rt.dli_fname);
	printf("# %s: %d lookups (%d per-thread), %d resolved, %d hooked, "
	       "%d left to the driver as listed, %d failures\n",
	       runtime, nlookups, ptds, resolved, hooked, listed, fails);
	/* Fewer means cudart's lookups did not pass through here. */
	if (overflow || nlookups < 100) {
		printf("# FAIL: %d lookups recorded%s\n", nlookups, overflow ? ", table full" : "");
		fails++;
	}
	pthread_mutex_unlock(&lock);
	return fails ? 1 : 0;
}
