/* SPDX-License-Identifier: MIT */
/* The assertion of the C test programs: report, count, carry on. */
#ifndef CGPU_CHECK_H
#define CGPU_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                       \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,     \
				__LINE__, #cond);                         \
			failures++;                                       \
		}                                                         \
	} while (0)

#endif
