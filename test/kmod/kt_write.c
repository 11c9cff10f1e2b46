// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kt write PATH DATA...: opens PATH once and writes each DATA in its own write(),
 * printing each outcome (OK or the errno name) on one line, so a test sees exactly
 * what a split or partial write does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "kt.h"

int kt_write(int argc, char **argv)
{
	int fd;

	if (argc < 3)
		kt_die("usage: kt write PATH DATA...");
	fd = open(argv[1], O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("open:%s\n", kt_errname(errno));
		return 0;
	}
	for (int i = 2; i < argc; i++) {
		size_t n = strlen(argv[i]);
		ssize_t w = write(fd, argv[i], n);

		printf("%s%s", i > 2 ? " " : "", w < 0 ? kt_errname(errno) :
		       (size_t)w == n ? "OK" : "SHORT");
	}
	printf("\n");
	close(fd);
	return 0;
}
