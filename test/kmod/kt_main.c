// SPDX-License-Identifier: GPL-2.0 OR MIT
#include <stdio.h>
#include <string.h>
#include "kt.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
} cmds[] = {
	{ "ops", kt_ops, "ops [-c CGROUP] OP... (see kt_ops.c)" },
	{ "write", kt_write, "write PATH DATA..." },
	{ "badioctl", kt_badioctl, "badioctl MEMSIZE (run inside an instance's cgroup)" },
	{ "storm", kt_storm, "storm SECONDS PROCS CGROUP:PROCDIR..." },
	{ "bench", kt_bench, "bench ROUNDS CALLS (inside an instance's cgroup)" },
	{ "sched", kt_sched, "sched [-c CGROUP] slice|hold|wait|stat|page ... (see kt_sched.c)" },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "usage:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, "  kt %s\n", cmds[i].usage);
	return 2;
}
