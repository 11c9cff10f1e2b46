// SPDX-License-Identifier: MIT
/* Built twice (a, b): both define rtld_probe; a looks up the next one. */
#include <dlfcn.h>

const char *rtld_probe(void)
{
	return LIB_NAME;
}

const char *rtld_next_probe_from_a(void);
const char *rtld_next_probe_from_a(void)
{
	const char *(*next)(void) =
		(const char *(*)(void))dlsym(RTLD_NEXT, "rtld_probe");

	return next ? next() : "none";
}
