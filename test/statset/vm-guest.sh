#!/usr/bin/env bash
# Inside the test VM (test/suites/55-vm-stat-set.sh starts it through test/vm/run.sh), as
# root from the repo root: cgpu_km loaded with 2 GPUs, a private dockerd whose cgpu
# runtime registers containers in /proc/cgpu_km, and test/statset's binary ($1) run
# against that tree; kt (test/kmod) holds memory through /dev/cgpu as real processes.
set -uo pipefail
bin=${1:?the statset test binary}
source test/lib/dockerd.sh
# enforce=1 with no NVIDIA driver loaded (nothing is attached, nothing else changes):
# stat and run must say that budgets hold only under libcgpu (checked at the end).
insmod kmod/cgpu_km.ko ngpus=2 enforce=1 || { echo "55-vm-stat-set: insmod failed"; exit 1; }
state=$(mktemp -d /tmp/ss.XXXXXX)
cleanup() { dockerd_stop "$state"; rmmod cgpu_km; }
trap cleanup EXIT
chmod 755 "$state"
jq -n --arg repo "$PWD" --arg simstate "$state/sim-state" \
	'{sim: true, sim_gpus: 2, procfs_root: "/proc/cgpu_km", next_runtime: "runc", hook: "\($repo)/libcgpu/build/libcgpu.so",
	  sim_driver: "\($repo)/sim/build", sim_state: $simstate}' >"$state/runtime.json"
export CGPU_RUNTIME_CONFIG=$state/runtime.json DOCKER_BIN=/usr/bin/docker
dockerd_start "$state" "$PWD/bin/cgpu-runtime" "$CGPU_RUNTIME_CONFIG" || exit 1
chmod 755 "$state/config" "$state/config/cli-plugins"
dockerd_install_plugin "$state" bin/docker-cgpu
# An image of busybox, sh and sleep alone: every process started costs tens of
# milliseconds under TCG, a full busybox image hundreds of them.
rootfs=$(mktemp -d)
mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/etc"
cp "$(command -v busybox)" "$rootfs/bin/busybox"
ln -s busybox "$rootfs/bin/sh"
ln -s busybox "$rootfs/bin/sleep"
tar -C "$rootfs" -c . | docker import -c 'ENV PATH=/bin' - cgpu-ss-vm >/dev/null || exit 1
export CGPU_E2E_IMAGE=cgpu-ss-vm CGPU_STATSET=1 CGPU_STATSET_KT=$PWD/test/kmod/build/kt \
	CGPU_STATSET_PLUGIN=$PWD/bin/docker-cgpu
# Templates, filters and the exporter read the same snapshot whatever the tree; the host
# suite covers them. Here: every field against the kernel's tree, and set on it.
"$bin" -test.v -test.count=1 -test.run 'TestStatMatchesTreeAndDocker|TestComputePerPolicy|TestUtilisationFromScheduler|TestSet|TestRemoveOrphan' 2>&1 |
	grep -v '^=== RUN'
rc=${PIPESTATUS[0]}
off="off (no nvidia driver loaded)"
warn="cgpu: warning: cgpu_km runs with enforce=1 but enforcement at the NVIDIA driver is $off: budgets hold only in processes that run libcgpu (docs/kmod.md)"
got=$(docker cgpu stat --format json 2>"$state/stat.err" | jq -r .enforcement)
[ "$got" = "$off" ] || { echo "FAIL: stat's enforcement: $got"; rc=1; }
grep -qxF "$warn" "$state/stat.err" || { echo "FAIL: stat's stderr: $(cat "$state/stat.err")"; rc=1; }
docker cgpu run --dry-run --gpu-mem 1 cgpu-ss-vm true >/dev/null 2>"$state/run.err" || { echo "FAIL: run --dry-run: $(cat "$state/run.err")"; rc=1; }
grep -qxF "$warn" "$state/run.err" || { echo "FAIL: run's stderr: $(cat "$state/run.err")"; rc=1; }
docker cgpu run --dry-run -e ALIYUN_COM_GPU_MEM_CONTAINER=0 cgpu-ss-vm true >/dev/null 2>"$state/run0.err" || rc=1
[ ! -s "$state/run0.err" ] || { echo "FAIL: an unlimited container warned: $(cat "$state/run0.err")"; rc=1; }
[ "$rc" != 0 ] || echo "ok: enforce=1 with enforcement off: stat's JSON and stderr, run's warning (none for an unlimited container)"
# The containers are gone, their runtime deletes unregistered them, the orphan was removed:
# nothing is left in the kernel.
left=$(ls /proc/cgpu_km/0 /proc/cgpu_km/1 | grep -E '^[0-9a-f]{12}$')
[ -z "$left" ] || { echo "FAIL: instances left in /proc/cgpu_km: $left"; rc=1; }
exit "$rc"
