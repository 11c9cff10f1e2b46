// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "instctl.h"
#include "num.h"

enum cgpu_rc cgpu_parse_container_id(const char *s, unsigned long len,
				     char out[CGPU_ID_LEN + 1])
{
	unsigned long i;

	if (len < CGPU_ID_LEN || len > CGPU_FULL_ID_LEN)
		return CGPU_RC_INVAL;
	for (i = 0; i < len; i++)
		if (!cgpu_is_lower_hex(s[i]))
			return CGPU_RC_INVAL;
	for (i = 0; i < CGPU_ID_LEN; i++)
		out[i] = s[i];
	out[CGPU_ID_LEN] = '\0';
	return CGPU_OK;
}

enum cgpu_rc cgpu_parse_gpu_uuid(const char *s, unsigned long len, cgpu_u8 out[CGPU_UUID_BYTES])
{
	static const char shape[] = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	cgpu_u8 b[CGPU_UUID_BYTES] = { 0 };
	unsigned long i, nibble = 0;

	if (len != sizeof(shape) - 1)
		return CGPU_RC_INVAL;
	for (i = 0; i < len; i++) {
		int v;

		if (shape[i] != 'x') {
			if (s[i] != shape[i])
				return CGPU_RC_INVAL;
			continue;
		}
		v = cgpu_hex_value(s[i]);
		if (v < 0)
			return CGPU_RC_INVAL;
		b[nibble / 2] = (cgpu_u8)(b[nibble / 2] | (v << (nibble % 2 ? 0 : 4)));
		nibble++;
	}
	for (i = 0; i < CGPU_UUID_BYTES; i++)
		out[i] = b[i];
	return CGPU_OK;
}

/* One key=value field of an add command into *cmd; each key at most once. */
static enum cgpu_rc parse_field(struct cgpu_tok t, struct cgpu_cmd *cmd)
{
	unsigned long eq = 0;
	struct cgpu_tok key, val;
	cgpu_u64 v;

	while (eq < t.len && t.s[eq] != '=')
		eq++;
	if (eq == t.len)
		return CGPU_RC_INVAL;
	key.s = t.s;
	key.len = eq;
	val.s = t.s + eq + 1;
	val.len = t.len - eq - 1;

	if (cgpu_tok_is(key, "uuid")) {
		if (cmd->has & CGPU_HAS_UUID)
			return CGPU_RC_INVAL;
		cmd->has |= CGPU_HAS_UUID;
		return cgpu_parse_gpu_uuid(val.s, val.len, cmd->uuid);
	}
	if (cgpu_parse_dec(val.s, val.len, &v) != CGPU_OK)
		return CGPU_RC_INVAL;
	if (cgpu_tok_is(key, "memsize") && !(cmd->has & CGPU_HAS_MEMSIZE)) {
		if (v == 0 || v > CGPU_MAX_BYTES)
			return CGPU_RC_INVAL;
		cmd->has |= CGPU_HAS_MEMSIZE;
		cmd->memsize = v;
	} else if (cgpu_tok_is(key, "weight") && !(cmd->has & CGPU_HAS_WEIGHT)) {
		cmd->has |= CGPU_HAS_WEIGHT;
		cmd->weight = v;
	} else if (cgpu_tok_is(key, "highprio") && !(cmd->has & CGPU_HAS_HIGHPRIO)) {
		if (v > 1)
			return CGPU_RC_INVAL;
		cmd->has |= CGPU_HAS_HIGHPRIO;
		cmd->highprio = (cgpu_u32)v;
	} else {
		return CGPU_RC_INVAL;
	}
	return CGPU_OK;
}

enum cgpu_rc cgpu_parse_cmd(const char *buf, unsigned long len, struct cgpu_cmd *cmd)
{
	struct cgpu_cmd c = { 0 };
	unsigned long pos = 0;
	struct cgpu_tok t;

	if (cgpu_one_line(buf, &len) != CGPU_OK)	/* a second line or a NUL is not one command */
		return CGPU_RC_INVAL;

	t = cgpu_next_tok(buf, len, &pos);
	if (cgpu_tok_is(t, "add"))
		c.op = CGPU_CMD_ADD;
	else if (cgpu_tok_is(t, "del"))
		c.op = CGPU_CMD_DEL;
	else if (cgpu_tok_is(t, "bind"))
		c.op = CGPU_CMD_BIND;
	else
		return CGPU_RC_INVAL;
	t = cgpu_next_tok(buf, len, &pos);
	if (cgpu_parse_dec(t.s, t.len, &c.gpu) != CGPU_OK)
		return CGPU_RC_INVAL;
	t = cgpu_next_tok(buf, len, &pos);
	if (cgpu_parse_container_id(t.s, t.len, c.id) != CGPU_OK)
		return CGPU_RC_INVAL;
	if (c.op == CGPU_CMD_BIND) {
		t = cgpu_next_tok(buf, len, &pos);
		if (cgpu_parse_dec(t.s, t.len, &c.pid) != CGPU_OK || c.pid < 1 ||
		    c.pid > CGPU_PID_MAX || cgpu_next_tok(buf, len, &pos).len)
			return CGPU_RC_INVAL;
		*cmd = c;
		return CGPU_OK;
	}
	for (t = cgpu_next_tok(buf, len, &pos); t.len > 0; t = cgpu_next_tok(buf, len, &pos))
		if (c.op == CGPU_CMD_DEL || parse_field(t, &c) != CGPU_OK)
			return CGPU_RC_INVAL;
	*cmd = c;
	return CGPU_OK;
}
