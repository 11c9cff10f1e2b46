#!/usr/bin/env bash
# The plugin's cost against plain docker, side by side on one private dockerd with the
# simulated node (test/lib/dockerd.sh): `docker cgpu run -d` against `docker run -d`
# (bench/docker-run.sh), and `docker cgpu stat` against `docker ps` with four cGPU
# containers running.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
[ "$(id -u)" -eq 0 ] || { echo "bench/docker.sh: needs root (a private dockerd)" >&2; exit 1; }
make -s go sim libcgpu >/dev/null || exit 1
source test/lib/dockerd.sh
state=$(mktemp -d /tmp/cgpu-bench.XXXXXX)
trap 'dockerd_stop "$state"' EXIT
dockerd_sim_node "$state" "$state/proc" || exit 1
IMAGE=cgpu-bench-busybox
dockerd_import_busybox "$IMAGE" || exit 1
rounds=${CGPU_BENCH_ROUNDS:-10}
IMAGE=$IMAGE bench/docker-run.sh "$rounds" || bench_misses=$((bench_misses + 1))

for i in 1 2 3 4; do
	"$DOCKER_BIN" cgpu run -d --gpu-mem 1 "$IMAGE" sleep 600 >/dev/null || exit 1
done
now() { date +%s%N; }
ps=0 st=0
"$DOCKER_BIN" ps >/dev/null && "$DOCKER_BIN" cgpu stat >/dev/null || exit 1
for _ in $(seq "$((rounds * 2))"); do
	t=$(now); "$DOCKER_BIN" ps >/dev/null; ps=$((ps + $(now) - t))
	t=$(now); "$DOCKER_BIN" cgpu stat >/dev/null; st=$((st + $(now) - t))
done
r=$(awk -v a="$st" -v b="$ps" 'BEGIN { printf "%.2f", a / b }')
ms() { awk -v t="$1" -v n="$((rounds * 2))" 'BEGIN { printf "%.1f", t / n / 1e6 }'; }
echo "docker ps $(ms $ps) ms, docker cgpu stat $(ms $st) ms (4 cGPU containers, mean of $((rounds * 2)))"
figure "docker cgpu stat against docker ps (4 containers)" "<= 1.2x" "x$r ($(ms $st) vs $(ms $ps) ms)" "$(le "$r" 1.2)"
bench_exit
