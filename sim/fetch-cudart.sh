#!/usr/bin/env bash
# Fetches NVIDIA's CUDA runtime as Debian ships it, libcudart.so.11.0 (CUDA 11.8,
# bookworm non-free) and libcudart.so.12 (CUDA 12.4, trixie non-free), into
# sim/.cache/cudart/ (git-ignored), for the test that runs the real runtime on the
# simulated libcuda. Downloaded with apt-get through a private apt state (its own
# sources list; the system's apt state is not touched), unpacked, never installed.
# Idempotent; prints the folder.
set -euo pipefail
cd "$(dirname "$0")"
out=$PWD/.cache/cudart
if [ -f "$out/libcudart.so.11.0" ] && [ -f "$out/libcudart.so.12" ]; then echo "$out"; exit 0; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/state/lists/partial" "$tmp/cache/archives/partial" "$tmp/etc/sources.list.d" "$tmp/dl"
# apt's sandbox user must be able to write the download folder.
chmod 711 "$tmp"
chmod 777 "$tmp/dl"
key=/usr/share/keyrings/debian-archive-keyring.gpg
for suite in bookworm trixie; do
	printf 'deb [signed-by=%s] http://deb.debian.org/debian %s non-free\n' "$key" "$suite"
done >"$tmp/etc/sources.list"
opts=(-o "Dir::State=$tmp/state" -o "Dir::Cache=$tmp/cache"
	-o "Dir::Etc::SourceList=$tmp/etc/sources.list"
	-o "Dir::Etc::SourceParts=$tmp/etc/sources.list.d" -o "Dir::State::status=/dev/null")
apt-get -q "${opts[@]}" update >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }

# package, the upstream version it must be, the soname.
get() {
	local full
	full=$(apt-cache "${opts[@]}" madison "$1" | awk -v v="$2" '$3 ~ "^" v {print $3; exit}')
	[ -n "$full" ] || { echo "fetch-cudart.sh: $1 $2 is in neither bookworm nor trixie non-free" >&2; exit 1; }
	(cd "$tmp/dl" && apt-get -q "${opts[@]}" download "$1=$full" >/dev/null)
	rm -rf "$tmp/x"
	dpkg-deb -x "$tmp"/dl/"$1"_*.deb "$tmp/x"
	mkdir -p "$out"
	cp "$(find "$tmp/x" -name "libcudart.so.$2*" -type f | head -1)" "$out/$3"
}
get libcudart11.0 11.8 libcudart.so.11.0
get libcudart12 12.4 libcudart.so.12
echo "$out"
