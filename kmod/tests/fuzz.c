// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer target for every parser that reads bytes a user wrote. Besides not
 * crashing, each accepted input must mean what the contract says it means.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../lib/instctl.h"
#include "../lib/num.h"
#include "../lib/upgradecmd.h"

#define REQUIRE(c) do { if (!(c)) { fprintf(stderr, "violated: %s\n", #c); abort(); } } while (0)

static void value(const char *d, size_t n)
{
	char again[32];
	cgpu_u64 v;

	if (cgpu_parse_value(d, n, &v) != CGPU_OK)
		return;
	/* Whatever was accepted prints back to a form that parses to the same number. */
	snprintf(again, sizeof(again), "%llu\n", v);
	REQUIRE(cgpu_parse_value(again, strlen(again), &v) == CGPU_OK);
	REQUIRE(strtoull(again, NULL, 10) == v);
}

static void command(const char *d, size_t n)
{
	struct cgpu_cmd c;

	if (cgpu_parse_cmd(d, n, &c) != CGPU_OK)
		return;
	REQUIRE(n <= CGPU_CMD_MAX_LEN);
	REQUIRE(c.op == CGPU_CMD_ADD || c.op == CGPU_CMD_DEL || c.op == CGPU_CMD_BIND);
	REQUIRE(c.op != CGPU_CMD_BIND || (c.pid >= 1 && c.pid <= CGPU_PID_MAX));
	REQUIRE(strlen(c.id) == CGPU_ID_LEN && memmem(d, n, c.id, CGPU_ID_LEN));
	REQUIRE(c.op == CGPU_CMD_ADD || c.has == 0);
	REQUIRE(!(c.has & CGPU_HAS_MEMSIZE) || (c.memsize >= 1 && c.memsize <= CGPU_MAX_BYTES));
	REQUIRE(c.highprio <= 1);
}

static void upgrade(const char *d, size_t n)
{
	struct cgpu_upd u;

	if (cgpu_parse_upgrade(d, n, &u) != CGPU_OK)
		return;
	REQUIRE(n <= CGPU_CMD_MAX_LEN);
	REQUIRE(u.op >= CGPU_UPD_UNPIN && u.op <= CGPU_UPD_OBJ);
	REQUIRE(strlen(u.version) <= CGPU_VERSION_MAX && memmem(d, n, u.version, strlen(u.version)));
	REQUIRE(u.op != CGPU_UPD_FROM || u.version[0]);
	REQUIRE(u.op == CGPU_UPD_FROM || u.op == CGPU_UPD_FREEZE || !u.version[0]);
	REQUIRE(u.op != CGPU_UPD_UNPIN || u.value <= 1);
	REQUIRE(u.op != CGPU_UPD_FORMAT || u.value >= 1);
	REQUIRE(u.op != CGPU_UPD_DEFAULT_MEMSIZE || u.value <= CGPU_MAX_BYTES);
	REQUIRE(u.op != CGPU_UPD_GPU || (u.max_inst >= CGPU_MAX_INST_MIN &&
		u.max_inst <= CGPU_MAX_INST_MAX && u.policy <= CGPU_POLICY_MAX &&
		u.prio_ratio >= CGPU_PRIO_RATIO_MIN && u.prio_ratio <= CGPU_PRIO_RATIO_MAX));
	REQUIRE(u.op != CGPU_UPD_ADD || u.add.op == CGPU_CMD_ADD);
	REQUIRE(u.op != CGPU_UPD_BIND || u.add.op == CGPU_CMD_BIND);
	REQUIRE(u.op != CGPU_UPD_CHARGE || (u.pid >= 1 && u.pid <= CGPU_PID_MAX &&
		u.bytes <= CGPU_MAX_BYTES && u.channels <= CGPU_CHANNELS_MAX &&
		(u.bytes || u.channels) && u.keep <= 1 && memmem(d, n, u.id, CGPU_ID_LEN)));
	REQUIRE(u.op == CGPU_UPD_CHARGE || !u.keep);
	REQUIRE(u.op != CGPU_UPD_OBJ || (u.pid >= 1 && u.pid <= CGPU_PID_MAX && u.bytes >= 1 &&
		u.bytes <= CGPU_MAX_BYTES && !u.channels && memmem(d, n, u.id, CGPU_ID_LEN) &&
		u.same <= 1));
	/* An object is named by RM's handles or by nvidia-uvm's duplicate, never both. */
	REQUIRE(u.op != CGPU_UPD_OBJ || u.map || (u.client >= 1 && u.client <= 0xffffffffULL &&
		u.handle >= 1 && u.handle <= 0xffffffffULL && u.parent >= 1 &&
		u.parent <= 0xffffffffULL && u.grand <= 0xffffffffULL && u.handle != u.client &&
		u.parent != u.client && u.grand != u.client));
	REQUIRE(!u.map || (u.map <= 0xffffffffULL && !(u.client | u.handle | u.parent | u.grand)));
	REQUIRE(u.op == CGPU_UPD_OBJ || !(u.client | u.handle | u.parent | u.grand | u.map | u.same));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy, so reading one byte past size is caught by ASan. */
	char *d = malloc(size ? size : 1);

	memcpy(d, data, size);
	value(d, size);
	command(d, size);
	upgrade(d, size);
	free(d);
	return 0;
}
