#!/usr/bin/env bash
# Runs every suite under test/suites in name order; each is a script that exits non-zero
# on failure. Prints a summary and fails if any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
make all || { echo "run-all: build failed" >&2; exit 1; }
failed=() times=()
# Each suite's output, kept when one fails (the excerpt below names the file).
logs=$(mktemp -d /tmp/cgpu-suites.XXXXXX)
t0=$(date +%s)
for s in test/suites/*.sh; do
	[ -e "$s" ] || continue
	echo "=== suite $(basename "$s")"
	start=$(date +%s)
	if bash "$s" 2>&1 | tee "$logs/$(basename "$s").log"; [ "${PIPESTATUS[0]}" = 0 ]; then
		r=PASS
	else
		r=FAIL failed+=("$s")
	fi
	times+=("$(printf '%-24s %s %5ss' "$(basename "$s")" "$r" $(( $(date +%s) - start )))")
	echo "=== $r $(basename "$s") ($(( $(date +%s) - start ))s)"
done
echo "=== suite times"
printf '  %s\n' "${times[@]}"
echo "  total                         $(( $(date +%s) - t0 ))s"
echo "suites: $(( ${#times[@]} - ${#failed[@]} )) passed, ${#failed[@]} failed"
if [ ${#failed[@]} -gt 0 ]; then
	# Only the tail of a CI run's output may be kept: each failed suite's failing lines
	# come last, so the reason survives without the full log.
	for s in "${failed[@]}"; do
		echo "=== why $(basename "$s") failed (full log: $logs/$(basename "$s").log)"
		# go test prints a failure's reason on the lines under "--- FAIL:", which may
		# name no file (a fuzz coordinator's error): the two after it go too.
		awk '/--- FAIL:/ { n = 3 } n > 0 { n--; print; next }
			/FAIL|[Ff]ail(ed|s|ure)|not ok|panic|WARNING:|BUG:|Oops|[Tt]imed out|lockdep|run\.sh:|Error [0-9]|_test\.go:[0-9]+:|\|MISS$|missed their target/' \
			"$logs/$(basename "$s").log" | tail -n 25 | cut -c1-300
	done
	echo "run-all: FAILED: ${failed[*]}" >&2
	exit 1
fi
rm -rf "$logs"
echo "run-all: all suites passed"
