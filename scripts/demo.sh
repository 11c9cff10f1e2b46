#!/usr/bin/env bash
# `make demo`: boots a VM (QEMU, Debian's kernel over this machine's root, test/vm/run.sh),
# installs cgpu in it with the simulated GPU, starts docker, runs SPEC's two-container
# example with docker cgpu run and prints what an operator looks at (test/stack/demo.sh).
# Nothing is installed on this machine itself.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (QEMU with 9p, docker in the VM)" >&2; exit 1; }
start=$(date +%s)
echo "demo: building cgpu (make go sim libcgpu; make -C simdrv modules) ..."
make -s go sim libcgpu >/dev/null
make -s -C simdrv modules >/dev/null # the stand-in driver, for install.sh --prebuilt
echo "demo: booting a VM and installing cgpu in it; this takes a few minutes"
CGPU_VM_QUIET=1 test/vm/run.sh --mem 3072 --timeout 900 -- bash test/stack/demo.sh
echo "demo: finished in $(($(date +%s) - start))s"
