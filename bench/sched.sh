#!/usr/bin/env bash
# The compute scheduler (kmod/sched/cgs.c, the very code cgpu_km runs) on the simulated
# A10-like GPU of kmod/sched/model, in simulated time: exact and repeatable. Its tables are
# in docs/scheduler.md; this names the figures README and docs quote.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
out=$(mktemp)
trap 'rm -f "$out" "$out.orig"' EXIT
make -s -C kmod/sched .build/bench .build/bench-original || exit 1
kmod/sched/.build/bench | tee "$out"
rc=${PIPESTATUS[0]}
kmod/sched/.build/bench-original a | tee "$out.orig"
orc=${PIPESTATUS[0]}
# Table (a): batch, alone, w=1, w=2, ratio, error, ...
read -r lo hi err < <(awk '/^\(a\)/ { a = 1; next } a && /^target/ { exit }
	a && $1 ~ /^[0-9]+$/ { r = $5 + 0; e = substr($6, 1, length($6) - 1) + 0; e = e < 0 ? -e : e
		if (lo == "" || r < lo) lo = r; if (hi == "" || r > hi) hi = r; if (e > m) m = e }
	END { printf "%.3f %.3f %.2f\n", lo, hi, m }' "$out")
figure "1:2 share ratio, batches 1..128 (scheduler model)" "2.0 +-2%" "$lo..$hi (max error ${err}%)" "$(le "$err" 2)"
# Every "target max <= BOUND ms" line of table (b): the worst wait and its bound (one
# slice, or the step the holder queued when longer: kernels cannot be taken back).
read -r wait bound n bad < <(awk '/target max <=/ {
	for (i = 1; i <= NF; i++) {
		if ($i == "max" && $(i+1) ~ /^[0-9.]+$/ && !w) w = $(i+1) + 0
		if ($i == "<=") b = $(i+1) + 0
	}
	if (w > m) { m = w; mb = b } if (w > b) x++; n++; w = 0 }
	END { print m + 0, mb + 0, n + 0, x + 0 }' "$out")
figure "high-priority wait, two busy tenants queueing whole steps (scheduler model)" \
	"<= one 4 ms slice or the queued step" "max $wait ms (bound $bound ms) over $n scenarios" \
	"$([ "$n" -gt 0 ] && [ "$bad" = 0 ] && echo 1 || echo 0)"
use=$(awk '/target >= 97%/ { for (i = 1; i <= NF; i++) if ($i == "time,") { v = substr($(i+1), 1, length($(i+1)) - 1) + 0; if (m == "" || v < m) m = v } } END { print m }' "$out")
figure "GPU kept busy, all busy under policies 1, 2, 4, 5 (scheduler model)" ">= 97% of one alone" "min ${use}%" "$([ -n "$use" ] && ge "$use" 97 || echo 0)"
# The original's drift, from a model of its accounting (cgs.c built with
# CGS_MODEL_ORIGINAL: drains past the deadline free), against SPEC's own figures.
read -r m1 m128 s1 s128 < <(awk '$1 == "1" && NF >= 9 { a = $5; b = $8 } $1 == "128" && NF >= 9 { c = $5; d = $8 }
	END { print a, c, b, d }' "$out.orig")
figure "the original's 1:2 drift, its accounting modelled (scheduler model)" "SPEC's $s1..$s128 within 0.05" "$m1..$m128 at batch 1..128" "$([ "$orc" = 0 ] && echo 1 || echo 0)"
figure "every other target of the scheduler model's tables" "all met (exit 0)" "exit $rc" "$([ "$rc" = 0 ] && echo 1 || echo 0)"
bench_exit
