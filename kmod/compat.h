/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel API differences between the versions DKMS may build cgpu_km for (>= 5.6). */
#ifndef CGPU_KM_COMPAT_H
#define CGPU_KM_COMPAT_H

#include <linux/device.h>
#include <linux/mm.h>
#include <linux/proc_fs.h>
#include <linux/version.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define cgpu_class_create(name) class_create(name)
#else
#define cgpu_class_create(name) class_create(THIS_MODULE, name)
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
typedef const struct device cgpu_devnode_dev;
#else
typedef struct device cgpu_devnode_dev;
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define cgpu_vm_flags_set(vma, f) vm_flags_set(vma, f)
#define cgpu_vm_flags_clear(vma, f) vm_flags_clear(vma, f)
#else
#define cgpu_vm_flags_set(vma, f) ((vma)->vm_flags |= (f))
#define cgpu_vm_flags_clear(vma, f) ((vma)->vm_flags &= ~(f))
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 17, 0)
#define pde_data(inode) PDE_DATA(inode)
#endif

#endif
