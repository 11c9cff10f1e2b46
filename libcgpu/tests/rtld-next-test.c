// SPDX-License-Identifier: MIT
/* dlsym(RTLD_NEXT) from library a must find b's definition, the next after
 * a, even with libcgpu's dlsym in between (it must not search after itself,
 * which would find a's own). */
#include <stdio.h>
#include <string.h>

const char *rtld_next_probe_from_a(void);

int main(void)
{
	const char *got = rtld_next_probe_from_a();

	printf("rtld-next-test: next after a is %s: %s\n", got,
	       strcmp(got, "b") ? "FAIL" : "ok");
	return strcmp(got, "b") != 0;
}
