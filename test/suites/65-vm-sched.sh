#!/usr/bin/env bash
# Compute slices in real time in the test VM: cgpu_km's scheduler, libcgpu's gate over
# the simulated GPU, two containers' cgroups (libcgpu/tests/vm-sched.sh): every gated
# entry point, weights 1:2 on policy 2, a lone container on policy 1, a switch to policy
# 5 at run time, a container stopped while it holds the GPU, and the launch fast path's
# cost. The VM fails on a dirty kernel log.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s -C kmod
make -s -C simdrv
make -s -C test/kmod
make -s -C sim
make -s -C libcgpu
exec test/vm/run.sh --timeout 900 -- bash libcgpu/tests/vm-sched.sh
