/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef CGPU_LIB_TESTCASES_H
#define CGPU_LIB_TESTCASES_H

/*
 * Runs every case of the pure logic; calls fail(ctx, what, line) for each failure and
 * returns how many failed. The module runs it at load (selftest=1), the user-space
 * unit test under ASan/UBSan, so both prove the very same objects.
 */
int cgpu_lib_selftest(void (*fail)(void *ctx, const char *what, int line), void *ctx);

#endif
