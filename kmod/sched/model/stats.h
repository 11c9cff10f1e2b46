/* Samples of a duration, summarised after a run. */
#ifndef MODEL_STATS_H
#define MODEL_STATS_H

#include <stddef.h>
#include <stdint.h>

struct samples {
	uint64_t *v;
	size_t n, cap;
	uint64_t sum, max;
};

void samples_add(struct samples *s, uint64_t x);
void samples_clear(struct samples *s);
void samples_free(struct samples *s);
uint64_t samples_mean(const struct samples *s);
/* The p-th percentile (0..100); sorts the samples. */
uint64_t samples_pct(struct samples *s, unsigned p);

#endif
