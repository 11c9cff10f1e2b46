#include "stats.h"

#include <stdio.h>
#include <stdlib.h>

void samples_add(struct samples *s, uint64_t x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			perror("samples");
			exit(2);
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	s->sum += x;
	if (x > s->max)
		s->max = x;
}

void samples_clear(struct samples *s)
{
	s->n = 0;
	s->sum = 0;
	s->max = 0;
}

void samples_free(struct samples *s)
{
	free(s->v);
	*s = (struct samples){ 0 };
}

uint64_t samples_mean(const struct samples *s)
{
	return s->n ? s->sum / s->n : 0;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t samples_pct(struct samples *s, unsigned p)
{
	size_t i;

	if (!s->n)
		return 0;
	qsort(s->v, s->n, sizeof(*s->v), cmp);
	i = (s->n * p + 99) / 100;
	return s->v[i ? i - 1 : 0];
}
