# Shared by libcgpu's scripts in the test VM (sourced, as root from the repo root):
# paths, a clean environment for the simulated GPU, the check helpers, in_ctr.
SIM=$PWD/sim/build
HOOK=$PWD/libcgpu/build
P=/proc/cgpu_km
CG=/sys/fs/cgroup
W=$(mktemp -d /tmp/libcgpu-vm.XXXXXX)
export LD_LIBRARY_PATH=$SIM CGPU_SIM_STATE=$W/sim-state CGPU_SIM_GPUS=1
# Contexts take no memory in the driver here: these tests hold what libcgpu charges to
# what goes through its hooks (hook-test's invariant: the GPU holds no more than that),
# and a context's own memory is not libcgpu's to charge; suites 57 and 70 check it,
# charged at the driver's boundary (docs/sim.md, "Context memory").
export CGPU_SIM_CTX_RESERVE_MIB=0
unset CGPU_DISABLE CGPU_MEM_LIMIT_BYTES ALIYUN_COM_GPU_MEM_CONTAINER \
	ALIYUN_COM_GPU_MEM_DEV CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES
# The GPU's memory is held in the stand-in NVIDIA driver, as on an installed simulated
# node (docs/sim.md, "Memory in the stand-in driver"): loaded once per VM.
source simdrv/tests/load.sh
[ -d /sys/module/nvidia ] || simdrv_load gpus=1 mem_mib=15109 ||
	{ echo "FAIL: loading the stand-in driver (simdrv/)"; exit 1; }
fails=0 checks=0
ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL: $*"; }
eq() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }

# bind_ctr GPU ID: binds instance ID to the cgroup Docker's systemd driver would make for
# it, by a process standing for the container's init there (started once per id, as
# the runtime binds a container's init); the kernel takes that process's cgroup. The
# stand-in is no job of the calling shell (setsid -f), so the scripts' bare `wait`s do
# not wait for it.
bind_ctr() {
	local cg=$CG/system.slice/docker-$2.scope f=$W/init-$2 i
	mkdir -p "$cg"
	if ! [ -s "$f" ]; then
		setsid -f sh -c 'echo $$ >"$0/cgroup.procs" && echo $$ >"$1" && exec sleep 100000' \
			"$cg" "$f" </dev/null >/dev/null 2>&1
		for i in $(seq 1 500); do
			[ -s "$f" ] && break
			sleep 0.01
		done
	fi
	echo "bind $1 $2 $(cat "$f")" >$P/inst_ctl
}

# in_ctr CONTAINER CMD...: CMD in the container's cgroup (a path, or a container id
# whose cgroup Docker's systemd driver would make) with libcgpu preloaded.
in_ctr() {
	local cg=$1
	shift
	case $cg in /*) ;; *) cg=$CG/system.slice/docker-$cg.scope ;; esac
	sh -c 'echo $$ >"$0/cgroup.procs" && exec env LD_PRELOAD="$@"' "$cg" "$HOOK/libcgpu.so" "$@"
}
