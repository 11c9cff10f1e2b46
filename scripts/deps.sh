#!/usr/bin/env bash
# Installs everything the build, the tests and the demo need on a fresh Debian 12 machine.
# Idempotent: does nothing when all is present. Needs root (or sudo) for apt.
set -euo pipefail
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
apt_get() { NEEDRESTART_MODE=a DEBIAN_FRONTEND=noninteractive $SUDO apt-get -y -qq "$@"; }
updated=
# NVIDIA's libnvidia-ml-dev (nvml.h) and libcuda1 are downloaded, never installed (a real
# libnvidia-ml.so.1 would shadow the simulated one); they live in Debian's non-free part.
src=/etc/apt/sources.list.d/cgpu-nonfree.sources
if [ ! -f "$src" ]; then
	echo "deps: adding Debian contrib/non-free sources ($src)"
	$SUDO tee "$src" >/dev/null <<EOT
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib non-free non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
	apt_get update; updated=1
fi
pkgs=(build-essential docker.io runc qemu-system-x86 linux-image-amd64 linux-headers-amd64
      busybox-static cpio kmod dkms jq tmux clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	[ -n "$updated" ] || apt_get update
	apt_get install --no-install-recommends "${missing[@]}"
fi
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || { echo "deps: Go 1.26 is required (/usr/local/go)" >&2; exit 1; }
