#!/usr/bin/env bash
# docker cgpu stat and set against the cgpu_km module's own tree, in the test VM
# (test/vm/run.sh) with a private dockerd whose runtime registers into the kernel: every
# field of stat against /proc/cgpu_km and Docker, set of every field, each refusal with
# the tree unchanged, all or nothing, orders the kernel would refuse done right, root.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
make go sim libcgpu
make -C kmod
make -C test/kmod
share=$(mktemp -d /tmp/cgpu-ss-vm.XXXXXX)
trap 'rm -rf "$share"' EXIT
go test -c -o "$share/statset.test" ./test/statset
test/vm/run.sh --timeout 420 --share "$share" -- bash test/statset/vm-guest.sh "$share/statset.test"
