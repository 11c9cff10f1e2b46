/* SPDX-License-Identifier: MIT */
/*
 * A lock-protected hash map from a 64-bit handle (device pointer, array,
 * allocation handle) to what was recorded when it was allocated. Shared by
 * libcgpu and the simulated driver. Keys 0 and UINT64_MAX are reserved.
 */
#ifndef CGPU_PTRMAP_H
#define CGPU_PTRMAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct ptrmap_val {
	uint64_t bytes;
	uint32_t slot;		/* GPU: the caller's index space */
	uint32_t kind;
	void *ctx;		/* context it belongs to, if any */
	void *aux;		/* kind-specific */
};

struct ptrmap {
	pthread_mutex_t lock;
	uint64_t *keys;
	struct ptrmap_val *vals;
	size_t cap, count, dead;
};

#define PTRMAP_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0, 0 }

/* 0, or -ENOMEM (nothing stored). A present key is overwritten. */
int ptrmap_put(struct ptrmap *m, uint64_t key, const struct ptrmap_val *v);
/* Removes key; 1 and *out filled when it was present, else 0. */
int ptrmap_take(struct ptrmap *m, uint64_t key, struct ptrmap_val *out);
int ptrmap_get(struct ptrmap *m, uint64_t key, struct ptrmap_val *out);
/* Removes every entry whose ctx is `ctx`, calling fn on each with the map
 * locked (fn must not call back into the map). Returns how many. */
size_t ptrmap_take_ctx(struct ptrmap *m, const void *ctx,
		       void (*fn)(uint64_t key, const struct ptrmap_val *v,
				  void *arg),
		       void *arg);
/* In a fork child: empty it and make its lock usable again. */
void ptrmap_reset(struct ptrmap *m);

#endif
