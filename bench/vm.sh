#!/usr/bin/env bash
# Compute shares in real time, where README claims them: cgpu_km in Debian's kernel under
# QEMU (TCG), libcgpu's gate and the simulated GPU, weights 1:2 and 1:3, kernels of 20 us,
# 1 ms, 4 ms and 50 ms in batches of 1..128 (libcgpu/tests/vm-share.sh). One figure per
# weight and kernel length: the range of B/A over the batch sizes, target within 2 %.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
[ "$(id -u)" -eq 0 ] || { echo "bench/vm.sh: needs root (QEMU)" >&2; exit 1; }
make -s -C kmod >/dev/null && make -s -C test/kmod >/dev/null && make -s -C simdrv >/dev/null &&
	make -s -C sim >/dev/null && make -s -C libcgpu >/dev/null || exit 1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
test/vm/run.sh --timeout 2400 -- bash libcgpu/tests/vm-share.sh | tee "$out"
rc=${PIPESTATUS[0]}
for w in 2 3; do
	for k in 20 1000 4000 50000; do
		# The guest's lines come prefixed "vm| "; no line of a run prints nothing.
		read -r lo hi err clo chi < <(awk -v w="$w" -v k="$k" '
			{ sub(/^vm\| /, "") }
			$1 == "share" && $2 == "weight=" w && $3 == "kernel_us=" k {
				split($5, rf, "="); split($6, cf, "="); r = rf[2] + 0; c = cf[2] + 0
				if (lo == "" || r < lo) lo = r; if (hi == "" || r > hi) hi = r
				e = (r - w) / w * 100; e = e < 0 ? -e : e; if (e > m) m = e
				if (clo == "" || c < clo) clo = c; if (chi == "" || c > chi) chi = c }
			END { if (lo != "") printf "%s %s %.1f %s %s\n", lo, hi, m, clo, chi }' "$out")
		[ -n "$lo" ] || { figure "1:$w share, ${k} us kernels, batches 1..128 (VM)" "$w.0 +-2%" "no run" 0; continue; }
		figure "1:$w share, ${k} us kernels, batches 1..128 (VM)" "$w.0 +-2%" \
			"$lo..$hi (max error ${err}%; charged $clo..$chi)" "$(le "$err" 2)"
	done
done
[ "$rc" = 0 ] || figure "the VM run" "exit 0" "exit $rc" 0
bench_exit
