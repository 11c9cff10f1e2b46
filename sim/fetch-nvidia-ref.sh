#!/usr/bin/env bash
# Fetches NVIDIA's real libcuda.so.1, libnvidia-ml.so.1 and nvml.h from Debian's
# non-free archive into sim/.cache/nvidia-ref/ (git-ignored), for the tests that
# check the simulator and libcgpu against them. Downloaded and unpacked, never
# installed: a real libnvidia-ml.so.1 in the library path would shadow the
# simulated one. Idempotent; prints the folder.
set -euo pipefail
cd "$(dirname "$0")"
out=$PWD/.cache/nvidia-ref
if [ ! -f "$out/libcuda.so.1" ] || [ ! -f "$out/libnvidia-ml.so.1" ] || [ ! -f "$out/nvml.h" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# apt's sandbox user must be able to write the download folder.
	chmod 777 "$tmp"
	(cd "$tmp" && apt-get download -q libcuda1 libnvidia-ml1 libnvidia-ml-dev >/dev/null)
	for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/x"; done
	mkdir -p "$out"
	cp "$(find "$tmp/x" -name 'libcuda.so.*.*' | head -1)" "$out/libcuda.so.1"
	cp "$(find "$tmp/x" -name 'libnvidia-ml.so.*.*' | head -1)" "$out/libnvidia-ml.so.1"
	cp "$(find "$tmp/x" -name nvml.h | head -1)" "$out/nvml.h"
fi
echo "$out"
