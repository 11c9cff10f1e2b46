// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "upgradecmd.h"
#include "num.h"
#include "rules.h"

/* key=value with a decimal value, key exactly as given. */
static enum cgpu_rc key_value(struct cgpu_tok t, const char *key, cgpu_u64 *v)
{
	unsigned long eq = 0;
	struct cgpu_tok k;

	while (eq < t.len && t.s[eq] != '=')
		eq++;
	k.s = t.s;
	k.len = eq;
	if (eq == t.len || !cgpu_tok_is(k, key))
		return CGPU_RC_INVAL;
	return cgpu_parse_dec(t.s + eq + 1, t.len - eq - 1, v);
}

/* max_inst=, policy=, prio_ratio=, each once, in any order, nothing else. */
static enum cgpu_rc gpu_settings(const char *buf, unsigned long len, unsigned long *pos,
				 struct cgpu_upd *u)
{
	unsigned int seen = 0;
	struct cgpu_tok t;
	cgpu_u64 v;

	for (t = cgpu_next_tok(buf, len, pos); t.len > 0; t = cgpu_next_tok(buf, len, pos)) {
		if (key_value(t, "max_inst", &v) == CGPU_OK && !(seen & 1) &&
		    cgpu_check_max_inst(v, 0, 0) == CGPU_OK) {
			seen |= 1;
			u->max_inst = (cgpu_u32)v;
		} else if (key_value(t, "policy", &v) == CGPU_OK && !(seen & 2) &&
			   cgpu_check_policy(v) == CGPU_OK) {
			seen |= 2;
			u->policy = (cgpu_u32)v;
		} else if (key_value(t, "prio_ratio", &v) == CGPU_OK && !(seen & 4) &&
			   cgpu_check_prio_ratio(v) == CGPU_OK) {
			seen |= 4;
			u->prio_ratio = (cgpu_u32)v;
		} else {
			return CGPU_RC_INVAL;
		}
	}
	return seen == 7 ? CGPU_OK : CGPU_RC_INVAL;
}

/* A handle of RM's (u32, never 0) in key=value. */
static int handle_value(struct cgpu_tok t, const char *key, cgpu_u64 *v)
{
	return key_value(t, key, v) == CGPU_OK && *v && *v <= 0xffffffffULL;
}

/*
 * charge's and obj's GPU ID PID BYTES, then their keys: start= for both; channels= and
 * keep=1 for charge; client=, handle=, parent=, grand=, or map= instead of the first
 * four, and same=1 for obj. Each at most once, in any order, nothing else.
 */
static enum cgpu_rc charge(const char *buf, unsigned long len, unsigned long *pos,
			   struct cgpu_upd *u)
{
	int obj = u->op == CGPU_UPD_OBJ;
	struct cgpu_tok t = cgpu_next_tok(buf, len, pos);
	unsigned int seen = 0;

	if (cgpu_parse_dec(t.s, t.len, &u->gpu) != CGPU_OK)
		return CGPU_RC_INVAL;
	t = cgpu_next_tok(buf, len, pos);
	if (cgpu_parse_container_id(t.s, t.len, u->id) != CGPU_OK)
		return CGPU_RC_INVAL;
	t = cgpu_next_tok(buf, len, pos);
	if (cgpu_parse_dec(t.s, t.len, &u->pid) != CGPU_OK || u->pid < 1 || u->pid > CGPU_PID_MAX)
		return CGPU_RC_INVAL;
	t = cgpu_next_tok(buf, len, pos);
	if (cgpu_parse_dec(t.s, t.len, &u->bytes) != CGPU_OK || u->bytes > CGPU_MAX_BYTES)
		return CGPU_RC_INVAL;
	for (t = cgpu_next_tok(buf, len, pos); t.len > 0; t = cgpu_next_tok(buf, len, pos)) {
		/* Format 1 had no start time; 0 would match any process of that pid. */
		if (key_value(t, "start", &u->start) == CGPU_OK && !(seen & 1) && u->start)
			seen |= 1;
		else if (!obj && key_value(t, "channels", &u->channels) == CGPU_OK &&
			 !(seen & 2) && u->channels && u->channels <= CGPU_CHANNELS_MAX)
			seen |= 2;
		else if (!obj && !(seen & 64) && key_value(t, "keep", &u->keep) == CGPU_OK &&
			 u->keep == 1)
			seen |= 64;
		else if (obj && !(seen & 4) && handle_value(t, "client", &u->client))
			seen |= 4;
		else if (obj && !(seen & 8) && handle_value(t, "handle", &u->handle))
			seen |= 8;
		else if (obj && !(seen & 16) && handle_value(t, "parent", &u->parent))
			seen |= 16;
		else if (obj && !(seen & 32) && handle_value(t, "grand", &u->grand))
			seen |= 32;
		else if (obj && !(seen & 128) && handle_value(t, "map", &u->map))
			seen |= 128;
		else if (obj && !(seen & 256) && key_value(t, "same", &u->same) == CGPU_OK &&
			 u->same == 1)
			seen |= 256;
		else
			return CGPU_RC_INVAL;
	}
	/*
	 * A line that holds nothing is not written by any module; an object is memory, with
	 * its client, its handle and its parent, none of them the client itself, or else
	 * nvidia-uvm's duplicate for a mapping (map=), with none of them.
	 */
	if (!obj)
		return u->bytes || u->channels ? CGPU_OK : CGPU_RC_INVAL;
	if (!u->bytes)
		return CGPU_RC_INVAL;
	if (seen & 128)
		return seen & 60 ? CGPU_RC_INVAL : CGPU_OK;
	return (seen & 28) == 28 && u->handle != u->client && u->parent != u->client &&
	       u->grand != u->client ? CGPU_OK : CGPU_RC_INVAL;
}

