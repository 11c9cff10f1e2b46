#!/usr/bin/env bash
# The whole stack in the test VM: install.sh (cgpu_km through DKMS, the simulated GPU,
# docker.io's own daemon.json), SPEC's two-container example through docker cgpu run and
# plain docker run, the failure paths, upgrade.sh and install.sh --uninstall
# (test/stack/e2e.sh). The VM fails on a dirty kernel log.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
[ "$(id -u)" -eq 0 ] || { echo "70-vm-stack: needs root (QEMU, dockerd)" >&2; exit 1; }
# Built here: Go under TCG would take longer than the whole suite (install.sh --prebuilt),
# and so would a second DKMS build of the module (the upgrade takes the host's build).
make -s go sim libcgpu
# The stand-in driver (install.sh --prebuilt takes it) and the raw-ABI program.
make -s -C simdrv modules build/rawalloc
V=test/upgrade/build
test/upgrade/variants.sh "$V" next
exec test/vm/run.sh --mem 3072 --timeout 1500 -- bash test/stack/e2e.sh "$PWD/$V"
