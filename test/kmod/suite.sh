#!/usr/bin/env bash
# The kernel suite: runs inside the test VM (test/vm/run.sh) from the repo root, as
# root, with cgroup2 at /sys/fs/cgroup. Each t-*.sh loads and unloads cgpu_km itself.
# `suite.sh [NAME...]` runs only the named tests (e.g. t-ioctl); `--bench` adds the
# benchmark at the end.
set -uo pipefail
cd "$(dirname "$0")/../.."
bench=0 names=()
for a in "$@"; do
	if [ "$a" = --bench ]; then bench=1; else names+=("$a"); fi
done
[ ${#names[@]} -gt 0 ] || names=($(cd test/kmod && ls t-*.sh | sed 's/\.sh$//'))
failed=()
for t in "${names[@]}"; do
	start=$(date +%s)
	if bash "test/kmod/$t.sh"; then r=PASS; else r=FAIL; failed+=("$t"); fi
	echo "--- $r $t ($(( $(date +%s) - start ))s)"
done
[ "$bench" = 0 ] || bash test/kmod/bench.sh || failed+=(bench)
if [ ${#failed[@]} -gt 0 ]; then
	echo "kernel suite: FAILED: ${failed[*]}"
	exit 1
fi
echo "kernel suite: all passed"
