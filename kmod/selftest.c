// SPDX-License-Identifier: GPL-2.0
/* Runs the pure logic's self-test inside the kernel (module parameter selftest=1). */
#include <linux/printk.h>
#include "cgpu.h"
#include "lib/testcases.h"

static void cgpu_selftest_fail(void *ctx, const char *what, int line)
{
	pr_err("cgpu_km: self-test failed at lib/testcases.c:%d: %s\n", line, what);
}

int cgpu_selftest(void)
{
	int failed = cgpu_lib_selftest(cgpu_selftest_fail, NULL);

	if (failed) {
		pr_err("cgpu_km: self-test: %d check(s) failed; not loading\n", failed);
		return -EINVAL;
	}
	pr_info("cgpu_km: self-test passed\n");
	return 0;
}
