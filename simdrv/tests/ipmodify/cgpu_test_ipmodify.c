// SPDX-License-Identifier: GPL-2.0
/*
 * For suite 57 (simdrv/tests/enforce.sh) only: another user of the NVIDIA driver's
 * rm_ioctl that may move its instruction pointer, as a livepatch of the driver or
 * another interposer would. ftrace lets one such user per function, so cgpu_km's
 * attach then fails at its last hook (RM's entry) and must take back the five it put
 * on before it. This module changes nothing: its callback returns at once.
 */
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/string.h>

static void notrace cgpu_test_ipmodify_cb(unsigned long ip, unsigned long parent_ip,
					  struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
}

static struct ftrace_ops cgpu_test_ipmodify_ops = {
	.func = cgpu_test_ipmodify_cb,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
};

static int __init cgpu_test_ipmodify_init(void)
{
	/* By name alone: ftrace's ":mod:" command needs a trace instance (EINVAL here). */
	static unsigned char filter[] = "rm_ioctl";
	int err = ftrace_set_filter(&cgpu_test_ipmodify_ops, filter, strlen(filter), 1);

	if (!err)
		err = register_ftrace_function(&cgpu_test_ipmodify_ops);
	if (err)
		ftrace_free_filter(&cgpu_test_ipmodify_ops);
	return err;
}

static void __exit cgpu_test_ipmodify_exit(void)
{
	unregister_ftrace_function(&cgpu_test_ipmodify_ops);
	ftrace_free_filter(&cgpu_test_ipmodify_ops);
}

module_init(cgpu_test_ipmodify_init);
module_exit(cgpu_test_ipmodify_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("cgpu test: an IPMODIFY ftrace user of nvidia's rm_ioctl");
