// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "testcases.h"
#include "instctl.h"
#include "num.h"
#include "rules.h"
#include "upgradecmd.h"

struct st {
	void (*fail)(void *ctx, const char *what, int line);
	void *ctx;
	int failed;
};

#define CHECK(st, cond) check(st, (cond), #cond, __LINE__)

static void check(struct st *st, int ok, const char *what, int line)
{
	if (!ok) {
		st->failed++;
		st->fail(st->ctx, what, line);
	}
}

static unsigned long slen(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static int same(const char *a, const char *b)
{
	unsigned long n = slen(a);

	return n == slen(b) && !__builtin_memcmp(a, b, n);
}

static const struct {
	const char *in;
	enum cgpu_rc rc;
	cgpu_u64 v;
} value_cases[] = {
	{ "0", CGPU_OK, 0 },
	{ "25\n", CGPU_OK, 25 },
	{ " 7 \n", CGPU_OK, 7 },
	{ "\t9\t", CGPU_OK, 9 },
	{ "00012", CGPU_OK, 12 },
	{ "18446744073709551615", CGPU_OK, 18446744073709551615ULL },
	{ "18446744073709551616", CGPU_RC_INVAL, 0 },
	{ "99999999999999999999999", CGPU_RC_INVAL, 0 },
	{ "", CGPU_RC_INVAL, 0 },
	{ "\n", CGPU_RC_INVAL, 0 },
	{ "  ", CGPU_RC_INVAL, 0 },
	{ "-1", CGPU_RC_INVAL, 0 },
	{ "+1", CGPU_RC_INVAL, 0 },
	{ "1 2", CGPU_RC_INVAL, 0 },
	{ "12\n\n", CGPU_RC_INVAL, 0 },
	{ "1\n2", CGPU_RC_INVAL, 0 },
	{ "\n5", CGPU_RC_INVAL, 0 },
	{ "0x10", CGPU_RC_INVAL, 0 },
	{ "1e3", CGPU_RC_INVAL, 0 },
	{ "abc", CGPU_RC_INVAL, 0 },
};

static void test_values(struct st *st)
{
	cgpu_u64 v;
	unsigned long i;

	for (i = 0; i < sizeof(value_cases) / sizeof(value_cases[0]); i++) {
		v = 0;
		CHECK(st, cgpu_parse_value(value_cases[i].in, slen(value_cases[i].in), &v) ==
			  value_cases[i].rc);
		CHECK(st, value_cases[i].rc != CGPU_OK || v == value_cases[i].v);
	}
	/* The length bounds the input: a NUL inside it is garbage, bytes past it unread. */
	CHECK(st, cgpu_parse_value("1\0", 2, &v) == CGPU_RC_INVAL);
	CHECK(st, cgpu_parse_value("42junk", 2, &v) == CGPU_OK && v == 42);
	CHECK(st, cgpu_parse_dec("", 0, &v) == CGPU_RC_INVAL);
}

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UUID1 "GPU-c6a1d000-0000-4000-8000-000000000001"

static const struct {
	const char *in;
	enum cgpu_rc rc;
} cmd_cases[] = {
	{ "add 0 0123456789ab", CGPU_OK },
	{ "add 0 0123456789ab\n", CGPU_OK },
	{ "  add\t3  " ID64 "  memsize=1 weight=0 highprio=1 uuid=" UUID1 " \n", CGPU_OK },
	{ "del 15 0123456789ab", CGPU_OK },
	{ "add 99999 0123456789ab", CGPU_OK },	/* no such GPU: the registry's ENODEV */
	{ "", CGPU_RC_INVAL },
	{ "\n", CGPU_RC_INVAL },
	{ "add", CGPU_RC_INVAL },
	{ "add 0", CGPU_RC_INVAL },
	{ "ADD 0 0123456789ab", CGPU_RC_INVAL },
	{ "addx 0 0123456789ab", CGPU_RC_INVAL },
	{ "ad 0 0123456789ab", CGPU_RC_INVAL },
	{ "add -1 0123456789ab", CGPU_RC_INVAL },
	{ "add 0x1 0123456789ab", CGPU_RC_INVAL },
	{ "add 0 0123456789a", CGPU_RC_INVAL },		/* 11 hex */
	{ "add 0 0123456789AB", CGPU_RC_INVAL },	/* upper case */
	{ "add 0 0123456789ag", CGPU_RC_INVAL },
	{ "add 0 " ID64 "0", CGPU_RC_INVAL },		/* 65 hex */
	{ "add 0 0123456789ab memsize=0", CGPU_RC_INVAL },
	{ "add 0 0123456789ab memsize=9223372036854775807", CGPU_OK },
	{ "add 0 0123456789ab memsize=9223372036854775808", CGPU_RC_INVAL },
	{ "add 0 0123456789ab memsize=", CGPU_RC_INVAL },
	{ "add 0 0123456789ab memsize=-5", CGPU_RC_INVAL },
	{ "add 0 0123456789ab memsize=1 memsize=2", CGPU_RC_INVAL },
	{ "add 0 0123456789ab highprio=2", CGPU_RC_INVAL },
	{ "add 0 0123456789ab color=1", CGPU_RC_INVAL },
	{ "add 0 0123456789ab weight", CGPU_RC_INVAL },
	{ "add 0 0123456789ab =1", CGPU_RC_INVAL },
	{ "add 0 0123456789ab weight=1=1", CGPU_RC_INVAL },
	{ "add 0 0123456789ab uuid=GPU-c6a1d000-0000-4000-8000-00000000000", CGPU_RC_INVAL },
	{ "add 0 0123456789ab uuid=GPU_c6a1d000-0000-4000-8000-000000000001", CGPU_RC_INVAL },
	{ "add 0 0123456789ab uuid=GPU-c6a1d000-0000-4000-8000-00000000000g", CGPU_RC_INVAL },
	{ "add 0 0123456789ab uuid=" UUID1 " uuid=" UUID1, CGPU_RC_INVAL },
	{ "del 0 0123456789ab weight=1", CGPU_RC_INVAL },
	{ "add 0 0123456789ab\nadd 1 0123456789ab", CGPU_RC_INVAL },
	{ "add 0 0123456789ab\n\n", CGPU_RC_INVAL },
	{ "bind 0 0123456789ab 1", CGPU_OK },
	{ "bind 2 " ID64 " 4194304\n", CGPU_OK },
	{ "bind 0 0123456789ab", CGPU_RC_INVAL },
	{ "bind 0 0123456789ab 0", CGPU_RC_INVAL },
	{ "bind 0 0123456789ab 4194305", CGPU_RC_INVAL },
	{ "bind 0 0123456789ab -1", CGPU_RC_INVAL },
	{ "bind 0 0123456789ab 1 2", CGPU_RC_INVAL },
	{ "bind 0 0123456789ab pid=1", CGPU_RC_INVAL },
	{ "bind 0 0123456789AB 1", CGPU_RC_INVAL },
};

static void test_cmds(struct st *st)
{
	static const cgpu_u8 uuid1[CGPU_UUID_BYTES] = {
		0xc6, 0xa1, 0xd0, 0x00, 0x00, 0x00, 0x40, 0x00,
		0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	char long_cmd[CGPU_CMD_MAX_LEN + 2];
	struct cgpu_cmd c;
	unsigned long i;

	for (i = 0; i < sizeof(cmd_cases) / sizeof(cmd_cases[0]); i++)
		CHECK(st, cgpu_parse_cmd(cmd_cases[i].in, slen(cmd_cases[i].in), &c) ==
			  cmd_cases[i].rc);

	i = slen(cmd_cases[2].in);
	CHECK(st, cgpu_parse_cmd(cmd_cases[2].in, i, &c) == CGPU_OK);
	CHECK(st, c.op == CGPU_CMD_ADD && c.gpu == 3 && same(c.id, "0123456789ab"));
	CHECK(st, c.has == (CGPU_HAS_MEMSIZE | CGPU_HAS_WEIGHT | CGPU_HAS_HIGHPRIO | CGPU_HAS_UUID));
	CHECK(st, c.memsize == 1 && c.weight == 0 && c.highprio == 1);
	CHECK(st, !__builtin_memcmp(c.uuid, uuid1, sizeof(uuid1)));

	CHECK(st, cgpu_parse_cmd("del 15 0123456789ab", 19, &c) == CGPU_OK);
	CHECK(st, c.op == CGPU_CMD_DEL && c.gpu == 15 && c.has == 0);
	CHECK(st, cgpu_parse_cmd("bind 1 0123456789ab 4242", 24, &c) == CGPU_OK);
	CHECK(st, c.op == CGPU_CMD_BIND && c.gpu == 1 && c.pid == 4242 && c.has == 0);
	/* NULs inside the length are data, never a terminator to match (found by fuzzing). */
	CHECK(st, cgpu_parse_cmd("add\0\0 0 0123456789ab", 20, &c) == CGPU_RC_INVAL);

	/* A refused command leaves the caller's struct alone. */
	c.gpu = 7;
	CHECK(st, cgpu_parse_cmd("add 1 xyz", 9, &c) == CGPU_RC_INVAL && c.gpu == 7);

	/* The length limit holds even for an otherwise valid command. */
	for (i = 0; i < sizeof(long_cmd); i++)
		long_cmd[i] = ' ';
	__builtin_memcpy(long_cmd, "add 0 0123456789ab", 18);
	CHECK(st, cgpu_parse_cmd(long_cmd, CGPU_CMD_MAX_LEN, &c) == CGPU_OK);
	CHECK(st, cgpu_parse_cmd(long_cmd, CGPU_CMD_MAX_LEN + 1, &c) == CGPU_RC_INVAL);
}

static const struct {
	const char *in;
	enum cgpu_rc rc;
	enum cgpu_upd_op op;
} upd_cases[] = {
	{ "0", CGPU_OK, CGPU_UPD_UNPIN },
	{ " 1 \n", CGPU_OK, CGPU_UPD_UNPIN },
	{ "2", CGPU_RC_INVAL, 0 },
	{ "freeze", CGPU_OK, CGPU_UPD_FREEZE },
	{ "freeze\n", CGPU_OK, CGPU_UPD_FREEZE },
	{ " thaw ", CGPU_OK, CGPU_UPD_THAW },
	{ "commit", CGPU_OK, CGPU_UPD_COMMIT },
	{ "commit now", CGPU_RC_INVAL, 0 },
	{ "freez", CGPU_RC_INVAL, 0 },
	{ "FREEZE", CGPU_RC_INVAL, 0 },
	{ "freeze\nthaw", CGPU_RC_INVAL, 0 },
	{ "freeze to=0.2.1", CGPU_OK, CGPU_UPD_FREEZE },
	{ "freeze to=", CGPU_RC_INVAL, 0 },
	{ "freeze to=0.2.1 now", CGPU_RC_INVAL, 0 },
	{ "freeze from=0.2.1", CGPU_RC_INVAL, 0 },
	{ "freeze to=0.2/1", CGPU_RC_INVAL, 0 },
	{ "freeze to=012345678901234567890123456789012", CGPU_RC_INVAL, 0 },
	{ "from 1.0.0-rc1+git~x_y", CGPU_OK, CGPU_UPD_FROM },
	{ "from 01234567890123456789012345678901", CGPU_OK, CGPU_UPD_FROM },
	{ "from", CGPU_RC_INVAL, 0 },
	{ "from 0.2.0 0.2.1", CGPU_RC_INVAL, 0 },
	{ "from 0.2.0;", CGPU_RC_INVAL, 0 },
	{ "format 1", CGPU_OK, CGPU_UPD_FORMAT },
	{ "format 0", CGPU_RC_INVAL, 0 },
	{ "format", CGPU_RC_INVAL, 0 },
	{ "format 1 2", CGPU_RC_INVAL, 0 },
	{ "default_memsize 0", CGPU_OK, CGPU_UPD_DEFAULT_MEMSIZE },
	{ "default_memsize 9223372036854775808", CGPU_RC_INVAL, 0 },
	{ "gpu 3 max_inst=8 policy=2 prio_ratio=40", CGPU_OK, CGPU_UPD_GPU },
	{ "gpu 0 prio_ratio=99 policy=0 max_inst=25", CGPU_OK, CGPU_UPD_GPU },
	{ "gpu 0 max_inst=8 policy=2", CGPU_RC_INVAL, 0 },
	{ "gpu 0 max_inst=8 policy=2 prio_ratio=40 policy=2", CGPU_RC_INVAL, 0 },
	{ "gpu 0 max_inst=26 policy=2 prio_ratio=40", CGPU_RC_INVAL, 0 },
	{ "gpu 0 max_inst=8 policy=6 prio_ratio=40", CGPU_RC_INVAL, 0 },
	{ "gpu 0 max_inst=8 policy=2 prio_ratio=19", CGPU_RC_INVAL, 0 },
	{ "gpu 0 max_inst=8 policy=2 prio_ratio=40 weight=1", CGPU_RC_INVAL, 0 },
	{ "gpu x max_inst=8 policy=2 prio_ratio=40", CGPU_RC_INVAL, 0 },
	{ "add 0 0123456789ab memsize=1 weight=2 highprio=1 uuid=" UUID1, CGPU_OK, CGPU_UPD_ADD },
	{ "add 0 0123456789ab memsize=0", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1073741824", CGPU_OK, CGPU_UPD_CHARGE },
	{ "charge 1 " ID64 " 4194304 9223372036854775807\n", CGPU_OK, CGPU_UPD_CHARGE },
	{ "charge 0 0123456789ab 0 1", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 4194305 1", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 0", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 9223372036854775808", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 1", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789AB 17 1", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 start=1", CGPU_OK, CGPU_UPD_CHARGE },
	{ "charge 0 0123456789ab 17 1 start=18446744073709551615", CGPU_OK, CGPU_UPD_CHARGE },
	{ "charge 0 0123456789ab 17 1 start=0", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 start=", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 stark=5", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 start=5 start=5", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 0 start=5 channels=3", CGPU_OK, CGPU_UPD_CHARGE },
	{ "charge 0 0123456789ab 17 1 channels=3 start=5", CGPU_OK, CGPU_UPD_CHARGE },
	{ "charge 0 0123456789ab 17 0 channels=16777216", CGPU_OK, CGPU_UPD_CHARGE },
	{ "charge 0 0123456789ab 17 0 channels=16777217", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 0 channels=0", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 0 start=5", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 channels=", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 channels=1 channels=1", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 channels=1 start=5 x", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=7", CGPU_OK, CGPU_UPD_OBJ },
	{ "obj 1 " ID64 " 4194304 9223372036854775807 start=1 grand=6 parent=7 handle=4294967295 client=9\n",
	  CGPU_OK, CGPU_UPD_OBJ },
	{ "obj 0 0123456789ab 17 0 client=9 handle=8 parent=7", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 parent=7", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 handle=8 parent=7", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=0 handle=8 parent=7", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=4294967296 parent=7", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=9 parent=7", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=9", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=7 grand=9", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=7 grand=0", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=7 handle=8", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=7 channels=1", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=7 start=0", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 0 1 client=9 handle=8 parent=7", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 client=9", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 keep=1", CGPU_OK, CGPU_UPD_CHARGE },
	{ "charge 0 0123456789ab 17 0 keep=1 channels=2 start=3", CGPU_OK, CGPU_UPD_CHARGE },
	{ "charge 0 0123456789ab 17 1 keep=0", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 keep=2", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 keep=1 keep=1", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 0 keep=1", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=7 keep=1", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=5", CGPU_OK, CGPU_UPD_OBJ },
	{ "obj 0 0123456789ab 17 1 same=1 start=3 map=4294967295\n", CGPU_OK, CGPU_UPD_OBJ },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=7 same=1", CGPU_OK, CGPU_UPD_OBJ },
	{ "obj 0 0123456789ab 17 1 map=0", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=4294967296", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=5 map=5", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=5 client=9", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=5 handle=8", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=5 parent=7", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=5 grand=6", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 client=9 handle=8 parent=7 map=5", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 0 map=5", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=5 same=0", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=5 same=2", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 map=5 same=1 same=1", CGPU_RC_INVAL, 0 },
	{ "obj 0 0123456789ab 17 1 same=1", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 map=5", CGPU_RC_INVAL, 0 },
	{ "charge 0 0123456789ab 17 1 same=1", CGPU_RC_INVAL, 0 },
	{ "bind 0 0123456789ab 17", CGPU_OK, CGPU_UPD_BIND },
	{ "bind 0 0123456789ab", CGPU_RC_INVAL, 0 },
	{ "del 0 0123456789ab", CGPU_RC_INVAL, 0 },
	{ "", CGPU_RC_INVAL, 0 },
	{ "\n", CGPU_RC_INVAL, 0 },
};

static void test_upgrade(struct st *st)
{
	static const char gpu3[] = "gpu 3 max_inst=8 policy=2 prio_ratio=40";
	static const char charge1[] = "charge 1 " ID64 " 99 5";
	static const char add2[] = "add 2 0123456789ab weight=3";
	static const char short_charge[] = "charge 5 0123456789ab 1";
	struct cgpu_upd u;
	unsigned long i;

	for (i = 0; i < sizeof(upd_cases) / sizeof(upd_cases[0]); i++) {
		u.op = 0;
		CHECK(st, cgpu_parse_upgrade(upd_cases[i].in, slen(upd_cases[i].in), &u) ==
			  upd_cases[i].rc);
		CHECK(st, upd_cases[i].rc != CGPU_OK || u.op == upd_cases[i].op);
	}
	CHECK(st, cgpu_parse_upgrade(gpu3, slen(gpu3), &u) == CGPU_OK);
	CHECK(st, u.gpu == 3 && u.max_inst == 8 && u.policy == 2 && u.prio_ratio == 40);
	CHECK(st, cgpu_parse_upgrade(charge1, slen(charge1), &u) == CGPU_OK);
	CHECK(st, u.gpu == 1 && same(u.id, "0123456789ab") && u.pid == 99 && u.bytes == 5 &&
		  u.start == 0);
	CHECK(st, cgpu_parse_upgrade("charge 0 0123456789ab 9 8 start=77", 34, &u) == CGPU_OK &&
		  u.pid == 9 && u.bytes == 8 && u.start == 77 && u.channels == 0);
	CHECK(st, cgpu_parse_upgrade("charge 0 0123456789ab 9 0 channels=12 start=77", 46, &u) ==
		  CGPU_OK && u.bytes == 0 && u.channels == 12 && u.start == 77 && u.keep == 0);
	CHECK(st, cgpu_parse_upgrade("charge 0 0123456789ab 9 8 keep=1", 32, &u) == CGPU_OK &&
		  u.keep == 1 && u.bytes == 8);
	CHECK(st, cgpu_parse_upgrade("obj 2 0123456789ab 9 8 grand=4 client=1 handle=2 parent=3 start=77",
				     66, &u) == CGPU_OK && u.op == CGPU_UPD_OBJ && u.gpu == 2 &&
		  u.pid == 9 && u.bytes == 8 && u.client == 1 && u.handle == 2 && u.parent == 3 &&
		  u.grand == 4 && u.start == 77 && u.channels == 0);
	CHECK(st, cgpu_parse_upgrade("obj 2 0123456789ab 9 8 same=1 map=3221225473 start=77",
				     53, &u) == CGPU_OK && u.op == CGPU_UPD_OBJ && u.map == 3221225473u &&
		  u.same == 1 && !(u.client | u.handle | u.parent | u.grand) && u.start == 77);
	CHECK(st, cgpu_parse_upgrade("bind 3 0123456789ab 9", 21, &u) == CGPU_OK &&
		  u.add.op == CGPU_CMD_BIND && u.add.gpu == 3 && u.add.pid == 9);
	CHECK(st, cgpu_parse_upgrade(add2, slen(add2), &u) == CGPU_OK);
	CHECK(st, u.add.gpu == 2 && u.add.weight == 3 && u.add.has == CGPU_HAS_WEIGHT);
	CHECK(st, cgpu_parse_upgrade(" 1", 2, &u) == CGPU_OK && u.value == 1);
	/* A refused command leaves the caller's struct alone. */
	u.gpu = 7;
	CHECK(st, cgpu_parse_upgrade(short_charge, slen(short_charge), &u) == CGPU_RC_INVAL &&
		  u.gpu == 7);
	CHECK(st, cgpu_parse_upgrade("freeze\0", 7, &u) == CGPU_RC_INVAL);
	CHECK(st, cgpu_parse_upgrade("freeze", 6, &u) == CGPU_OK && u.version[0] == '\0');
	CHECK(st, cgpu_parse_upgrade("freeze to=9.9.9\n", 16, &u) == CGPU_OK &&
		  same(u.version, "9.9.9"));
	CHECK(st, cgpu_parse_upgrade("from 0.2.0", 10, &u) == CGPU_OK && same(u.version, "0.2.0"));
}

static void test_rules(struct st *st)
{
	const cgpu_u64 max = CGPU_MAX_BYTES;

	/* A range's page tables: 64 MiB, 1 GiB, libcuda's 0xfb000000, the largest size. */
	CHECK(st, cgpu_range_tables(0) == 64 * 1024);
	CHECK(st, cgpu_range_tables(64ULL << 20) == 192 * 1024);
	CHECK(st, cgpu_range_tables(1ULL << 30) == 2293760);
	CHECK(st, cgpu_range_tables(0xfb000000ULL) == 8847360);
	CHECK(st, cgpu_range_tables(~0ULL) > (~0ULL >> 9));
	/* A mapping's page tables: 2 MiB, 64 MiB, 1 GiB, the largest size. */
	CHECK(st, cgpu_map_tables(2ULL << 20) == 45056);
	CHECK(st, cgpu_map_tables(64ULL << 20) == 172032);
	CHECK(st, cgpu_map_tables(1ULL << 30) == 2146304);
	CHECK(st, cgpu_map_tables(~0ULL) > (~0ULL >> 9));
	/* A sparse mapping: 256 bytes a 2 MiB table of 64 KiB pages; 1 TiB about 136 MiB. */
	CHECK(st, cgpu_sparse_tables(1ULL << 30) == 514 * 256 + (4 + 2 + 2 + 2) * 4096);
	CHECK(st, cgpu_sparse_tables(1ULL << 40) == 524290ULL * 256 + (2050 + 6 + 2 + 2) * 4096);
	CHECK(st, cgpu_sparse_tables(~0ULL) > (~0ULL >> 14));
	CHECK(st, cgpu_check_charge(0, 6, 6) == CGPU_OK);
	CHECK(st, cgpu_check_charge(0, 6, 7) == CGPU_RC_NOMEM);
	CHECK(st, cgpu_check_charge(5, 6, 1) == CGPU_OK);
	CHECK(st, cgpu_check_charge(5, 6, 2) == CGPU_RC_NOMEM);
	CHECK(st, cgpu_check_charge(7, 6, 1) == CGPU_RC_NOMEM);
	CHECK(st, cgpu_check_charge(0, 6, 0) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_charge(1, max, max) == CGPU_RC_NOMEM);	/* would wrap */
	CHECK(st, cgpu_check_charge(0, max, max) == CGPU_OK);
	CHECK(st, cgpu_check_charge(0, max, max + 1) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_charge(0, max, ~0ULL) == CGPU_RC_INVAL);

	CHECK(st, cgpu_check_uncharge(10, 10) == CGPU_OK);
	CHECK(st, cgpu_check_uncharge(10, 11) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_uncharge(10, 0) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_uncharge(0, ~0ULL) == CGPU_RC_INVAL);

	CHECK(st, cgpu_check_memsize(1, 0) == CGPU_OK);
	CHECK(st, cgpu_check_memsize(0, 0) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_memsize(max, 0) == CGPU_OK);
	CHECK(st, cgpu_check_memsize(max + 1, 0) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_memsize(5, 6) == CGPU_RC_BUSY);
	CHECK(st, cgpu_check_memsize(6, 6) == CGPU_OK);
	CHECK(st, cgpu_check_default_memsize(0) == CGPU_OK);
	CHECK(st, cgpu_check_default_memsize(max) == CGPU_OK);
	CHECK(st, cgpu_check_default_memsize(max + 1) == CGPU_RC_INVAL);

	CHECK(st, cgpu_check_max_inst(0, 0, 0) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_max_inst(1, 0, 0) == CGPU_OK);
	CHECK(st, cgpu_check_max_inst(25, 0, 0) == CGPU_OK);
	CHECK(st, cgpu_check_max_inst(26, 0, 0) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_max_inst(3, 4, 0) == CGPU_RC_BUSY);
	CHECK(st, cgpu_check_max_inst(3, 1, 4) == CGPU_RC_BUSY);
	CHECK(st, cgpu_check_max_inst(4, 4, 4) == CGPU_OK);

	CHECK(st, cgpu_check_policy(0) == CGPU_OK && cgpu_check_policy(5) == CGPU_OK);
	CHECK(st, cgpu_check_policy(6) == CGPU_RC_INVAL && cgpu_check_policy(~0ULL) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_prio_ratio(19) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_prio_ratio(20) == CGPU_OK && cgpu_check_prio_ratio(99) == CGPU_OK);
	CHECK(st, cgpu_check_prio_ratio(100) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_flag(0) == CGPU_OK && cgpu_check_flag(1) == CGPU_OK);
	CHECK(st, cgpu_check_flag(2) == CGPU_RC_INVAL);

	/* max_inst 16: one instance of weight 1 present, 15 free. */
	CHECK(st, cgpu_check_weight(16, 1, 1, 16) == CGPU_OK);
	CHECK(st, cgpu_check_weight(17, 1, 1, 16) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_weight(16, 1, 2, 16) == CGPU_RC_NOSPC);
	CHECK(st, cgpu_check_weight(15, 1, 2, 16) == CGPU_OK);
	CHECK(st, cgpu_check_weight(0, 1, 16, 16) == CGPU_OK);
	CHECK(st, cgpu_check_weight(1, 2, 1, 16) == CGPU_RC_NOSPC);	/* inconsistent */

	CHECK(st, cgpu_check_add(1, 0, 0, 1) == CGPU_OK);
	CHECK(st, cgpu_check_add(1, 1, 1, 1) == CGPU_RC_NOSPC);
	CHECK(st, cgpu_check_add(0, 1, 1, 2) == CGPU_OK);
	CHECK(st, cgpu_check_add(2, 1, 1, 2) == CGPU_RC_NOSPC);
	CHECK(st, cgpu_check_add(3, 0, 0, 2) == CGPU_RC_INVAL);
	CHECK(st, cgpu_check_add(0, 2, 0, 2) == CGPU_RC_NOSPC);	/* count, not weight */
	CHECK(st, cgpu_check_add(~0ULL, 0, 0, 25) == CGPU_RC_INVAL);
	CHECK(st, cgpu_default_weight(15, 16) == 1 && cgpu_default_weight(16, 16) == 0);
}

int cgpu_lib_selftest(void (*fail)(void *ctx, const char *what, int line), void *ctx)
{
	struct st st = { fail, ctx, 0 };

	test_values(&st);
	test_cmds(&st);
	test_rules(&st);
	test_upgrade(&st);
	return st.failed;
}
