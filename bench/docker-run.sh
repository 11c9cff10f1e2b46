#!/usr/bin/env bash
# How much "docker cgpu run -d" costs over "docker run -d" of the same container,
# measured side by side in one run (interleaved, so drift hits both); a figure of
# `make bench` (bench/docker.sh), failing above 1.10x.
# Usage: bench/docker-run.sh [ROUNDS]   with DOCKER_HOST, DOCKER_CONFIG (plugin installed),
# CGPU_RUNTIME_CONFIG and IMAGE set, as test/suites/40-docker-e2e.sh does.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rounds=${1:-10}
docker=${DOCKER_BIN:-docker}
image=${IMAGE:?IMAGE: a local image with sleep}

now() { date +%s%N; }
# time_run NAME CMD...: runs CMD (which prints a container id), records its duration in
# nanoseconds under NAME, and removes the container again so every round starts equal.
declare -A total
time_run() {
	local name=$1 start id
	shift
	start=$(now)
	id=$("$@")
	total[$name]=$(( ${total[$name]:-0} + $(now) - start ))
	"$docker" rm -f "$id" >/dev/null
}

# One unmeasured round of each warms the image and binary caches.
time_run warm "$docker" run -d "$image" sleep 600
time_run warm "$docker" cgpu run -d --gpu-mem 1 "$image" sleep 600
for _ in $(seq "$rounds"); do
	time_run plain "$docker" run -d "$image" sleep 600
	time_run runtime "$docker" run -d --runtime cgpu -e ALIYUN_COM_GPU_MEM_CONTAINER=1 "$image" sleep 600
	time_run plugin "$docker" cgpu run -d --gpu-mem 1 "$image" sleep 600
done
ms() { awk -v t="$1" -v n="$rounds" 'BEGIN { printf "%.1f", t / n / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "docker run -d, mean of $rounds rounds:"
printf '  %-52s %8s ms\n' "docker run -d (runc)" "$(ms "${total[plain]}")"
printf '  %-52s %8s ms  x%s\n' "docker run -d --runtime cgpu -e ..._MEM_CONTAINER=1" "$(ms "${total[runtime]}")" "$(ratio "${total[runtime]}" "${total[plain]}")"
printf '  %-52s %8s ms  x%s\n' "docker cgpu run -d --gpu-mem 1" "$(ms "${total[plugin]}")" "$(ratio "${total[plugin]}" "${total[plain]}")"
figure "docker cgpu run -d against docker run -d ($rounds rounds)" "<= 1.10x" \
	"x$(ratio "${total[plugin]}" "${total[plain]}") ($(ms "${total[plugin]}") vs $(ms "${total[plain]}") ms)" \
	"$(le "$(ratio "${total[plugin]}" "${total[plain]}")" 1.10)"
bench_exit
