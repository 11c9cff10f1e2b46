#!/usr/bin/env bash
# Everything test/gpu/ has for a machine with an NVIDIA GPU, in one command for a device
# session's few minutes: rmtrace.sh (what libcuda asks of the driver, about a minute),
# then accept.sh (libcgpu's real-GPU acceptance, about 3 minutes). Each one's output goes
# to the terminal and to $OUT/NAME.log ($OUT/NAME/ holds its files); ends with one line
# per script and exits 1 if either failed. Run from anywhere: bash test/gpu/run.sh.
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-$(mktemp -d)}
nvidia-smi -L || { echo "no NVIDIA GPU here (nvidia-smi -L failed)" >&2; exit 1; }
summary=() failed=0
for t in rmtrace accept; do
	mkdir -p "$OUT/$t"
	start=$(date +%s)
	OUT=$OUT/$t bash "$t.sh" 2>&1 | tee "$OUT/$t.log"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || failed=1
	summary+=("$t.sh: exit $rc in $(($(date +%s) - start)) s, log $OUT/$t.log")
done
printf '%s\n' "${summary[@]}"
exit "$failed"
