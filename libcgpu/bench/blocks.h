/* SPDX-License-Identifier: MIT */
/*
 * The benchmarks' method: a call timed directly and through libcgpu, side by
 * side in one process, in short blocks that alternate which goes first, so
 * that load from other processes falls on both alike; the medians of the
 * blocks and of their block-by-block differences.
 */
#ifndef CGPU_BENCH_BLOCKS_H
#define CGPU_BENCH_BLOCKS_H

#include <stdlib.h>
#include <time.h>

#define BLOCKS 201

/* ns per call of n calls, or < 0 when a call failed. */
typedef double (*block_fn)(const void *arg, long n);

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return v[n / 2];
}

struct blocks {
	double direct, hooked, added;	/* medians, ns per call */
};

/* 0, or -1 when a call failed. */
static inline int blocks_run(block_fn run, const void *direct, const void *hooked,
			     long n, struct blocks *out)
{
	double d[BLOCKS], h[BLOCKS], diff[BLOCKS];

	for (int b = 0; b < BLOCKS; b++) {
		if (b & 1) {
			h[b] = run(hooked, n);
			d[b] = run(direct, n);
		} else {
			d[b] = run(direct, n);
			h[b] = run(hooked, n);
		}
		if (d[b] < 0 || h[b] < 0)
			return -1;
		diff[b] = h[b] - d[b];
	}
	out->direct = median(d, BLOCKS);
	out->hooked = median(h, BLOCKS);
	out->added = median(diff, BLOCKS);
	return 0;
}

#endif
