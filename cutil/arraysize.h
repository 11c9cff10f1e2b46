/* SPDX-License-Identifier: MIT */
/* Texel bytes of a CUDA (mipmapped) array, for the hook's charge and the
 * simulator's ledger alike. The driver's own padding is not known. */
#ifndef CGPU_ARRAYSIZE_H
#define CGPU_ARRAYSIZE_H

#include "cgpu_cuda.h"

/* 0 for a format this code does not know. */
static inline unsigned int cgpu_format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8: return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF: return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32:
	case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT: return 4;
	}
	return 0;
}

/* Height or Depth 0 means a 1D or 2D array; each level halves every extent
 * down to 1. An unknown format counts 16 bytes a channel, the most any
 * format takes. */
static inline uint64_t cgpu_array_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d,
					unsigned int levels)
{
	unsigned int fb = cgpu_format_bytes(d->Format);
	uint64_t sum = 0;

	for (unsigned int l = 0; l < levels && l < 64; l++) {
		uint64_t w = d->Width >> l, h = d->Height >> l, z = d->Depth >> l;

		sum += (w ? w : 1) * (d->Height ? (h ? h : 1) : 1) *
		       (d->Depth ? (z ? z : 1) : 1) * d->NumChannels *
		       (fb ? fb : 16);
	}
	return sum;
}

#endif
