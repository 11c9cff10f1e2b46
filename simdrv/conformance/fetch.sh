#!/usr/bin/env bash
# Fetches the source of NVIDIA's open kernel modules as Debian ships it, in the two
# layouts the stand-in serves: 535.261.03 (bookworm contrib, before 545) and 550.163.01
# (trixie contrib, after). The binary package nvidia-open-kernel-source carries only the
# kernel-open half (nv-ioctl.h and friends); the RM's own ABI headers (nvos.h,
# nv_escape.h, class/*.h) live only in its source package's upstream tarball
# (nvidia-open-gpu-kernel-modules_VERSION.orig.tar.xz), so that is what is fetched:
# downloaded with apt-get source --download-only through a private apt state (deb-src
# lines of both suites; the system's apt state is not touched), never built, never
# installed. Only the headers are unpacked, into simdrv/.cache/nvidia-src/VERSION
# (git-ignored). Idempotent; prints the cache folder.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=$PWD/.cache/nvidia-src
want=(535.261.03 550.163.01)
missing=()
for v in "${want[@]}"; do [ -f "$cache/$v/.done" ] || missing+=("$v"); done
if [ ${#missing[@]} -gt 0 ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/state/lists/partial" "$tmp/cache/archives/partial" "$tmp/etc/sources.list.d" "$tmp/dl"
	# apt's sandbox user must be able to write the download folder.
	chmod 777 "$tmp/dl"
	key=/usr/share/keyrings/debian-archive-keyring.gpg
	printf 'deb-src [signed-by=%s] http://deb.debian.org/debian %s contrib\n' \
		"$key" bookworm "$key" trixie >"$tmp/etc/sources.list"
	opts=(-o "Dir::State=$tmp/state" -o "Dir::Cache=$tmp/cache"
		-o "Dir::Etc::SourceList=$tmp/etc/sources.list"
		-o "Dir::Etc::SourceParts=$tmp/etc/sources.list.d" -o "Dir::State::status=/dev/null")
	apt-get -q "${opts[@]}" update >/dev/null
	for v in "${missing[@]}"; do
		full=$(apt-cache "${opts[@]}" showsrc nvidia-open-gpu-kernel-modules |
			awk -v v="$v" '$1 == "Version:" && index($2, v "-") == 1 {print $2; exit}')
		[ -n "$full" ] || { echo "fetch.sh: no nvidia-open-gpu-kernel-modules $v in bookworm/trixie contrib" >&2; exit 1; }
		# apt checks every file it fetches against the signed Sources index. The Debian
		# packaging tarball is not needed (some mirrors lack it), so a failure is judged
		# by whether the upstream tarball arrived.
		(cd "$tmp/dl" && apt-get -q "${opts[@]}" source --download-only \
			"nvidia-open-gpu-kernel-modules=$full" >/dev/null 2>"$tmp/err") || true
		orig=$tmp/dl/nvidia-open-gpu-kernel-modules_$v.orig.tar.xz
		[ -s "$orig" ] || { cat "$tmp/err" >&2; echo "fetch.sh: download of $v failed" >&2; exit 1; }
		rm -rf "${cache:?}/$v"
		mkdir -p "$cache/$v"
		tar -xJf "$orig" -C "$cache/$v" --strip-components=1 --wildcards \
			'*/src/common/sdk/nvidia/inc/*' '*/src/nvidia/arch/nvalloc/unix/include/*' \
			'*/kernel-open/common/inc/*' '*/kernel-open/nvidia/nv.c' \
			'*/kernel-open/nvidia/nv-frontend.c' '*/src/nvidia/arch/nvalloc/unix/src/escape.c'
		touch "$cache/$v/.done"
		rm -f "$orig"
	done
fi
echo "$cache"
