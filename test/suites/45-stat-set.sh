#!/usr/bin/env bash
# docker cgpu stat and set on the simulated node through a real dockerd of its own
# (test/lib/dockerd.sh): every field against the tree and Docker, set's refusals and
# all-or-nothing (test/statset), --watch in a real terminal under tmux, then the
# benchmark's figures (stat on 16 GPUs x 25 instances).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=1
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
[ "$(id -u)" -eq 0 ] || { echo "45-stat-set: needs root (a private dockerd)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "45-stat-set: needs tmux" >&2; exit 1; }
# The runtime injects libcgpu and the simulated driver into every cGPU container.
make go sim libcgpu
source test/lib/dockerd.sh
state=$(mktemp -d /tmp/cgpu-ss.XXXXXX)
tmux_sock=cgpu-ss-$$
trap 'tmux -L "$tmux_sock" kill-server 2>/dev/null || true; dockerd_stop "$state"' EXIT
# Readable by nobody: TestSetNeedsRoot runs the plugin as an unprivileged user.
chmod 755 "$state"
dockerd_sim_node "$state" "$state/proc" 2
chmod 755 "$state/config" "$state/config/cli-plugins"
export CGPU_E2E_IMAGE=cgpu-ss-busybox CGPU_STATSET=1
dockerd_import_busybox "$CGPU_E2E_IMAGE"

go test -count=1 -v ./test/statset/ 2>&1 | grep -v '^=== RUN'
[ "${PIPESTATUS[0]}" -eq 0 ]

echo "--- docker cgpu stat --watch in tmux"
test/statset/watch-tmux.sh "$tmux_sock"

echo "--- benchmark: docker cgpu stat on 16 GPUs x 25 instances (simulated tree)"
go test -run '^$' -bench . -benchtime 20x ./pkg/statfmt ./test/statset | grep -E '^Benchmark'
