/*
 * The scheduler's benchmark on the model GPU: prints every figure and
 * exits 1 when a target is missed. Arguments pick tables: a, b, c (all by
 * default).
 */
#include "bench.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *want = argc > 1 ? argv[1] : "abc";

	printf("model of an A10-like GPU: context switch %llu us, hardware slice %llu ms; "
	       "quantum %llu ms, grace %llu ms\n\n",
	       (unsigned long long)MODEL_CTX_SWITCH_NS / 1000,
	       (unsigned long long)MODEL_HW_SLICE_NS / MS,
	       (unsigned long long)Q_NS / MS, (unsigned long long)CGS_DEF_GRACE_NS / MS);
	if (strchr(want, 'a'))
		bench_ratio();
	if (strchr(want, 'b'))
		bench_policies();
	if (strchr(want, 'c'))
		bench_switching();
	if (bench_misses()) {
		printf("bench: %d target(s) missed\n", bench_misses());
		return 1;
	}
	printf("bench: every target met\n");
	return 0;
}
