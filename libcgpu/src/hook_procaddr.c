// SPDX-License-Identifier: MIT
/*
 * cuGetProcAddress and its CUDA 12 form: how the CUDA runtime (11.3 on)
 * finds every driver function. The driver answers; a function libcgpu
 * handles comes back as libcgpu's.
 */
#include "hook.h"

CGPU_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn,
				      int cudaVersion, cuuint64_t flags)
{
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuGetProcAddress, symbol, pfn, cudaVersion, flags);
	if (r == CUDA_SUCCESS && symbol && pfn && *pfn)
		*pfn = cgpu_procaddr_substitute(symbol, *pfn, cudaVersion, flags);
	return r;
}

CGPU_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn,
					 int cudaVersion, cuuint64_t flags,
					 CUdriverProcAddressQueryResult *symbolStatus)
{
	CUresult r;

	NEED_CUDA();
	r = REAL_CU(cuGetProcAddress_v2, symbol, pfn, cudaVersion, flags,
		    symbolStatus);
	if (r == CUDA_SUCCESS && symbol && pfn && *pfn)
		*pfn = cgpu_procaddr_substitute(symbol, *pfn, cudaVersion, flags);
	return r;
}
