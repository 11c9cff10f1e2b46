# Sourced by the benchmarks under bench/: one row of `make bench`'s table per figure.
# figure NAME TARGET MEASURED PASS: PASS is 1 when MEASURED meets TARGET. The row goes to
# stdout as "figure|NAME|TARGET|MEASURED|ok" (or MISS); bench_exit ends the benchmark with
# status 1 when any figure missed, so each benchmark fails on its own too.
bench_misses=0
figure() {
	local v=ok
	[ "$4" = 1 ] || { v=MISS; bench_misses=$((bench_misses + 1)); }
	printf 'figure|%s|%s|%s|%s\n' "$1" "$2" "$3" "$v"
}
bench_exit() {
	[ "$bench_misses" = 0 ] || { echo "$(basename "$0"): $bench_misses figure(s) missed their target" >&2; exit 1; }
	exit 0
}
# le A B / ge A B: numeric comparisons of decimals, as 1 or 0.
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? 1 : 0 }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { print (a >= b) ? 1 : 0 }'; }
