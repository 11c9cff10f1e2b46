/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef CGPU_LIB_CGROUP_ID_H
#define CGPU_LIB_CGROUP_ID_H
#include "types.h"

/*
 * The container id in a cgroup path, from the component nearest the leaf that holds
 * one, so processes in a container's own sub-cgroups still count as the container.
 * A component is a 64-lowercase-hex id bare (cgroup v1 /docker/<id>, cgroupfs-driver
 * Kubernetes /kubepods/.../pod<uid>/<id>) or wrapped as docker-<id>.scope,
 * cri-containerd-<id>.scope, crio-<id>.scope or libpod-<id>.scope (systemd driver).
 * Returns 1 and writes the 64 hex digits and a NUL to out; 0 when there is none.
 */
int cgpu_cgroup_container_id(const char *path, unsigned long len,
			     char out[CGPU_FULL_ID_LEN + 1]);

#endif
