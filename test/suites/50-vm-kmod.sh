#!/usr/bin/env bash
# cgpu_km in a real kernel: the VM harness checks itself, then the kernel suite, the
# benchmark and the forged-cgroup test against a real dockerd (test/kmod/docker-forge.sh)
# run inside one QEMU VM booted from Debian's kernel (test/vm/run.sh).
set -euo pipefail
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
make -C kmod
make -C test/kmod
make -s go sim libcgpu
test/vm/selftest.sh
test/vm/run.sh --timeout 1500 -- \
	'test/kmod/suite.sh --bench; r=$?; bash test/kmod/docker-forge.sh || r=1; exit $r'
