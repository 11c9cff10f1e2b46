// SPDX-License-Identifier: MIT
#include "hook.h"

/*
 * The cgpu release this library was built from (libcgpu/Makefile stamps it from
 * kmod/dkms.conf). Exported as data so that docker cgpu version can read it from the
 * file without loading the library into its process.
 */
CGPU_EXPORT const char cgpu_version[] = CGPU_VERSION;
