/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel API differences between the versions DKMS may build cgpu_km for (>= 5.6). */
#ifndef CGPU_KM_COMPAT_H
#define CGPU_KM_COMPAT_H

#include <linux/device.h>
#include <linux/ftrace.h>
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

/*
 * Where an ftrace callback finds the call's arguments and sets where it goes on. Where
 * ftrace passes arguments by default (x86_64 from 5.11: HAVE_DYNAMIC_FTRACE_WITH_ARGS;
 * struct ftrace_regs holds a pt_regs until 6.13), ftrace_caller's partial set has them
 * and takes the new instruction pointer, as livepatch relies on, and the ops need not ask
 * for every register (SAVE_REGS: the costlier ftrace_regs_caller, on every call).
 */
#if defined(CONFIG_X86_64) && defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS) && \
	LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#define CGPU_FTRACE_REGS_FLAG 0
#define cgpu_ftrace_regs(fregs) (&(fregs)->regs)
#else
#define CGPU_FTRACE_REGS_FLAG FTRACE_OPS_FL_SAVE_REGS
#define cgpu_ftrace_regs(fregs) ftrace_get_regs(fregs)
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 17, 0)
#define pde_data(inode) PDE_DATA(inode)
#endif

#endif
