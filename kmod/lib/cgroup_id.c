// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "cgroup_id.h"
#include "num.h"

static const char *const prefixes[] = { "", "docker-", "cri-containerd-", "crio-", "libpod-" };

/* len bytes of s equal the NUL-terminated word w. */
static int equals(const char *s, unsigned long len, const char *w)
{
	unsigned long i;

	for (i = 0; i < len; i++)
		if (w[i] == '\0' || w[i] != s[i])
			return 0;
	return w[len] == '\0';
}

static int has_prefix(const char *s, unsigned long len, const char *p, unsigned long *plen)
{
	unsigned long i;

	for (i = 0; p[i] != '\0'; i++)
		if (i >= len || s[i] != p[i])
			return 0;
	*plen = i;
	return 1;
}

/* The id inside one path component, or 0. */
static const char *component_id(const char *c, unsigned long len)
{
	unsigned long p, i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		const char *id, *suffix;
		unsigned long rest, j;

		if (!has_prefix(c, len, prefixes[i], &p) || len - p < CGPU_FULL_ID_LEN)
			continue;
		id = c + p;
		suffix = id + CGPU_FULL_ID_LEN;
		rest = len - p - CGPU_FULL_ID_LEN;
		/* A bare id stands alone; a prefixed one is a systemd scope unit. */
		if (!(p == 0 ? rest == 0 : equals(suffix, rest, ".scope")))
			continue;
		for (j = 0; j < CGPU_FULL_ID_LEN && cgpu_is_lower_hex(id[j]); j++)
			;
		if (j == CGPU_FULL_ID_LEN)
			return id;
	}
	return 0;
}

int cgpu_cgroup_container_id(const char *path, unsigned long len,
			     char out[CGPU_FULL_ID_LEN + 1])
{
	unsigned long end = len;

	while (end > 0) {
		unsigned long start = end;
		const char *id;

		while (start > 0 && path[start - 1] != '/')
			start--;
		id = component_id(path + start, end - start);
		if (id) {
			for (int i = 0; i < CGPU_FULL_ID_LEN; i++)
				out[i] = id[i];
			out[CGPU_FULL_ID_LEN] = '\0';
			return 1;
		}
		end = start > 0 ? start - 1 : 0;
	}
	return 0;
}