static int version_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '.' || c == '+' || c == '~' || c == '_' || c == '-';
}

/* t as a version into out (CGPU_VERSION_MAX + 1 bytes). */
static enum cgpu_rc version(struct cgpu_tok t, char *out)
{
	unsigned long i;

	if (t.len < 1 || t.len > CGPU_VERSION_MAX)
		return CGPU_RC_INVAL;
	for (i = 0; i < t.len; i++) {
		if (!version_char(t.s[i]))
			return CGPU_RC_INVAL;
		out[i] = t.s[i];
	}
	out[t.len] = '\0';
	return CGPU_OK;
}

/* freeze's optional to=<version>, nothing after it. */
static enum cgpu_rc freeze_target(const char *buf, unsigned long len, unsigned long *pos,
				  struct cgpu_upd *u)
{
	struct cgpu_tok t = cgpu_next_tok(buf, len, pos), v;

	if (!t.len)
		return CGPU_OK;
	if (t.len < 3 || t.s[0] != 't' || t.s[1] != 'o' || t.s[2] != '=')
		return CGPU_RC_INVAL;
	v.s = t.s + 3;
	v.len = t.len - 3;
	if (version(v, u->version) != CGPU_OK)
		return CGPU_RC_INVAL;
	return cgpu_next_tok(buf, len, pos).len ? CGPU_RC_INVAL : CGPU_OK;
}

/* A word and one decimal value, nothing after it. */
static enum cgpu_rc one_value(const char *buf, unsigned long len, unsigned long *pos,
			      cgpu_u64 *v)
{
	struct cgpu_tok t = cgpu_next_tok(buf, len, pos);

	if (cgpu_parse_dec(t.s, t.len, v) != CGPU_OK)
		return CGPU_RC_INVAL;
	return cgpu_next_tok(buf, len, pos).len ? CGPU_RC_INVAL : CGPU_OK;
}

enum cgpu_rc cgpu_parse_upgrade(const char *buf, unsigned long len, struct cgpu_upd *out)
{
	static const struct { const char *word; enum cgpu_upd_op op; } bare[] = {
		{ "thaw", CGPU_UPD_THAW }, { "commit", CGPU_UPD_COMMIT },
	};
	struct cgpu_upd u = { 0 };
	unsigned long pos = 0, i;
	struct cgpu_tok t;
	enum cgpu_rc rc = CGPU_RC_INVAL;

	if (len > CGPU_CMD_MAX_LEN)
		return CGPU_RC_INVAL;
	if (cgpu_parse_value(buf, len, &u.value) == CGPU_OK) {
		if (cgpu_check_flag(u.value) != CGPU_OK)
			return CGPU_RC_INVAL;
		u.op = CGPU_UPD_UNPIN;
		*out = u;
		return CGPU_OK;
	}
	if (cgpu_one_line(buf, &len) != CGPU_OK)
		return CGPU_RC_INVAL;
	t = cgpu_next_tok(buf, len, &pos);
	for (i = 0; i < sizeof(bare) / sizeof(bare[0]); i++) {
		if (cgpu_tok_is(t, bare[i].word)) {
			u.op = bare[i].op;
			rc = cgpu_next_tok(buf, len, &pos).len ? CGPU_RC_INVAL : CGPU_OK;
		}
	}
	if (cgpu_tok_is(t, "freeze")) {
		u.op = CGPU_UPD_FREEZE;
		rc = freeze_target(buf, len, &pos, &u);
	} else if (cgpu_tok_is(t, "from")) {
		u.op = CGPU_UPD_FROM;
		rc = version(cgpu_next_tok(buf, len, &pos), u.version);
		if (rc == CGPU_OK && cgpu_next_tok(buf, len, &pos).len)
			rc = CGPU_RC_INVAL;
	} else if (cgpu_tok_is(t, "format")) {
		u.op = CGPU_UPD_FORMAT;
		rc = one_value(buf, len, &pos, &u.value);
		if (rc == CGPU_OK && u.value == 0)
			rc = CGPU_RC_INVAL;
	} else if (cgpu_tok_is(t, "default_memsize")) {
		u.op = CGPU_UPD_DEFAULT_MEMSIZE;
		rc = one_value(buf, len, &pos, &u.value);
		if (rc == CGPU_OK)
			rc = cgpu_check_default_memsize(u.value);
	} else if (cgpu_tok_is(t, "gpu")) {
		u.op = CGPU_UPD_GPU;
		t = cgpu_next_tok(buf, len, &pos);
		rc = cgpu_parse_dec(t.s, t.len, &u.gpu);
		if (rc == CGPU_OK)
			rc = gpu_settings(buf, len, &pos, &u);
	} else if (cgpu_tok_is(t, "add")) {
		u.op = CGPU_UPD_ADD;
		rc = cgpu_parse_cmd(buf, len, &u.add);
		if (rc == CGPU_OK && u.add.op != CGPU_CMD_ADD)
			rc = CGPU_RC_INVAL;
	} else if (cgpu_tok_is(t, "bind")) {
		u.op = CGPU_UPD_BIND;
		rc = cgpu_parse_cmd(buf, len, &u.add);
		if (rc == CGPU_OK && u.add.op != CGPU_CMD_BIND)
			rc = CGPU_RC_INVAL;
	} else if (cgpu_tok_is(t, "charge")) {
		u.op = CGPU_UPD_CHARGE;
		rc = charge(buf, len, &pos, &u);
	} else if (cgpu_tok_is(t, "obj")) {
		u.op = CGPU_UPD_OBJ;
		rc = charge(buf, len, &pos, &u);
	}
	if (rc != CGPU_OK || !u.op)
		return CGPU_RC_INVAL;
	*out = u;
	return CGPU_OK;
}
