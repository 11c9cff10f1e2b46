/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef CGPU_LIB_NUM_H
#define CGPU_LIB_NUM_H
#include "types.h"

/* Exactly [s, s+len) as unsigned decimal digits, at least one, no overflow. */
enum cgpu_rc cgpu_parse_dec(const char *s, unsigned long len, cgpu_u64 *out);

/*
 * A procfs value write: optional blanks, decimal digits, optional blanks, at most one
 * newline and only at the very end. Anything else is CGPU_RC_INVAL.
 */
enum cgpu_rc cgpu_parse_value(const char *buf, unsigned long len, cgpu_u64 *out);

/* A blank-separated token of a command line; len 0 when the line is used up. */
struct cgpu_tok {
	const char *s;
	unsigned long len;
};

/* The next token at or after *pos in [buf, buf+len). */
struct cgpu_tok cgpu_next_tok(const char *buf, unsigned long len, unsigned long *pos);
/* The token is exactly word. */
int cgpu_tok_is(struct cgpu_tok t, const char *word);
/*
 * One command line of *len bytes: at most CGPU_CMD_MAX_LEN, one trailing newline
 * allowed (dropped from *len), no other newline and no NUL.
 */
enum cgpu_rc cgpu_one_line(const char *buf, unsigned long *len);

int cgpu_is_blank(char c);
int cgpu_is_lower_hex(char c);
/* Hex digit value of c in either case, or -1. */
int cgpu_hex_value(char c);

#endif
