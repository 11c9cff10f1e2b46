#!/usr/bin/env bash
# docker cgpu upgrade in the test VM (test/upgrade/stack.sh): cold and hot updates of a
# node with running containers, an incompatible module refused, failure injection of both.
# The module variants are built here, on the host; the VM fails on a dirty kernel log.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
[ "$(id -u)" -eq 0 ] || { echo "75-vm-upgrade: needs root (QEMU, dockerd)" >&2; exit 1; }
make -s go sim libcgpu kmod
make -s -C simdrv modules # the stand-in driver: install.sh --prebuilt takes it
V=test/upgrade/build
test/upgrade/variants.sh "$V"
exec test/vm/run.sh --mem 3072 --timeout 1200 -- bash test/upgrade/stack.sh "$PWD/$V"
