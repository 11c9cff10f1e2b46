#!/usr/bin/env bash
# Fetches NVIDIA's open kernel module headers as Debian ships them, in the two layouts
# the stand-in serves: 535.261.03 (bookworm contrib, before 545) and 550.163.01 (trixie
# contrib, after), into simdrv/.cache/nvidia-src/VERSION (git-ignored). Downloaded with
# apt-get through a private apt state (its own sources list with deb and deb-src lines of
# both suites; the system's apt state is not touched), unpacked, never installed.
#
# The RM's ABI headers (nvos.h, nv_escape.h, class/*.h) are only in the source package
# nvidia-open-gpu-kernel-modules (its upstream tarball); the binary package
# nvidia-open-kernel-source carries only the kernel-open half (nv-ioctl.h,
# nv-ioctl-numbers.h, nvstatuscodes.h, nv.c). The source package is taken where the
# archive serves it; otherwise the binary package, and VERSION/.kind says "kernel-open"
# so that run.sh says which checks it could not make. Idempotent; prints the cache folder.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=$PWD/.cache/nvidia-src
want=(535.261.03 550.163.01)
# nvidia-uvm's files the checks read (both paths below take these): uvm_ioctl.h's
# params and uvm_types.h's attributes compile into check.c; the Kbuild names the module;
# uvm_global.c and uvm_gpu.c make its one RM session and a device in it per GPU;
# uvm_user_channel.c retains and releases the channels registered with it, uvm_va_space.c
# duplicates and destroys the GPU VA spaces registered with it.
uvm=(uvm_linux_ioctl.h uvm_ioctl.h uvm_types.h uvm_common.h uvm.c nvidia-uvm.Kbuild
	uvm_global.c uvm_gpu.c uvm_user_channel.c uvm_va_space.c)
# RM's side of nvidia-uvm's duplicates, and RM's video-memory allocation (what PMA
# takes for it), in the source package only.
gpu_ops=src/nvidia/src/kernel/rmapi/nv_gpu_ops.c
vidmem=src/nvidia/src/kernel/mem_mgr/video_mem.c
# A device's rules and its own VA space, and a channel group's use of it (lib/rm.c).
devices=(src/nvidia/src/kernel/gpu/device.c src/nvidia/src/kernel/gpu/device_share.c
	src/nvidia/src/kernel/gpu/fifo/kernel_channel_group_api.c)
source_only=("$gpu_ops" "$vidmem" "${devices[@]}")
missing=()
# A cache from before a file joined the list is fetched again.
for v in "${want[@]}"; do
	ok=1
	for f in .kind "${uvm[@]/#/kernel-open/nvidia-uvm/}"; do [ -f "$cache/$v/$f" ] || ok=0; done
	if [ $ok = 1 ] && [ "$(cat "$cache/$v/.kind")" = source ]; then
		for f in "${source_only[@]}"; do [ -f "$cache/$v/$f" ] || ok=0; done
	fi
	[ $ok = 1 ] || missing+=("$v")
done
[ ${#missing[@]} -gt 0 ] || { echo "$cache"; exit 0; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../../scripts/private-apt.sh
source ../scripts/private-apt.sh
lines=()
for suite in bookworm trixie; do
	for t in deb deb-src; do lines+=("$(debian_line $t $suite contrib)"); done
done
private_apt "$tmp" "${lines[@]}"

# The files the checks read, by their place in the upstream tree.
headers=(src/common/sdk/nvidia/inc src/nvidia/arch/nvalloc/unix/include kernel-open/common/inc
	kernel-open/nvidia/nv.c kernel-open/nvidia/nv-frontend.c "${source_only[@]}"
	"${uvm[@]/#/kernel-open/nvidia-uvm/}")

for v in "${missing[@]}"; do
	out=$cache/$v
	rm -rf "$out" "$tmp/x"
	mkdir -p "$out" "$tmp/x"
	full=$(apt-cache "${apt_opts[@]}" showsrc nvidia-open-gpu-kernel-modules |
		awk -v v="$v" '$1 == "Version:" && index($2, v "-") == 1 {print $2; exit}')
	orig=$tmp/dl/nvidia-open-gpu-kernel-modules_$v.orig.tar.xz
	if [ -n "$full" ]; then
		# apt checks what it fetches against the signed Sources index; the Debian
		# packaging tarball is not needed (some mirrors lack it), so success is judged
		# by the upstream tarball's arrival.
		(cd "$tmp/dl" && apt-get -q "${apt_opts[@]}" source --download-only \
			"nvidia-open-gpu-kernel-modules=$full" >/dev/null 2>&1) || true
	fi
	if [ -s "$orig" ]; then
		tar -xJf "$orig" -C "$tmp/x" --strip-components=1 "${headers[@]/#/NVIDIA-kernel-module-source-$v/}"
		for h in "${headers[@]}"; do mkdir -p "$out/$(dirname "$h")"; cp -r "$tmp/x/$h" "$out/$h"; done
		echo source >"$out/.kind"
		continue
	fi
	full=$(apt-cache "${apt_opts[@]}" madison nvidia-open-kernel-source |
		awk -v v="$v" '$3 ~ "^" v "-" {print $3; exit}')
	[ -n "$full" ] || { echo "fetch.sh: nvidia-open-kernel-source $v is in neither bookworm nor trixie contrib" >&2; exit 1; }
	(cd "$tmp/dl" && apt-get -q "${apt_opts[@]}" download "nvidia-open-kernel-source=$full" >/dev/null)
	dpkg-deb -x "$tmp"/dl/nvidia-open-kernel-source_*.deb "$tmp/deb"
	ko_uvm=("${uvm[@]/#/modules/nvidia-open-kernel/nvidia-uvm/}")
	tar -xJf "$(find "$tmp/deb" -name '*.tar.xz' | head -1)" -C "$tmp/x" \
		modules/nvidia-open-kernel/common/inc modules/nvidia-open-kernel/nvidia/nv.c \
		modules/nvidia-open-kernel/nvidia/nv-frontend.c "${ko_uvm[@]}" 2>/dev/null ||
		tar -xJf "$(find "$tmp/deb" -name '*.tar.xz' | head -1)" -C "$tmp/x" \
			modules/nvidia-open-kernel/common/inc modules/nvidia-open-kernel/nvidia/nv.c "${ko_uvm[@]}"
	mkdir -p "$out/kernel-open/nvidia" "$out/kernel-open/nvidia-uvm"
	cp -r "$tmp/x/modules/nvidia-open-kernel/common" "$out/kernel-open/"
	cp "$tmp/x/modules/nvidia-open-kernel/nvidia/"nv*.c "$out/kernel-open/nvidia/"
	cp "${ko_uvm[@]/#/$tmp/x/}" "$out/kernel-open/nvidia-uvm/"
	rm -rf "$tmp/deb" "$tmp"/dl/*.deb
	echo kernel-open >"$out/.kind"
done
echo "$cache"
