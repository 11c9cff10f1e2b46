// SPDX-License-Identifier: MIT
/* The environment rules: SPEC.md's list table and docs/contracts.md s.1. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "config.h"

#define T4 (15109ULL << 20)
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

int main(void)
{
	struct cgpu_config c;

	/* 6 of 15 on a T4 shows as about 6043 MiB. */
	c = parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=6",
				    "ALIYUN_COM_GPU_MEM_DEV=15", NULL });
	CHECK(c.limited && !c.error[0]);
	CHECK(cgpu_config_budget(&c, 0, T4) == 6337173913ULL);
	CHECK(cgpu_config_budget(&c, 0, T4) >> 20 == 6043);
	/* MEM_DEV defaults to the GPU's size in GiB, rounded: 15. */
	c = parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=6", NULL });
	CHECK(cgpu_config_budget(&c, 0, T4) == 6337173913ULL);
	/* "3,1": GPU 0 gets 3, the rest 1 each. */
	c = parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=3,1",
				    "ALIYUN_COM_GPU_MEM_DEV=23", NULL });
	CHECK(cgpu_config_budget(&c, 0, 23ULL << 30) == 3ULL << 30);
	CHECK(cgpu_config_budget(&c, 3, 23ULL << 30) == 1ULL << 30);
	CHECK(!cgpu_config_uniform(&c));
	c = parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=3,4,5,6",
				    "ALIYUN_COM_GPU_MEM_DEV=23", NULL });
	CHECK(cgpu_config_budget(&c, 2, 23ULL << 30) == 5ULL << 30);
	/* Unset, 0 or any 0 in the list: not limited. */
	CHECK(!parse((const char *[]){ NULL }).limited);
	CHECK(!parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=0", NULL }).limited);
	CHECK(!parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=1,0,0", NULL }).limited);
	CHECK(!parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=", NULL }).limited);
	/* Above the GPU's size, or not numbers: an error (budget 0). */
	c = parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=16",
				    "ALIYUN_COM_GPU_MEM_DEV=15", NULL });
	CHECK(c.error[0] && cgpu_config_budget(&c, 0, T4) == 0);
	CHECK(parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=6GB", NULL }).error[0]);
	CHECK(parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=6",
				      "ALIYUN_COM_GPU_MEM_DEV=x", NULL }).error[0]);
	CHECK(parse((const char *[]){ "ALIYUN_COM_GPU_MEM_CONTAINER=1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8", NULL }).error[0]);
	/* The exact byte override wins and is not scaled. */
	c = parse((const char *[]){ "CGPU_MEM_LIMIT_BYTES=2147483648",
				    "ALIYUN_COM_GPU_MEM_CONTAINER=6", NULL });
	CHECK(c.limited && c.in_bytes);
	CHECK(cgpu_config_budget(&c, 5, T4) == 2147483648ULL);
	CHECK(parse((const char *[]){ "CGPU_DISABLE=true",
				      "ALIYUN_COM_GPU_MEM_CONTAINER=6", NULL }).disabled);
	CHECK(!parse((const char *[]){ "CGPU_DISABLE=false", NULL }).disabled);
	printf("config-test: %s\n", failures ? "FAIL" : "ok");
	return failures != 0;
}
