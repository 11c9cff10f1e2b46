#!/usr/bin/env bash
# pkg/procfs against the real cgpu_km module: the same conformance steps that the
# directory backend passes run on /proc/cgpu_km inside a VM (test/vm/run.sh), so the
# simulated node refuses exactly what the kernel refuses, with the same errno.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
[ -f kmod/cgpu_km.ko ] || make kmod
share=$(mktemp -d /tmp/cgpu-procfs-kernel.XXXXXX)
trap 'rm -rf "$share"' EXIT
go test -c -o "$share/procfs.test" ./pkg/procfs
test/vm/run.sh --timeout 600 --share "$share" -- \
	"insmod kmod/cgpu_km.ko ngpus=2 && CGPU_KERNEL_TREE=/proc/cgpu_km $share/procfs.test -test.run Conformance -test.v"
