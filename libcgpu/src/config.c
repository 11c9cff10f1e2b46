// SPDX-License-Identifier: MIT
#include "config.h"

#include <stdio.h>
#include <string.h>

int cgpu_parse_bool(const char *s, int *out, char *why, size_t whylen)
{
	static const char *const yes[] = { "true", "True", "TRUE", "1" };
	static const char *const no[] = { "", "false", "False", "FALSE", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcmp(s, yes[i]))
			return *out = 1, 0;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcmp(s, no[i]))
			return *out = 0, 0;
	snprintf(why, whylen,
		 "not a boolean (true, True, TRUE, 1, false, False, FALSE, 0 or empty)");
	return -1;
}

int cgpu_parse_whole(const char *s, size_t len, uint64_t min, uint64_t max,
		     uint64_t *out, char *why, size_t whylen)
{
	uint64_t v = 0;
	int big = 0;

	if (len == 0) {
		snprintf(why, whylen, "empty");
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9) {
			snprintf(why, whylen, "not a whole number (digits 0-9 only)");
			return -1;
		}
		/* Keep reading: a non-digit further on is the first thing to say. */
		if (big || d > max || v > (max - d) / 10)
			big = 1;
		else
			v = v * 10 + d;
	}
	if (big) {
		snprintf(why, whylen, "too large (at most %llu)",
			 (unsigned long long)max);
		return -1;
	}
	if (v < min) {
		snprintf(why, whylen, "must be at least %llu",
			 (unsigned long long)min);
		return -1;
	}
	*out = v;
	return 0;
}

int cgpu_parse_list(const char *s, uint64_t max, uint64_t list[CGPU_LIST_MAX],
		    int *n, char *why, size_t whylen)
{
	int items = 1, off = 0;
	char item[160];

	*n = 0;
	if (!*s)
		return 0;
	for (const char *p = s; *p; p++)
		items += *p == ',';
	if (items > CGPU_LIST_MAX) {
		snprintf(why, whylen, "more than %d items", CGPU_LIST_MAX);
		return -1;
	}
	for (int i = 0; i < items; i++) {
		size_t len = strcspn(s, ",");

		if (cgpu_parse_whole(s, len, 0, max, &list[i], item,
				     sizeof(item))) {
			snprintf(why, whylen, "item %d: %s", i + 1, item);
			return -1;
		}
		off |= list[i] == 0;
		s += len + 1;
	}
	*n = off ? 0 : items;
	return 0;
}

void cgpu_config_parse(struct cgpu_config *c,
		       const char *(*get)(const char *name))
{
	const char *dis = get("CGPU_DISABLE");
	const char *bytes = get("CGPU_MEM_LIMIT_BYTES");
	char why[160];

	memset(c, 0, sizeof(*c));
	if (dis && cgpu_parse_bool(dis, &c->disabled, why, sizeof(why))) {
		snprintf(c->error, sizeof(c->error), "CGPU_DISABLE=\"%s\": %s",
			 dis, why);
		return;
	}
	if (c->disabled || !bytes)
		return;
	if (cgpu_parse_list(bytes, CGPU_BYTES_MAX, c->list, &c->n, why,
			    sizeof(why)))
		snprintf(c->error, sizeof(c->error),
			 "CGPU_MEM_LIMIT_BYTES=\"%s\": %s", bytes, why);
}

int cgpu_config_uniform(const struct cgpu_config *c)
{
	for (int i = 1; i < c->n; i++)
		if (c->list[i] != c->list[0])
			return 0;
	return 1;
}

uint64_t cgpu_config_budget(const struct cgpu_config *c, int pos)
{
	if (c->error[0] || c->n == 0)
		return 0;
	return c->list[pos < c->n ? pos : c->n - 1];
}
