#!/usr/bin/env bash
# The stand-in NVIDIA driver in a real kernel (test/vm/run.sh): it loads, serves a
# statically linked program that knows only the public ABI (raw NV_ESC_RM_ALLOC in
# both sizes, direct and XFER-wrapped), its ledger shows the memory, SIGKILL returns
# every byte, bad inputs get the documented errors, for the 535 and the 550 layout; the
# kernel log stays clean (run.sh fails on any warning). Then cgpu_km enforce=1 on it
# (simdrv/tests/enforce.sh): budgets held at the driver's boundary. The simulated
# libcuda, NVML and nvidia-smi on the driver: their memory is the driver's, and
# test/gpu/rmtrace.sh's trace of them (and of NVIDIA's own libcuda) adds up. Then the
# enforcement benchmark (bench/enforce.sh), its figures counted in instructions and the
# same on every run: the suite fails when one misses its target.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -C simdrv modules vmtest
make -C kmod modules
test/upgrade/variants.sh test/upgrade/build next # the next version, for upgrade.sh --hot
make -C test/kmod
make -C sim
make -C libcgpu build/libcgpu.so
REF=$(sim/fetch-nvidia-ref.sh) # NVIDIA's libcuda, for vm-guest.sh's rmtrace check
test/vm/run.sh --timeout 600 -- env NVIDIA_REF="$REF" simdrv/tests/vm-guest.sh
test/vm/run.sh --timeout 600 -- simdrv/tests/enforce.sh
bash bench/enforce.sh
