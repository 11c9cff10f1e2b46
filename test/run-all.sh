#!/usr/bin/env bash
# Runs every suite under test/suites in name order; each is a script that exits non-zero
# on failure. Prints a summary and fails if any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
make all || { echo "run-all: build failed" >&2; exit 1; }
failed=()
for s in test/suites/*.sh; do
	[ -e "$s" ] || continue
	echo "=== suite $(basename "$s")"
	start=$(date +%s)
	if bash "$s"; then r=PASS; else r=FAIL; failed+=("$s"); fi
	echo "=== $r $(basename "$s") ($(( $(date +%s) - start ))s)"
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "run-all: FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "run-all: all suites passed"
