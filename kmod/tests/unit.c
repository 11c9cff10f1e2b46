// SPDX-License-Identifier: GPL-2.0 OR MIT
/* User-space run of the pure logic's self-test, built with ASan and UBSan. */
#include <stdio.h>
#include "../lib/testcases.h"

static void report(void *ctx, const char *what, int line)
{
	(void)ctx;
	fprintf(stderr, "FAIL lib/testcases.c:%d: %s\n", line, what);
}

int main(void)
{
	int failed = cgpu_lib_selftest(report, NULL);

	if (failed) {
		fprintf(stderr, "unit: %d check(s) failed\n", failed);
		return 1;
	}
	printf("unit: all checks passed\n");
	return 0;
}
