/* SPDX-License-Identifier: MIT */
/* Memory pools of the stream-ordered allocator. */
#ifndef SIM_POOL_H
#define SIM_POOL_H

#include "core.h"

/* Returns an allocation's chunk to its pool (cuMemFree*, context teardown). */
void sim_pool_put_back(void *chunk);

#endif
