#!/usr/bin/env bash
# Checks the VM harness itself: the exit status comes back, a shared directory is
# written through, a kernel WARNING fails the run whatever the command returned, and
# --icount is refused with more than one vCPU.
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
# QEMU 7.2 under -icount brings up no second vCPU: refused before a boot that would hang.
msg=$(test/vm/run.sh --icount 0 -- true 2>&1)
rc=$?
[ "$rc" = 2 ] && [ "$msg" = "run.sh: --icount needs --cpus 1 (got 2)" ] ||
	{ echo "FAIL: --icount with 2 vCPUs gave status $rc: $msg"; fails=$((fails + 1)); }
[ "$fails" = 0 ] && echo "vm harness self-test: passed"
[ "$fails" = 0 ]
