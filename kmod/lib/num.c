// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "num.h"

int cgpu_is_blank(char c)
{
	return c == ' ' || c == '\t';
}

int cgpu_is_lower_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int cgpu_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

struct cgpu_tok cgpu_next_tok(const char *buf, unsigned long len, unsigned long *pos)
{
	struct cgpu_tok t;

	while (*pos < len && cgpu_is_blank(buf[*pos]))
		(*pos)++;
	t.s = buf + *pos;
	while (*pos < len && !cgpu_is_blank(buf[*pos]))
		(*pos)++;
	t.len = (unsigned long)(buf + *pos - t.s);
	return t;
}

int cgpu_tok_is(struct cgpu_tok t, const char *word)
{
	unsigned long i;

	for (i = 0; i < t.len; i++)
		if (word[i] == '\0' || word[i] != t.s[i])
			return 0;
	return word[i] == '\0';
}

enum cgpu_rc cgpu_one_line(const char *buf, unsigned long *len)
{
	unsigned long i;

	if (*len > CGPU_CMD_MAX_LEN)
		return CGPU_RC_INVAL;
	if (*len > 0 && buf[*len - 1] == '\n')
		(*len)--;
	for (i = 0; i < *len; i++)
		if (buf[i] == '\n' || buf[i] == '\0')
			return CGPU_RC_INVAL;
	return CGPU_OK;
}

enum cgpu_rc cgpu_parse_dec(const char *s, unsigned long len, cgpu_u64 *out)
{
	cgpu_u64 v = 0;
	unsigned long i;

	if (len == 0)
		return CGPU_RC_INVAL;
	for (i = 0; i < len; i++) {
		unsigned int d;

		if (s[i] < '0' || s[i] > '9')
			return CGPU_RC_INVAL;
		d = (unsigned int)(s[i] - '0');
		if (__builtin_mul_overflow(v, 10ULL, &v) || __builtin_add_overflow(v, d, &v))
			return CGPU_RC_INVAL;
	}
	*out = v;
	return CGPU_OK;
}

enum cgpu_rc cgpu_parse_value(const char *buf, unsigned long len, cgpu_u64 *out)
{
	unsigned long start = 0, end;

	if (len > 0 && buf[len - 1] == '\n')
		len--;
	while (start < len && cgpu_is_blank(buf[start]))
		start++;
	end = start;
	while (end < len && buf[end] >= '0' && buf[end] <= '9')
		end++;
	for (unsigned long i = end; i < len; i++)
		if (!cgpu_is_blank(buf[i]))
			return CGPU_RC_INVAL;
	return cgpu_parse_dec(buf + start, end - start, out);
}
