// SPDX-License-Identifier: MIT
/*
 * The environment rules: every verdict of pkg/alloc/testdata/parse-cases.txt
 * (the table pkg/alloc's TestParseCases demands too), through the parsers and
 * through cgpu_config_parse; then what libcgpu makes of the variables.
 * Usage: config-test PARSE-CASES-FILE
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "config.h"

#define MAX_KINDS 8

static struct kind {
	char name[16], rule[8];
	unsigned long long min, max;
} kinds[MAX_KINDS];
static int nkinds;

static const char *const *env;

static const char *lookup(const char *name)
{
	size_t n = strlen(name);

	for (const char *const *e = env; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static struct cgpu_config parse(const char *const *vars)
{
	struct cgpu_config c;

	env = vars;
	cgpu_config_parse(&c, lookup);
	return c;
}

static const struct kind *find_kind(const char *name)
{
	for (int i = 0; i < nkinds; i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
	return NULL;
}

static void list_string(const uint64_t *v, int n, char *out, size_t len)
{
	size_t at = 0;

	snprintf(out, len, "off");
	for (int i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(out + at, len - at, "%s%" PRIu64,
				       i ? "," : "", v[i]);
}

/* What the rule of k says of s, written as the table writes it. */
static void verdict(const struct kind *k, const char *s, char *out, size_t len)
{
	char why[200];
	uint64_t list[CGPU_LIST_MAX], v = 0;
	int b = 0, n = 0, err;

	if (!strcmp(k->rule, "bool")) {
		err = cgpu_parse_bool(s, &b, why, sizeof(why));
		snprintf(out, len, "%s", b ? "true" : "false");
	} else if (!strcmp(k->rule, "whole")) {
		err = cgpu_parse_whole(s, strlen(s), k->min, k->max, &v, why,
				       sizeof(why));
		snprintf(out, len, "%" PRIu64, v);
	} else if (!strcmp(k->rule, "list")) {
		err = cgpu_parse_list(s, k->max, list, &n, why, sizeof(why));
		list_string(list, n, out, len);
	} else {
		err = 0;
		snprintf(out, len, "unknown rule %s", k->rule);
	}
	if (err)
		snprintf(out, len, "error: %s", why);
}

/* Whether cgpu_config_parse agrees with the case; says where it does not. */
static int config_agrees(const char *where, const char *kind,
			 const char *input, const char *want)
{
	const char *name = !strcmp(kind, "disable") ? "CGPU_DISABLE" :
			   !strcmp(kind, "bytes")   ? "CGPU_MEM_LIMIT_BYTES" :
						      NULL;
	char var[300], got[300];
	struct cgpu_config c;

	if (!name)
		return 1;
	snprintf(var, sizeof(var), "%s=%s", name, input);
	c = parse((const char *[]){ var, "CGPU_MEM_LIMIT_BYTES=1", NULL });
	if (!strncmp(want, "error: ", 7)) {
		/* The message names the variable, its value and the rule. */
		snprintf(got, sizeof(got), "%s=\"%s\": ", name, input);
		if (!strncmp(c.error, got, strlen(got)) &&
		    !strcmp(c.error + strlen(got), want + 7))
			return 1;
	} else {
		if (c.error[0])
			snprintf(got, sizeof(got), "%s", c.error);
		else if (!strcmp(kind, "disable"))
			snprintf(got, sizeof(got), "%s", c.disabled ? "true" : "false");
		else
			list_string(c.list, c.n, got, sizeof(got));
		if (!strcmp(got, want))
			return 1;
	}
	fprintf(stderr, "FAIL %s: %s \"%s\" through cgpu_config_parse: error \"%s\", disabled %d, %d entries\n",
		where, kind, input, c.error, c.disabled, c.n);
	return 0;
}

