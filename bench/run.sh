#!/usr/bin/env bash
# make bench: runs every benchmark whose figures README.md and docs/ quote, and prints
# one table (figure, target, measured, verdict). Exits 1 when any figure misses its
# target or a benchmark fails. `bench/run.sh NAME...` runs only bench/NAME.sh; each
# benchmark also runs alone and fails on its own misses. Logs: $CGPU_BENCH_LOGS (default
# a temporary folder, printed).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
all=(sched gate docker vm enforce)
[ $# -gt 0 ] || set -- "${all[@]}"
logs=${CGPU_BENCH_LOGS:-$(mktemp -d /tmp/cgpu-bench.XXXXXX)}
mkdir -p "$logs"
failed=()
rm -f "$logs/figures"
for b in "$@"; do
	[ -f "bench/$b.sh" ] || { echo "bench: no benchmark bench/$b.sh" >&2; exit 2; }
	echo "=== bench $b (log: $logs/$b.log)"
	start=$(date +%s)
	bash "bench/$b.sh" >"$logs/$b.log" 2>&1
	rc=$?
	grep '^figure|' "$logs/$b.log" | sed "s/^figure|/$b|/" >>"$logs/figures"
	if [ "$rc" != 0 ]; then
		failed+=("$b")
		grep -q '^figure|' "$logs/$b.log" || tail -n 20 "$logs/$b.log" | sed 's/^/  | /'
	fi
	echo "=== $b: exit $rc ($(( $(date +%s) - start ))s)"
done
echo
{
	echo "bench|figure|target|measured|verdict"
	cat "$logs/figures" 2>/dev/null
} | column -t -s '|'
if [ ${#failed[@]} -gt 0 ]; then
	echo "bench: FAILED: ${failed[*]} (logs in $logs)" >&2
	exit 1
fi
echo "bench: every target met"
