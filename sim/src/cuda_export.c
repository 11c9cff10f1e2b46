// SPDX-License-Identifier: MIT
/*
 * cuGetExportTable, the driver's private tables. The simulator has none and
 * answers every table as NVIDIA's libcuda 535 answers one it lacks:
 * CUDA_ERROR_INVALID_VALUE and a NULL table. NVIDIA's CUDA runtime looks up
 * all its entry points, calls cuInit, asks for its first table and stops
 * there with that error (docs/sim.md): its lookups can be watched on the
 * simulator, its calls cannot run on it.
 */
#include <stddef.h>

#include "core.h"

SIM_API CUresult cuGetExportTable(const void **ppExportTable,
				  const CUuuid *pExportTableId)
{
	(void)pExportTableId;
	if (ppExportTable)
		*ppExportTable = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
