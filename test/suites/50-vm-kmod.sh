#!/usr/bin/env bash
# cgpu_km in a real kernel: the VM harness checks itself, then the kernel suite and the
# benchmark run inside a QEMU VM booted from Debian's kernel (test/vm/run.sh).
set -euo pipefail
make -C kmod
make -C test/kmod
test/vm/selftest.sh
test/vm/run.sh --timeout 1500 -- test/kmod/suite.sh --bench