static int read_cases(const char *path)
{
	char line[512], got[512];
	FILE *f = fopen(path, "r");
	int lineno = 0, ncases = 0;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *open, *end, *want, kind[16];
		const struct kind *k;
		char where[300];
		size_t len = strcspn(line, "\n");

		lineno++;
		line[len] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		if (!strncmp(line, "kind ", 5)) {
			struct kind *nk = &kinds[nkinds];
			int ok = nkinds < MAX_KINDS &&
				 sscanf(line, "kind %15s %7s %llu %llu", nk->name,
					nk->rule, &nk->min, &nk->max) == 4;

			CHECK(ok);
			nkinds += ok;
			continue;
		}
		open = strchr(line, '"');
		end = strrchr(line, '"');
		if (!open || end == open ||
		    sscanf(line, "%15s", kind) != 1 || !(k = find_kind(kind))) {
			fprintf(stderr, "FAIL %s:%d: not KIND \"INPUT\" VERDICT: %s\n",
				path, lineno, line);
			failures++;
			continue;
		}
		*end = 0;
		for (want = end + 1; *want == ' ' || *want == '\t'; want++)
			;
		verdict(k, open + 1, got, sizeof(got));
		if (strcmp(got, want)) {
			fprintf(stderr, "FAIL %s:%d: %s \"%s\": got %s, want %s\n",
				path, lineno, kind, open + 1, got, want);
			failures++;
		}
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		failures += !config_agrees(where, kind, open + 1, want);
		ncases++;
	}
	fclose(f);
	return ncases;
}

int main(int argc, char **argv)
{
	const struct kind *k;
	struct cgpu_config c;
	int n;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PARSE-CASES-FILE\n", argv[0]);
		return 2;
	}
	n = read_cases(argv[1]);
	CHECK(n > 0);
	/* The kinds libcgpu reads are the table's. */
	k = find_kind("bytes");
	CHECK(k && !strcmp(k->rule, "list") && k->max == CGPU_BYTES_MAX);
	k = find_kind("disable");
	CHECK(k && !strcmp(k->rule, "bool"));

	/* Positions past the end of the list repeat its last value. */
	c = parse((const char *[]){ "CGPU_MEM_LIMIT_BYTES=3221225472,1073741824", NULL });
	CHECK(c.n == 2 && !c.error[0] && !cgpu_config_uniform(&c));
	CHECK(cgpu_config_budget(&c, 0) == 3221225472ULL);
	CHECK(cgpu_config_budget(&c, 3) == 1073741824ULL);
	/* Not scaled: the runtime did that (docs/contracts.md section 1). */
	c = parse((const char *[]){ "CGPU_MEM_LIMIT_BYTES=6337173913", NULL });
	CHECK(cgpu_config_uniform(&c) && cgpu_config_budget(&c, 5) == 6337173913ULL);
	/* The GiB variables are the runtime's: no budget from them here. */
	c = parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=6",
				    "ALIYUN_COM_GPU_MEM_DEV=15", NULL });
	CHECK(c.n == 0 && !c.error[0]);
	/* Unset, empty, or a 0 anywhere: no budget. */
	CHECK(parse((const char *[]){ NULL }).n == 0);
	CHECK(parse((const char *[]){ "CGPU_MEM_LIMIT_BYTES=", NULL }).n == 0);
	CHECK(parse((const char *[]){ "CGPU_MEM_LIMIT_BYTES=4096,0", NULL }).n == 0);
	/* Malformed: an error, budget 0 everywhere. */
	c = parse((const char *[]){ "CGPU_MEM_LIMIT_BYTES=6GiB", NULL });
	CHECK(c.error[0] && cgpu_config_budget(&c, 0) == 0);
	/* Disabled wins over a malformed budget; a malformed switch is an
	 * error, never "off". */
	c = parse((const char *[]){ "CGPU_DISABLE=true", "CGPU_MEM_LIMIT_BYTES=junk", NULL });
	CHECK(c.disabled && !c.error[0]);
	c = parse((const char *[]){ "CGPU_DISABLE=yes", "CGPU_MEM_LIMIT_BYTES=4096", NULL });
	CHECK(!c.disabled && c.error[0] && cgpu_config_budget(&c, 0) == 0);
	printf("config-test: %d table cases, %s\n", n, failures ? "FAIL" : "ok");
	return failures != 0;
}
