#!/usr/bin/env bash
# Everything test/gpu/ has for a machine with an NVIDIA GPU, in one command for a device
# session's few minutes: rmtrace.sh (what libcuda asks of the driver, about a minute, at
# most 4), then accept.sh (libcgpu's real-GPU acceptance, about 3 minutes, at most 5).
# Each one's output goes to the terminal and to $OUT/NAME.log as it runs; rmtrace's
# trace, report, figures and probe errors are copied to $OUT/rmtrace-*; everything else
# stays in a scratch folder (named at the end), so that $OUT holds a few files. Ends with
# one line per script and exits 1 if either failed. Run from anywhere: bash
# test/gpu/run.sh.
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
timeout 30 nvidia-smi -L || { echo "no NVIDIA GPU here (nvidia-smi -L failed)" >&2; exit 1; }
summary=() failed=0
for t in rmtrace:240 accept:300; do
	name=${t%:*}
	mkdir -p "$work/$name"
	start=$(date +%s)
	OUT=$work/$name timeout -k 10 "${t#*:}" bash "$name.sh" 2>&1 | tee "$OUT/$name.log"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || failed=1
	summary+=("$name.sh: exit $rc$([ "$rc" = 124 ] && echo " (time limit)") in $(($(date +%s) - start)) s, log $OUT/$name.log")
done
for f in trace report figures probe.err; do
	[ -f "$work/rmtrace/$f" ] && cp "$work/rmtrace/$f" "$OUT/rmtrace-$f"
done
printf '%s\n' "${summary[@]}" "files: $OUT, scratch: $work"
exit "$failed"
