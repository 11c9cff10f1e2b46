// SPDX-License-Identifier: MIT
/* Open addressing, linear probing, tombstones; grows at half full. */
#include "ptrmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY 0ULL
#define DEAD UINT64_MAX

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);
}

static size_t find(const struct ptrmap *m, uint64_t key)
{
	size_t i = slot_of(key, m->cap);

	while (m->keys[i] != EMPTY) {
		if (m->keys[i] == key)
			return i;
		i = (i + 1) & (m->cap - 1);
	}
	return SIZE_MAX;
}

static int grow(struct ptrmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys;
	struct ptrmap_val *vals;

	/* Reclaiming tombstones is enough when the live count is small. */
	if (m->cap && m->count * 4 < m->cap)
		cap = m->cap;
	keys = calloc(cap, sizeof(*keys));
	vals = malloc(cap * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		uint64_t k = m->keys[i];
		size_t j;

		if (k == EMPTY || k == DEAD)
			continue;
		for (j = slot_of(k, cap); keys[j] != EMPTY; j = (j + 1) & (cap - 1))
			;
		keys[j] = k;
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	m->dead = 0;
	return 0;
}

int ptrmap_put(struct ptrmap *m, uint64_t key, const struct ptrmap_val *v)
{
	size_t i;
	int err = 0;

	pthread_mutex_lock(&m->lock);
	if ((m->count + m->dead + 1) * 2 > m->cap)
		err = grow(m);
	if (!err) {
		i = find(m, key);
		if (i == SIZE_MAX) {
			for (i = slot_of(key, m->cap);
			     m->keys[i] != EMPTY && m->keys[i] != DEAD;
			     i = (i + 1) & (m->cap - 1))
				;
			if (m->keys[i] == DEAD)
				m->dead--;
			m->keys[i] = key;
			m->count++;
		}
		m->vals[i] = *v;
	}
	pthread_mutex_unlock(&m->lock);
	return err;
}

static int lookup(struct ptrmap *m, uint64_t key, struct ptrmap_val *out,
		  int remove)
{
	size_t i = SIZE_MAX;

	pthread_mutex_lock(&m->lock);
	if (m->cap)
		i = find(m, key);
	if (i != SIZE_MAX) {
		if (out)
			*out = m->vals[i];
		if (remove) {
			m->keys[i] = DEAD;
			m->count--;
			m->dead++;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return i != SIZE_MAX;
}

int ptrmap_take(struct ptrmap *m, uint64_t key, struct ptrmap_val *out)
{
	return lookup(m, key, out, 1);
}

int ptrmap_get(struct ptrmap *m, uint64_t key, struct ptrmap_val *out)
{
	return lookup(m, key, out, 0);
}

size_t ptrmap_take_ctx(struct ptrmap *m, const void *ctx,
		       void (*fn)(uint64_t key, const struct ptrmap_val *v,
				  void *arg),
		       void *arg)
{
	size_t n = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == EMPTY || m->keys[i] == DEAD ||
		    m->vals[i].ctx != ctx)
			continue;
		fn(m->keys[i], &m->vals[i], arg);
		m->keys[i] = DEAD;
		m->count--;
		m->dead++;
		n++;
	}
	pthread_mutex_unlock(&m->lock);
	return n;
}

void ptrmap_reset(struct ptrmap *m)
{
	pthread_mutex_init(&m->lock, NULL);
	if (m->cap)
		memset(m->keys, 0, m->cap * sizeof(*m->keys));
	m->count = 0;
	m->dead = 0;
}
