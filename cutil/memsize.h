/* SPDX-License-Identifier: MIT */
/*
 * What the driver takes for an allocation: the one model the simulated GPU
 * allocates by and libcgpu charges by, so that a charge is what the device
 * really holds.
 *
 * NVIDIA GPUs map device memory in 2 MiB pages. A linear allocation larger
 * than CGPU_SMALL_MAX takes whole pages of its own; a smaller one is packed,
 * in 512-byte granules, into a 2 MiB-aligned page of its context that holds
 * only such allocations, and the page goes back with its last allocation.
 * So the page a small allocation lives in is its address rounded down to
 * CGPU_PAGE. Arrays, pools' reservations and VMM handles take whole pages.
 */
#ifndef CGPU_MEMSIZE_H
#define CGPU_MEMSIZE_H

#include <stdint.h>

#define CGPU_PAGE (2ULL << 20)
#define CGPU_SMALL_MAX (1ULL << 20)
#define CGPU_GRANULE 512ULL

/* Saturates rather than wrapping to 0, so an absurd size is refused. */
static inline uint64_t cgpu_round_page(uint64_t bytes)
{
	return bytes > UINT64_MAX - (CGPU_PAGE - 1) ?
		       UINT64_MAX & ~(CGPU_PAGE - 1) :
		       (bytes + CGPU_PAGE - 1) & ~(CGPU_PAGE - 1);
}

static inline int cgpu_is_small(uint64_t bytes)
{
	return bytes <= CGPU_SMALL_MAX;
}

static inline uint64_t cgpu_granules(uint64_t bytes)
{
	return (bytes + CGPU_GRANULE - 1) / CGPU_GRANULE;
}

static inline uint64_t cgpu_page_of(uint64_t addr)
{
	return addr & ~(CGPU_PAGE - 1);
}

/* A linear allocation's pages when it has them to itself; a small one
 * needs one page, unless its context already has one with room. */
static inline uint64_t cgpu_linear_pages(uint64_t bytes)
{
	return cgpu_is_small(bytes) ? CGPU_PAGE : cgpu_round_page(bytes);
}

#endif
