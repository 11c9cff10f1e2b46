// SPDX-License-Identifier: MIT
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int parse_u64(const char *s, size_t len, uint64_t *out)
{
	char buf[32], *end;

	if (len == 0 || len >= sizeof(buf) || *s < '0' || *s > '9')
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	*out = strtoull(buf, &end, 10);
	return errno || *end ? -1 : 0;
}

/* "3" or "3,4,5": up to CGPU_LIST_MAX values; any 0 disables cGPU. */
static void parse_list(struct cgpu_config *c, const char *name, const char *s)
{
	const char *p = s;

	c->n = 0;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (c->n == CGPU_LIST_MAX ||
		    parse_u64(p, len, &c->list[c->n])) {
			snprintf(c->error, sizeof(c->error),
				 "%s=%s is not a list of at most %d whole numbers",
				 name, s, CGPU_LIST_MAX);
			return;
		}
		if (c->list[c->n] == 0) {
			c->limited = 0;
			return;
		}
		c->n++;
		p += len;
		if (*p == ',')
			p++;
	}
	c->limited = c->n > 0;
}

void cgpu_config_parse(struct cgpu_config *c,
		       const char *(*get)(const char *name))
{
	const char *dis = get("CGPU_DISABLE");
	const char *bytes = get("CGPU_MEM_LIMIT_BYTES");
	const char *gib = get("ALIYUN_COM_GPU_MEM_CONTAINER");
	const char *dev = get("ALIYUN_COM_GPU_MEM_DEV");

	memset(c, 0, sizeof(*c));
	c->disabled = dis && (!strcasecmp(dis, "true") || !strcmp(dis, "1"));
	if (bytes && *bytes) {
		c->in_bytes = 1;
		parse_list(c, "CGPU_MEM_LIMIT_BYTES", bytes);
		return;
	}
	if (!gib || !*gib)
		return;
	parse_list(c, "ALIYUN_COM_GPU_MEM_CONTAINER", gib);
	if (!c->limited || c->error[0] || !dev || !*dev)
		return;
	if (parse_u64(dev, strlen(dev), &c->mem_dev) || c->mem_dev == 0) {
		snprintf(c->error, sizeof(c->error),
			 "ALIYUN_COM_GPU_MEM_DEV=%s is not a positive whole number",
			 dev);
		return;
	}
	for (int i = 0; i < c->n; i++) {
		if (c->list[i] > c->mem_dev) {
			snprintf(c->error, sizeof(c->error),
				 "ALIYUN_COM_GPU_MEM_CONTAINER=%s is above the GPU's size (ALIYUN_COM_GPU_MEM_DEV=%s)",
				 gib, dev);
			return;
		}
	}
}

int cgpu_config_uniform(const struct cgpu_config *c)
{
	for (int i = 1; i < c->n; i++)
		if (c->list[i] != c->list[0])
			return 0;
	return 1;
}

uint64_t cgpu_config_budget(const struct cgpu_config *c, int pos,
			    uint64_t total)
{
	uint64_t v, dev;

	if (c->error[0] || c->n == 0)
		return 0;
	v = c->list[pos < c->n ? pos : c->n - 1];
	if (c->in_bytes)
		return v;
	/* MEM_DEV defaults to the GPU's size in whole GiB, rounded. */
	dev = c->mem_dev ? c->mem_dev : ((total >> 20) + 512) / 1024;
	if (dev == 0)
		dev = 1;
	return (uint64_t)((unsigned __int128)v * total / dev);
}
