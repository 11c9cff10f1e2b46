// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "devices.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void sim_gpu_uuid(int phys, char out[SIM_UUID_LEN])
{
	snprintf(out, SIM_UUID_LEN, "GPU-c6a1d000-0000-4000-8000-%012d", phys);
}

void sim_gpu_uuid_bytes(int phys, unsigned char out[16])
{
	char s[SIM_UUID_LEN];
	const char *p;
	int n = 0;

	sim_gpu_uuid(phys, s);
	for (p = s + 4; *p && n < 32; p++) {
		if (!isxdigit((unsigned char)*p))
			continue;
		int v = isdigit((unsigned char)*p) ? *p - '0' :
						     tolower(*p) - 'a' + 10;
		if (n % 2 == 0)
			out[n / 2] = (unsigned char)(v << 4);
		else
			out[n / 2] |= (unsigned char)v;
		n++;
	}
}

int sim_gpu_bus(int phys)
{
	return 0x10 + phys;
}

void sim_gpu_busid(int phys, int domain_digits, char *out, size_t len)
{
	snprintf(out, len, "%0*X:%02X:00.0", domain_digits, 0,
		 sim_gpu_bus(phys));
}

/* A UUID entry matches when it is a prefix of exactly one GPU's UUID. */
static int match_uuid(const char *tok, const int *cands, int n)
{
	char u[SIM_UUID_LEN];
	size_t len = strlen(tok);
	int found = -1;

	if (len <= 4 || strncasecmp(tok, "GPU-", 4))
		return -1;
	for (int i = 0; i < n; i++) {
		sim_gpu_uuid(cands[i], u);
		if (strncasecmp(u, tok, len))
			continue;
		if (found >= 0)
			return -1;
		found = i;
	}
	return found;
}

static int parse_index(const char *tok, int n)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*tok))
		return -1;
	v = strtol(tok, &end, 10);
	return *end || v >= n ? -1 : (int)v;
}

static void load_container(struct sim_view *v, int ngpus)
{
	const char *env = getenv("NVIDIA_VISIBLE_DEVICES");
	int all[SIM_MAX_GPUS], pick[SIM_MAX_GPUS] = {0};
	char buf[1024], *save = NULL, *tok;

	for (int i = 0; i < ngpus; i++)
		all[i] = i;
	v->n_container = 0;
	if (!env || !*env || !strcmp(env, "all") || !strcmp(env, "void")) {
		for (int i = 0; i < ngpus; i++)
			pick[i] = 1;
	} else if (strcmp(env, "none")) {
		snprintf(buf, sizeof(buf), "%s", env);
		for (tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			int idx = parse_index(tok, ngpus);

			if (idx < 0)
				idx = match_uuid(tok, all, ngpus);
			if (idx < 0)
				fprintf(stderr,
					"cgpu-sim: NVIDIA_VISIBLE_DEVICES: no GPU %s\n",
					tok);
			else
				pick[idx] = 1;
		}
	}
	for (int i = 0; i < ngpus; i++)
		if (pick[i])
			v->container[v->n_container++] = i;
}

/* CUDA's rule: entries are taken in order up to the first invalid one. */
static void load_cuda(struct sim_view *v)
{
	const char *env = getenv("CUDA_VISIBLE_DEVICES");
	int used[SIM_MAX_GPUS] = {0};
	char buf[1024], *save = NULL, *tok;

	v->n_cuda = 0;
	if (!env) {
		memcpy(v->cuda, v->container, sizeof(v->cuda));
		v->n_cuda = v->n_container;
		return;
	}
	snprintf(buf, sizeof(buf), "%s", env);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		int idx = parse_index(tok, v->n_container);

		if (idx < 0)
			idx = match_uuid(tok, v->container, v->n_container);
		if (idx < 0 || used[idx])
			break;
		used[idx] = 1;
		v->cuda[v->n_cuda++] = v->container[idx];
	}
}

void sim_view_load(struct sim_view *v, int ngpus)
{
	load_container(v, ngpus);
	load_cuda(v);
}
