// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "rules.h"

static enum cgpu_rc in_range(cgpu_u64 v, cgpu_u64 lo, cgpu_u64 hi)
{
	return v >= lo && v <= hi ? CGPU_OK : CGPU_RC_INVAL;
}

enum cgpu_rc cgpu_check_charge(cgpu_u64 used, cgpu_u64 memsize, cgpu_u64 bytes)
{
	if (in_range(bytes, 1, CGPU_MAX_BYTES) != CGPU_OK)
		return CGPU_RC_INVAL;
	/* Written as a difference: used + bytes could wrap. */
	if (used > memsize || bytes > memsize - used)
		return CGPU_RC_NOMEM;
	return CGPU_OK;
}

enum cgpu_rc cgpu_check_uncharge(cgpu_u64 held, cgpu_u64 bytes)
{
	return in_range(bytes, 1, held);
}

enum cgpu_rc cgpu_check_memsize(cgpu_u64 memsize, cgpu_u64 used)
{
	if (in_range(memsize, 1, CGPU_MAX_BYTES) != CGPU_OK)
		return CGPU_RC_INVAL;
	return memsize < used ? CGPU_RC_BUSY : CGPU_OK;
}

enum cgpu_rc cgpu_check_default_memsize(cgpu_u64 v)
{
	return in_range(v, 0, CGPU_MAX_BYTES);
}

enum cgpu_rc cgpu_check_max_inst(cgpu_u64 v, cgpu_u32 ninst, cgpu_u32 weight_used)
{
	if (in_range(v, CGPU_MAX_INST_MIN, CGPU_MAX_INST_MAX) != CGPU_OK)
		return CGPU_RC_INVAL;
	return v < ninst || v < weight_used ? CGPU_RC_BUSY : CGPU_OK;
}

enum cgpu_rc cgpu_check_policy(cgpu_u64 v)
{
	return in_range(v, 0, CGPU_POLICY_MAX);
}

enum cgpu_rc cgpu_check_prio_ratio(cgpu_u64 v)
{
	return in_range(v, CGPU_PRIO_RATIO_MIN, CGPU_PRIO_RATIO_MAX);
}

enum cgpu_rc cgpu_check_flag(cgpu_u64 v)
{
	return in_range(v, 0, 1);
}

enum cgpu_rc cgpu_check_weight(cgpu_u64 v, cgpu_u32 old, cgpu_u32 weight_used, cgpu_u32 max_inst)
{
	if (in_range(v, 0, max_inst) != CGPU_OK)
		return CGPU_RC_INVAL;
	if (old > weight_used || weight_used - old > max_inst)
		return CGPU_RC_NOSPC;	/* inconsistent books: refuse, never wrap */
	return v > max_inst - (weight_used - old) ? CGPU_RC_NOSPC : CGPU_OK;
}

enum cgpu_rc cgpu_check_add(cgpu_u64 weight, cgpu_u32 ninst, cgpu_u32 weight_used,
			    cgpu_u32 max_inst)
{
	if (in_range(weight, 0, max_inst) != CGPU_OK)
		return CGPU_RC_INVAL;
	if (ninst >= max_inst || weight_used > max_inst || weight > max_inst - weight_used)
		return CGPU_RC_NOSPC;
	return CGPU_OK;
}

cgpu_u32 cgpu_default_weight(cgpu_u32 weight_used, cgpu_u32 max_inst)
{
	return weight_used < max_inst ? CGPU_WEIGHT_DEFAULT : 0;
}

struct cgpu_level {
	cgpu_u32 shift, bytes;
};

/*
 * The tables of levels[n] a span of size bytes can touch placed anywhere: per level its
 * size over what one table covers, and one more at each edge. No wrap: the largest term
 * is size / 512, and the levels add less than as much.
 */
static cgpu_u64 cgpu_tables(cgpu_u64 size, const struct cgpu_level *level, unsigned int n)
{
	cgpu_u64 sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += ((size >> level[i].shift) + 2) * level[i].bytes;
	return sum;
}

cgpu_u64 cgpu_range_tables(cgpu_u64 size)
{
	static const struct cgpu_level level[] = {
		{ 21, 4096 }, { 21, 256 }, { 29, 4096 }, { 38, 4096 }, { 47, 4096 }, { 56, 4096 },
	};
	const cgpu_u64 chunk = 64 * 1024;
	cgpu_u64 sum = cgpu_tables(size, level, sizeof(level) / sizeof(level[0]));

	return (sum + chunk - 1) / chunk * chunk;
}

cgpu_u64 cgpu_map_tables(cgpu_u64 size)
{
	static const struct cgpu_level level[] = {
		{ 21, 4096 }, { 29, 4096 }, { 38, 4096 }, { 47, 4096 }, { 56, 4096 },
	};

	return cgpu_tables(size, level, sizeof(level) / sizeof(level[0]));
}

cgpu_u64 cgpu_sparse_tables(cgpu_u64 length)
{
	static const struct cgpu_level level[] = {
		{ 21, 256 }, { 29, 4096 }, { 38, 4096 }, { 47, 4096 }, { 56, 4096 },
	};

	return cgpu_tables(length, level, sizeof(level) / sizeof(level[0]));
}
