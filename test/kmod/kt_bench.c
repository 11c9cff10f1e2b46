// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kt bench ROUNDS CALLS: what the hook pays per cudaMalloc/cudaFree pair, a CHARGE
 * plus an UNCHARGE on /dev/cgpu, against an empty ioctl (NOP) on the same file and a
 * bare system call, measured side by side in alternating rounds; the best round of
 * each is reported so a noisy neighbour does not bias one side.
 */
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kt.h"

enum { NOP, PAIR, SYSCALL, KINDS };

static uint64_t round_ns(int kind, int fd, uint64_t calls)
{
	struct cgpu_charge c = { .abi_version = CGPU_ABI_VERSION, .gpu = 0, .bytes = 1 << 20 };
	uint64_t t0 = kt_now_ns();

	for (uint64_t i = 0; i < calls; i++) {
		if (kind == NOP) {
			if (ioctl(fd, CGPU_IOC_NOP, 0))
				kt_die("NOP failed");
		} else if (kind == PAIR) {
			c.bytes = 1 << 20;
			if (ioctl(fd, CGPU_IOC_CHARGE, &c) || ioctl(fd, CGPU_IOC_UNCHARGE, &c))
				kt_die("charge/uncharge failed");
		} else {
			syscall(SYS_getppid);
		}
	}
	return kt_now_ns() - t0;
}

int kt_bench(int argc, char **argv)
{
	static const char *const names[KINDS] = {
		"NOP ioctl", "CHARGE+UNCHARGE pair", "getppid syscall",
	};
	uint64_t best[KINDS] = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	struct cgpu_attach a;
	uint64_t rounds, calls;
	int fd;

	if (argc != 3)
		kt_die("usage: kt bench ROUNDS CALLS");
	rounds = kt_num(argv[1], 1000);
	calls = kt_num(argv[2], 100000000);
	if (!rounds || !calls)
		kt_die("ROUNDS and CALLS must be positive");
	if (kt_open(&fd) || kt_attach(fd, &a))
		kt_die("cannot attach: run inside an instance's cgroup");
	for (uint64_t r = 0; r < rounds; r++)
		for (int k = 0; k < KINDS; k++) {
			uint64_t ns = round_ns(k, fd, calls);

			if (ns < best[k])
				best[k] = ns;
		}
	for (int k = 0; k < KINDS; k++)
		printf("bench: %-22s %8.1f ns per call (best of %llu rounds of %llu)\n", names[k],
		       (double)best[k] / (double)calls, (unsigned long long)rounds,
		       (unsigned long long)calls);
	printf("bench: a CHARGE+UNCHARGE pair costs %.2f NOP ioctls; one NOP ioctl costs %.2f bare syscalls\n",
	       (double)best[PAIR] / (double)best[NOP], (double)best[NOP] / (double)best[SYSCALL]);
	close(fd);
	return 0;
}
