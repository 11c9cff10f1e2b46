#!/usr/bin/env bash
# What cgpu_km's enforcement at the driver's ioctl costs (issue 16): in the test VM
# (QEMU TCG, Debian's kernel), against the stand-in driver, cgpu_km loaded with enforce=1
# against it detached, side by side in one run, rounds in turns
# (simdrv/tests/enforce-bench.sh, which prints the figures), counted in instructions:
# QEMU's -icount 0 makes a guest nanosecond one instruction, so the figures are the
# same on every run (one vCPU: QEMU 7.2 brings up no second one under -icount). Targets:
# a call from a host process or an unlimited container <= 1.05x; an alloc+free of video
# memory from a limited container <= 1.5x. Suite 57 runs it too, as a gate.
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "bench/enforce.sh: needs root (QEMU)" >&2; exit 1; }
make -s -j1 -C kmod modules >/dev/null && make -s -j1 -C simdrv modules vmtest >/dev/null || exit 1
# Unprefixed guest output: the figure lines reach the log as lines of their own.
CGPU_VM_QUIET=1 test/vm/run.sh --icount 0 --cpus 1 --timeout 600 -- bash simdrv/tests/enforce-bench.sh
