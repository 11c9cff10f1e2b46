// SPDX-License-Identifier: MIT
/*
 * Every entry point libcgpu exports or calls (src/hooks.def) must exist with
 * the same name in NVIDIA's real libraries, and cuGetProcAddress must resolve
 * (base, version, per-thread mode) to it, introduced at that version. An
 * entry point newer than the driver given is listed with the CUDA version
 * that introduced it instead.
 *
 *   hooks-vs-real REAL_LIBCUDA REAL_LIBNVIDIA_ML
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cgpu_cuda.h"

/* The reference, Debian's libcuda1 535, is a CUDA 12.2 driver (its
 * cuDriverGetVersion needs the kernel driver, so it cannot be asked). */
#define REF_DRIVER_CUDA 12020

struct entry {
	const char *name, *base;
	int cuda, version, ptds;
};

static const struct entry entries[] = {
#define HOOK_CU(n, b, v, p) { #n, #b, 1, v, p },
#define USE_CU(n) { #n, NULL, 1, 0, 0 },
#define HOOK_NV(n) { #n, NULL, 0, 0, 0 },
#define USE_NV(n) { #n, NULL, 0, 0, 0 },
#include "hooks.def"
};

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t,
			  CUdriverProcAddressQueryResult *);

static const char *resolved(gpa_t g, const char *base, int ver, int ptds)
{
	void *p = NULL;
	Dl_info info;

	g(base, &p, ver, ptds ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0,
	  NULL);
	return p && dladdr(p, &info) && info.dli_sname ? info.dli_sname : "";
}

int main(int argc, char **argv)
{
	void *cuda = argc > 2 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	void *nvml = argc > 2 ? dlopen(argv[2], RTLD_NOW | RTLD_LOCAL) : NULL;
	int failures = 0, checked = 0;
	gpa_t g;

	if (!cuda || !nvml) {
		fprintf(stderr, "hooks-vs-real: cannot load %s / %s\n",
			argc > 1 ? argv[1] : "?", argc > 2 ? argv[2] : "?");
		return 2;
	}
	g = (gpa_t)dlsym(cuda, "cuGetProcAddress_v2");
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		const struct entry *e = &entries[i];

		checked++;
		if (!dlsym(e->cuda ? cuda : nvml, e->name)) {
			if (e->version > REF_DRIVER_CUDA) {
				printf("newer than this driver: %s (CUDA %d.%d)\n",
				       e->name, e->version / 1000,
				       e->version % 1000 / 10);
				continue;
			}
			fprintf(stderr, "FAIL: %s is not in the real library\n",
				e->name);
			failures++;
			continue;
		}
		if (!e->base)
			continue;
		if (strcmp(resolved(g, e->base, e->version, e->ptds), e->name) ||
		    !strcmp(resolved(g, e->base, e->version - 10, e->ptds),
			    e->name)) {
			fprintf(stderr,
				"FAIL: cuGetProcAddress(%s, %d%s) is not %s from that version on\n",
				e->base, e->version, e->ptds ? ", per-thread" : "",
				e->name);
			failures++;
		}
	}
	printf("hooks-vs-real: %d entry points checked: %s\n", checked,
	       failures ? "FAIL" : "ok");
	return failures != 0;
}
