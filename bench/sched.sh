#!/usr/bin/env bash
# The compute scheduler (kmod/sched/cgs.c, the very code cgpu_km runs) on the simulated
# A10-like GPU of kmod/sched/sim, in simulated time: exact and repeatable. Its tables are
# in docs/scheduler.md; this names the figures README and docs quote.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
out=$(mktemp)
trap 'rm -f "$out"' EXIT
make -s -C kmod/sched .build/bench || exit 1
kmod/sched/.build/bench | tee "$out"
rc=${PIPESTATUS[0]}
# Table (a): batch, alone, w=1, w=2, ratio, error, ...
read -r lo hi err < <(awk '/^\(a\)/ { a = 1; next } a && /^target/ { exit }
	a && $1 ~ /^[0-9]+$/ { r = $5 + 0; e = substr($6, 1, length($6) - 1) + 0; e = e < 0 ? -e : e
		if (lo == "" || r < lo) lo = r; if (hi == "" || r > hi) hi = r; if (e > m) m = e }
	END { print lo, hi, m }' "$out")
figure "1:2 share ratio, batches 1..128 (simulated)" "2.0 +-2%" "$lo..$hi (max error ${err}%)" "$(le "$err" 2)"
# Every "request latency ... target max <= Q ms" line of table (b): the worst wait.
read -r wait n < <(awk '/target max <=/ { for (i = 1; i <= NF; i++) if ($i == "max" && $(i+1) ~ /^[0-9.]+$/) { w = $(i+1) + 0; if (w > m) m = w; n++; break } }
	END { print m + 0, n + 0 }' "$out")
figure "high-priority wait, busy low-priority tenants (simulated)" "<= 4 ms (one slice)" "max $wait ms over $n scenarios" "$([ "$n" -gt 0 ] && le "$wait" 4 || echo 0)"
use=$(awk '/target >= 97%/ { for (i = 1; i <= NF; i++) if ($i == "time,") { v = substr($(i+1), 1, length($(i+1)) - 1) + 0; if (m == "" || v < m) m = v } } END { print m }' "$out")
figure "GPU kept busy, all busy under policies 1, 2, 4, 5 (simulated)" ">= 97% of one alone" "min ${use}%" "$([ -n "$use" ] && ge "$use" 97 || echo 0)"
figure "every other target of the simulator's tables" "all met (exit 0)" "exit $rc" "$([ "$rc" = 0 ] && echo 1 || echo 0)"
bench_exit
