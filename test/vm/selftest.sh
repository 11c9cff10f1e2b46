#!/usr/bin/env bash
# Checks the VM harness itself: the exit status comes back, a shared directory is
# written through, and a kernel WARNING fails the run whatever the command returned.
set -uo pipefail
cd "$(dirname "$0")/../.."
share=$(mktemp -d /tmp/cgpu-vm-selftest.XXXXXX)
trap 'rm -rf "$share"' EXIT
fails=0
test/vm/run.sh --share "$share" -- "echo written-in-the-vm >$share/out; exit 7"
rc=$?
[ "$rc" = 7 ] || { echo "FAIL: exit status $rc, want 7"; fails=$((fails + 1)); }
[ "$(cat "$share/out" 2>/dev/null)" = written-in-the-vm ] ||
	{ echo "FAIL: the shared directory was not written"; fails=$((fails + 1)); }
test/vm/run.sh -- 'echo "<4>WARNING: cgpu harness self-test" >/dev/kmsg; exit 0' >/dev/null 2>&1
rc=$?
[ "$rc" = 126 ] || { echo "FAIL: a kernel WARNING gave status $rc, want 126"; fails=$((fails + 1)); }
[ "$fails" = 0 ] && echo "vm harness self-test: passed"
[ "$fails" = 0 ]
