#!/usr/bin/env bash
# Fetches NVIDIA's CUDA runtime as Debian ships it, libcudart.so.11.0 (CUDA 11.8,
# bookworm non-free) and libcudart.so.12 (CUDA 12.4, trixie non-free), into
# sim/.cache/cudart/ (git-ignored), for the test that runs the real runtime on the
# simulated libcuda; and trixie's libcuda.so.1 (550, a CUDA 12.4 driver, into
# driver-550/ there), on which 12.4's lookups get variants 535 lacks. Downloaded with apt-get through a private apt state (its own
# sources list; the system's apt state is not touched), unpacked, never installed.
# Idempotent; prints the folder.
set -euo pipefail
cd "$(dirname "$0")"
out=$PWD/.cache/cudart
if [ -f "$out/libcudart.so.11.0" ] && [ -f "$out/libcudart.so.12" ] &&
	[ -f "$out/driver-550/libcuda.so.1" ]; then echo "$out"; exit 0; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../scripts/private-apt.sh
source ../scripts/private-apt.sh
private_apt "$tmp" "$(debian_line deb bookworm non-free)" "$(debian_line deb trixie non-free)"

# package, the upstream version it must be, the file's name pattern, where it goes.
get() {
	local full
	full=$(apt-cache "${apt_opts[@]}" madison "$1" | awk -v v="$2" '$3 ~ "^" v {print $3; exit}')
	[ -n "$full" ] || { echo "fetch-cudart.sh: $1 $2 is in neither bookworm nor trixie non-free" >&2; exit 1; }
	(cd "$tmp/dl" && apt-get -q "${apt_opts[@]}" download "$1=$full" >/dev/null)
	rm -rf "$tmp/x"
	dpkg-deb -x "$tmp"/dl/"$1"_*.deb "$tmp/x"
	mkdir -p "$(dirname "$out/$4")"
	cp "$(find "$tmp/x" -name "$3" -type f | head -1)" "$out/$4"
}
get libcudart11.0 11.8 'libcudart.so.11.8*' libcudart.so.11.0
get libcudart12 12.4 'libcudart.so.12.4*' libcudart.so.12
get libcuda1 550 'libcuda.so.550*' driver-550/libcuda.so.1
echo "$out"
