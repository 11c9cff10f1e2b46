/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef SIMDRV_UVM_H
#define SIMDRV_UVM_H

struct class;

/* nvidia-uvm's region and nodes, made in cls (which outlives them); 0 or -errno. */
int simdrv_uvm_init(struct class *cls);
void simdrv_uvm_exit(void);

#endif
