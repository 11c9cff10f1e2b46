#!/usr/bin/env bash
# What libcgpu adds to a kernel launch, on the host: its launch hook and compute gate
# with the slice held (libcgpu/bench/gate-bench.c, a status page fixture), against the
# simulated driver called directly, alternating blocks in one process.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
make -s -C sim >/dev/null && make -s -C libcgpu >/dev/null || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH=$PWD/sim/build CGPU_SIM_STATE=$tmp/state
line=$(libcgpu/build/gate-bench) || exit 1
echo "$line"
added=$(sed -n 's/.*added *\([-+0-9.]*\) ns.*/\1/p' <<<"$line")
direct=$(sed -n 's/.*direct *\([0-9.]*\) ns.*/\1/p' <<<"$line")
figure "launch through hook and gate, slice held (host)" "<= +50 ns" "${added} ns on ${direct} ns" "$([ -n "$added" ] && le "$added" 50 || echo 0)"
bench_exit
