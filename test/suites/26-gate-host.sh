#!/usr/bin/env bash
# libcgpu's compute gate on the host (no cgpu_km here): every gated entry point waits for
# the slice without one and takes the fast path with it (libcgpu/tests/gate-test.c: a stub
# driver and kernel); the launch fast path, the hook and gate compiled against a status
# page fixture (libcgpu/bench/gate-bench.c), timed against the simulated driver called
# directly in one run; its instruction count with callgrind; and strace's proof that it
# makes no system call. Figures: docs/scheduler.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s -C sim
make -s -C libcgpu
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export LD_LIBRARY_PATH=$PWD/sim/build CGPU_SIM_STATE=$TMP/state
BENCH=$PWD/libcgpu/build/gate-bench
N=100000
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "--- every gated entry point: no slice, it waits for the grant; the slice held, the fast path"
diff <(sed -n 's/^GATED(\([A-Za-z0-9_]*\),.*/\1/p' libcgpu/src/hook_launch.c | sort) \
	<(libcgpu/build/gate-test list | sort) || fail "gate-test does not check the gated entry points of hook_launch.c"
libcgpu/build/gate-test

echo "--- time: a launch through the gate with the slice held, against the driver directly"
"$BENCH"

echo "--- instructions per launch (callgrind, $N launches each way)"
# collect LOOP: the instructions run inside that loop of gate-bench alone.
collect() {
	valgrind --tool=callgrind --toggle-collect="$1" --callgrind-out-file="$TMP/$1" \
		"$BENCH" count $N 2>/dev/null
	callgrind_annotate --auto=no "$TMP/$1" >"$TMP/$1.txt"
	awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }' "$TMP/$1.txt"
}
d=$(collect loop_direct) h=$(collect loop_hooked)
[ "${d:-0}" -gt 0 ] && [ "${h:-0}" -gt 0 ] || fail "callgrind collected nothing"
echo "direct $((d / N)) instructions, through the hook and gate $((h / N)), added $(((h - d) / N))"
# What ran inside the hooked loop: no lock, no wait, no way into the kernel.
if grep -E 'pthread_|futex|ioctl|syscall|gate_slow|gate_bind|nanosleep' "$TMP/loop_hooked.txt"; then
	fail "the fast path reached the functions above"
fi
echo "what a hooked launch runs (instructions per launch):"
awk -v n=$N '/file:function/ { on = 1; next } on && /:/ {
	c = $1; gsub(",", "", c); f = $0; sub(/^[^)]*\) +/, "", f); sub(/ \[.*/, "", f)
	printf "  %5.1f  %s\n", c / n, f }' "$TMP/loop_hooked.txt"

echo "--- system calls while $N launches go through the gate (strace)"
strace -f -o "$TMP/strace" "$BENCH" count $N 2>/dev/null
calls=$(awk '/write\(2, "begin/ { on = 1; next } /write\(2, "end/ { on = 0 } on' "$TMP/strace" | wc -l)
[ "$calls" = 0 ] || fail "$calls system call(s) on the fast path: $(awk '/begin/,/end/' "$TMP/strace" | head -5)"
echo "none"
echo "suite 26-gate-host: all checks passed"
