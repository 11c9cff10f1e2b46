#!/usr/bin/env bash
# End to end through a real dockerd of its own (test/lib/dockerd.sh): docker cgpu run and
# the cgpu runtime on the simulated node. The docker run benchmark is make bench's.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
[ "$(id -u)" -eq 0 ] || { echo "40-docker-e2e: needs root (a private dockerd)" >&2; exit 1; }
# The runtime injects libcgpu and the simulated driver into every cGPU container.
make go sim libcgpu
source test/lib/dockerd.sh
state=$(mktemp -d /tmp/cgpu-e2e.XXXXXX)
trap 'dockerd_stop "$state"' EXIT
dockerd_sim_node "$state" "$state/proc"
export CGPU_E2E_IMAGE=cgpu-e2e-busybox
dockerd_import_busybox "$CGPU_E2E_IMAGE"

# SPEC's example asks for an unlimited memlock; a machine that may not raise its own hard
# limit (no CAP_SYS_RESOURCE, as in some sandboxes) refuses that to plain docker run too,
# so there the example runs with the highest limit the machine allows.
if (ulimit -H -l unlimited) 2>/dev/null; then
	CGPU_E2E_MEMLOCK=-1
else
	CGPU_E2E_MEMLOCK=$(( $(ulimit -H -l) * 1024 ))
	echo "40-docker-e2e: this machine cannot raise memlock; SPEC's example runs with memlock=$CGPU_E2E_MEMLOCK"
fi
export CGPU_E2E_MEMLOCK CGPU_E2E=1

go test -count=1 -v ./test/e2e/ 2>&1 | grep -v '^=== RUN'
[ "${PIPESTATUS[0]}" -eq 0 ]
