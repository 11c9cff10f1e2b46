#!/usr/bin/env bash
# libcgpu with the cgpu_km kernel ledger, in the test VM: SPEC's two-container
# example on the simulated GPU (its memory in the stand-in driver), every hooked call
# with the kernel ledger, SIGKILL, and the alloc benchmark against /dev/cgpu. The VM
# fails on a dirty kernel log.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s -C kmod
make -s -C simdrv
make -s -C sim
make -s -C libcgpu
exec test/vm/run.sh --timeout 900 -- bash libcgpu/tests/vm-guest.sh
