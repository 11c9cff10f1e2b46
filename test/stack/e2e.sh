#!/usr/bin/env bash
# The whole stack in the test VM (test/suites/70-vm-stack.sh runs it through
# test/vm/run.sh), as root from the repository root, with what `make` built on the host:
# install.sh on a node running docker.io with the simulated GPU (one 15 GiB T4, its
# libraries and the stand-in kernel driver), SPEC's two-container example and the failure
# paths through real containers, the stand-in's nodes in containers (two GPUs, raw
# allocations through the nodes), upgrade.sh, and install.sh --uninstall. Every step ends with the kernel's tree and docker agreeing.
# $1: the module variants test/upgrade/variants.sh built on the host; the upgrade gives
# DKMS the next one built (upgrade.sh --built), install.sh is the run's one DKMS build.
set -uo pipefail
V=${1:?usage: e2e.sh VARIANTS_DIR}
source test/stack/lib.sh
T0=$(date +%s)
section() { echo "--- $* ($(($(date +%s) - T0))s)"; }
W=$(mktemp -d /tmp/stack.XXXXXX)
# The host's, seen through the VM's overlay (the host's tests without the stand-in make
# it): on a node with the stand-in nothing may make it again.
rm -f /run/cgpu-sim/state

# The module's version, and two more for the upgrade: the next one and one that fails.
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' kmod/dkms.conf)
NEXT=$(modinfo -F version "$V/next/cgpu_km.ko")
BROKEN=$(awk -F. '{print $1 "." $2 "." $3 + 9}' <<<"$VER")
SIX=6337173913 EIGHT=8449565218 # 6 and 8 of 15 GiB of a 15109 MiB T4 (docs/contracts.md §1)
# What the simulated libcuda's context takes in the stand-in driver (docs/sim.md), charged
# at the driver's boundary like any allocation of the process (enforce=1).
CTX=$((64 << 20))
GIB=$((1 << 30)) CHUNK=$((64 << 20))
# tables BYTES: what cgpu_km charges for the page tables of a mapping nvidia-uvm makes of
# BYTES of memory, as the simulated libcuda maps every allocation (docs/kmod.md,
# "nvidia-uvm's mappings of RM memory": per level, the span over what a table covers and
# one more at each edge, 4 KiB a table).
tables() {
	local s sum=0
	for s in 21 29 38 47 56; do sum=$((sum + (($1 >> s) + 2) * 4096)); done
	echo $sum
}
CTXC=$((CTX + $(tables $CTX)))	# a context's charge: its memory, mapped
STEP=$((CHUNK + $(tables $CHUNK)))	# a 64 MiB allocation's
SD=/proc/driver/nvidia-sim
SPEC_RUN=(cgpu run -d -t --gpus all --shm-size=1g --ulimit memlock=-1 --ulimit stack=67108864
	-v /mnt:/mnt --label cgpu.test=on)

# snapshot FILE: every path install.sh may touch, with size and modification time.
snapshot() {
	{
		find /usr/local -path /usr/local/go -prune -o -printf '%y %p %s %T@\n'
		find /etc /var/lib/dkms "/lib/modules/$KVER" -printf '%y %p %s %T@\n'
		ls -d /usr/src/* /run/cgpu-sim /var/lib/cgpu /dev/cgpu /dev/nvidia* /sys/module/cgpu_km /sys/module/nvidia /sys/module/nvidia_uvm 2>/dev/null
	} | sort >"$1"
}
# names FILE: a snapshot's paths alone (files the loader and depmod rewrite keep their
# names). DKMS's own signing key, made by its first build on a node, is DKMS's: every
# DKMS module is signed with it and it stays when cgpu goes.
names() { awk '$2 !~ "^/var/lib/dkms/mok\\.(key|pub)$" {print $1, $2}' "$1"; }

# inside CONTAINER COMMAND...: runs COMMAND in the container; its output.
inside() { docker exec "$@" 2>&1; }
# nodes [CONTAINER]: the NVIDIA device nodes (of the node, or in CONTAINER) as
# "NAME TYPE MAJOR:MINOR MODE;" (stat's %t:%T are hex: c3 is 195, ff 255).
nodes() { ${1:+docker exec "$1"} sh -c 'stat -c "%n %F %t:%T %a;" /dev/nvidia*' 2>&1 | tr -d '\n'; }
# CTL/GPU0/GPU1: the stand-in's nodes as NVIDIA's driver numbers them.
CTL="/dev/nvidiactl character special file c3:ff 666;"
GPU0="/dev/nvidia0 character special file c3:0 666;" GPU1="/dev/nvidia1 character special file c3:1 666;"
# uvm: nvidia-uvm's two nodes as the kernel numbers them now (the region's major is the
# kernel's pick, new at each load).
uvm() {
	local m
	m=$(printf %x "$(awk '$2 == "nvidia-uvm" { print $1; exit }' /proc/devices)")
	echo "/dev/nvidia-uvm character special file $m:0 666;/dev/nvidia-uvm-tools character special file $m:1 666;"
}

# holding CONTAINER BYTES: starts a process in CONTAINER that allocates BYTES and keeps
# them; prints its host PID once the kernel lists it in the container's meminfo with
# them, their mapping's page tables and its context.
holding() {
	local id before pid i
	id=$(id_of "$1")
	before=$(grep -o 'PID: [0-9]*' "$P/0/$id/meminfo" | sort)
	docker exec -d "$1" cudaprobe alloc "$2" -k
	for i in $(seq 1 120); do
		pid=$(grep "Mem: $(($2 + $(tables $2) + CTXC))$" "$P/0/$id/meminfo" | grep -o 'PID: [0-9]*' | sort |
			comm -13 <(echo "$before") - | cut -d' ' -f2)
		[ -z "$pid" ] || { echo "$pid"; return; }
		sleep 0.5
	done
}

echo "whole-stack suite: kernel $KVER, $(nproc) vCPUs"
section "the node before cgpu: docker.io running with the user's daemon.json"
prep_node || exit 1
cp /etc/docker/daemon.json "$W/user-daemon.json"
snapshot "$W/before"

section "install.sh refuses a malformed daemon.json and changes nothing"
printf '{"storage-driver": "vfs",\n' >/etc/docker/daemon.json
cp /etc/docker/daemon.json "$W/bad.json"
./install.sh --prebuilt --sim-gpus 1 >"$W/out" 2>&1
eq "exit status" "$?" 1
is "says why" grep -q 'daemon.json is not a JSON object.*malformed' "$W/out"
is "the file is untouched" cmp /etc/docker/daemon.json "$W/bad.json"
cp "$W/user-daemon.json" /etc/docker/daemon.json
snapshot "$W/after-bad"
is "nothing installed, nothing loaded" diff <(names "$W/before") <(names "$W/after-bad")

section "install.sh --restart-docker --enforce"
s=$(date +%s)
./install.sh --prebuilt --sim-gpus 1 --restart-docker --enforce >"$W/install1" 2>&1
rc=$?
sed 's/^/  | /' "$W/install1"
eq "install.sh exit status ($(($(date +%s) - s))s)" "$rc" 0
[ "$rc" = 0 ] || { summary e2e; exit 1; }
eq "module version" "$(cat $P/version)" "$VER"
eq "GPUs in the tree" "$(ls -d $P/[0-9]* | wc -l)" 1
is "/dev/cgpu is a character device" test -c /dev/cgpu
eq "loaded at boot" "$(cat /etc/modules-load.d/cgpu_km.conf) / $(cat /etc/modprobe.d/cgpu_km.conf)" "cgpu_km / options cgpu_km ngpus=1 enforce=1"
# cgpu_km finds the stand-in and its release (/sys/module/nvidia/version, as on a real
# node): budgets are enforced at its boundary from here on, and libcgpu steps back.
eq "enforcement" "$(head -1 $P/enforcement)" "enforcement: on (driver 535.261.03)"
is "install.sh says so" grep -qxF "install.sh:   enforcing  at the NVIDIA driver's boundary: on (driver 535.261.03)" "$W/install1"
eq "the stand-in driver loaded at boot" "$(tr '\n' ' ' </etc/modules-load.d/cgpu-sim.conf)/ $(cat /etc/modprobe.d/cgpu-sim.conf)" "nvidia nvidia_uvm / options nvidia gpus=1 mem_mib=15109"
is "and installed where modprobe finds it" cmp "/lib/modules/$KVER/extra/cgpu-sim/nvidia.ko" simdrv/nvidia.ko
is "nvidia-uvm.ko beside it" cmp "/lib/modules/$KVER/extra/cgpu-sim/nvidia-uvm.ko" simdrv/nvidia-uvm.ko
is "nvidia_uvm loaded, holding nvidia" test -e /sys/module/nvidia/holders/nvidia_uvm
eq "the stand-in's GPU" "$(cat $SD/version) $(cat $SD/gpus/0/total)" "535.261.03 $((15109 << 20))"
eq "its nodes, with the real driver's numbers" "$(nodes)" "$(uvm)$GPU0$CTL"
is "DKMS has it installed" sh -c "dkms status cgpu_km | grep -q 'cgpu_km/$VER, $KVER, .*: installed'"
eq "docker lists the runtime" "$(docker info --format '{{(index .Runtimes "cgpu").Path}}')" /usr/local/bin/cgpu-runtime
is "the user's daemon.json keys survive" cmp <(jq -S 'del(.runtimes)' /etc/docker/daemon.json) <(jq -S . "$W/user-daemon.json")
is "backup kept" cmp /etc/docker/daemon.json.cgpu-backup "$W/user-daemon.json"
eq "the host's nvidia-smi is the simulated T4" "$(nvidia-smi -L)" "GPU 0: Tesla T4 (UUID: GPU-c6a1d000-0000-4000-8000-000000000000)"
is "docker cgpu is a docker command" sh -c "docker cgpu run --help | grep -q gpu-mem"

section "install.sh a second time changes nothing"
snapshot "$W/installed"
dpid=$(pidof dockerd)
s=$(date +%s)
./install.sh --prebuilt --sim-gpus 1 --restart-docker --enforce >"$W/install2" 2>&1
rc=$?
eq "exit status ($(($(date +%s) - s))s)" "$rc" 0
eq "steps that changed something" "$(grep -cE '^install\.sh:   (installed|replaced|created|backup|building|loaded|restart)' "$W/install2")" 0
is "every step said unchanged" sh -c "[ \$(grep -c '   unchanged  ' $W/install2) -ge 18 ]"
snapshot "$W/installed2"
is "every path, size and mtime as before" diff "$W/installed" "$W/installed2"
eq "dockerd not restarted" "$(pidof dockerd)" "$dpid"

section "a local image: busybox, glibc and cudaprobe (no CUDA driver inside)"
build_image simdrv/build/rawalloc && ok "image $IMAGE built" || { bad "image build"; summary e2e; exit 1; }

section "SPEC's example: docker cgpu run, 6 and 8 GiB on a 15 GiB GPU"
docker "${SPEC_RUN[@]}" --name gpu_test1 -e ALIYUN_COM_GPU_MEM_CONTAINER=6 -e ALIYUN_COM_GPU_MEM_DEV=15 $IMAGE >/dev/null
docker "${SPEC_RUN[@]}" --name gpu_test2 -e ALIYUN_COM_GPU_MEM_CONTAINER=8 -e ALIYUN_COM_GPU_MEM_DEV=15 $IMAGE >/dev/null
eq "instances in the tree" "$(instances | wc -l)" 2
eq "gpu_test1 memsize" "$(memsize gpu_test1)" $SIX
eq "gpu_test2 memsize" "$(memsize gpu_test2)" $EIGHT
for x in "gpu_test1 $SIX 6043" "gpu_test2 $EIGHT 8058"; do
	set -- $x
	is "$1: /etc/ld.so.preload names libcgpu" sh -c "docker exec $1 cat /etc/ld.so.preload | grep -qx /usr/local/lib/cgpu/libcgpu.so"
	is "$1: /dev/cgpu is there" docker exec "$1" test -c /dev/cgpu
	eq "$1: the stand-in's nodes of its GPU, and nvidia-uvm's" "$(nodes "$1")" "$(uvm)$GPU0$CTL"
	mi=$(inside "$1" cudaprobe meminfo)
	eq "$1: cuMemGetInfo total" "$(val cuda.total "$mi")" "$2"
	eq "$1: NVML total" "$(val nvml.total "$mi")" "$2"
	eq "$1: nvidia-smi" "$(inside "$1" nvidia-smi | grep -o '[0-9]*MiB / [0-9]*MiB')" "0MiB / $3MiB"
	loop=$(inside "$1" cudaprobe alloc-loop -c 64)
	eq "$1: allocated in 64 MiB steps until refused, its context and page tables charged" "$(val allocated "$loop")" $((($2 - CTXC) / STEP * CHUNK))
	eq "$1: refused with" "$(val stop "$loop")" CUDA_ERROR_OUT_OF_MEMORY
	eq "$1: kernel ledger (no process-local fallback)" "$(grep -c 'environment in this process' <<<"$loop")" 0
	eq "$1: returned at exit" "$(meminfo_free "$1")" "$2"
done
pid=$(holding gpu_test1 $GIB)
id1=$(docker inspect -f '{{.Id}}' gpu_test1)
eq "meminfo of gpu_test1 lists the holder, its page tables and its context" "$(grep -c "^PID: $pid Mem: $((GIB + $(tables $GIB) + CTXC))$" "$P/0/${id1:0:12}/meminfo")" 1
eq "the holder's host PID is cudaprobe" "$(cat /proc/$pid/comm 2>/dev/null)" cudaprobe
is "in gpu_test1's cgroup" grep -q "$id1" "/proc/$pid/cgroup"
eq "gpu_test1 Free" "$(meminfo_free gpu_test1)" $((SIX - GIB - $(tables $GIB) - CTXC))
eq "gpu_test1 sees the rest (less its own context)" "$(val cuda.free "$(inside gpu_test1 cudaprobe meminfo)")" $((SIX - GIB - $(tables $GIB) - 2 * CTXC))
eq "gpu_test2 untouched" "$(meminfo_free gpu_test2)" $EIGHT
eq "the node's nvidia-smi shows the GiB and its context on the shared GPU" "$(nvidia-smi --query-gpu=memory.used --format=csv,noheader)" "1088 MiB"
agree "two containers"
docker stop -t 1 gpu_test1 >/dev/null
eq "docker stop removes gpu_test1's instance" "$(instances | wc -l)" 1
eq "and its memory is back on the GPU" "$(nvidia-smi --query-gpu=memory.used --format=csv,noheader)" "0 MiB"
docker rm gpu_test1 >/dev/null
agree "after stop and rm"

section "GPU full: 8 more GiB with 8 in use"
docker "${SPEC_RUN[@]}" --name full -e ALIYUN_COM_GPU_MEM_CONTAINER=8 $IMAGE >"$W/out" 2>&1
eq "docker cgpu run refused with status" "$?" 125
is "naming what is left" grep -q 'left after 1 instance(s)' "$W/out"
is "nothing created" sh -c "! docker inspect full"
docker run -d --runtime cgpu --label cgpu.test=on --name full -e ALIYUN_COM_GPU_MEM_CONTAINER=8 $IMAGE sleep 1000 >"$W/out" 2>&1
is "plain docker run refused by the runtime" grep -q 'OCI runtime create failed: cgpu: GPU 0' "$W/out"
eq "the container stays Created" "$(docker inspect -f '{{.State.Status}}' full)" created
agree "GPU full"
docker rm full >/dev/null

section "plain docker run --runtime cgpu (no plugin) is enforced the same way"
docker run -d -t --runtime cgpu --label cgpu.test=on --name plain -e ALIYUN_COM_GPU_MEM_CONTAINER=6 -e ALIYUN_COM_GPU_MEM_DEV=15 $IMAGE >/dev/null
eq "memsize" "$(memsize plain)" $SIX
eq "nvidia-smi" "$(inside plain nvidia-smi | grep -o '[0-9]*MiB / [0-9]*MiB')" "0MiB / 6043MiB"
loop=$(inside plain cudaprobe alloc-loop -c 64)
eq "allocated until refused" "$(val allocated "$loop")" $(((SIX - CTXC) / STEP * CHUNK))
agree "plain run"

section "CGPU_DISABLE=true and ALIYUN_COM_GPU_MEM_CONTAINER=0: not limited, nothing of cgpu injected"
for env in "CGPU_DISABLE=true -e ALIYUN_COM_GPU_MEM_CONTAINER=6" "ALIYUN_COM_GPU_MEM_CONTAINER=0"; do
	docker stop -t 1 plain >/dev/null # the whole GPU for this one
	out=$(docker run --rm --runtime cgpu -e $env -e NVIDIA_VISIBLE_DEVICES=all $IMAGE sh -c \
		'ls /etc/ld.so.preload /usr/local/lib/cgpu /dev/cgpu 2>&1; cudaprobe alloc-loop -c 1024')
	eq "$env: no preload, no libcgpu, no /dev/cgpu" "$(grep -c 'No such file' <<<"$out")" 3
	eq "$env: allocates the whole GPU (1 GiB steps)" "$(val allocated "$out")" $((14 * GIB))
	docker start plain >/dev/null
	agree "$env"
done

section "runc fails after registration"
docker run -d --runtime cgpu --label cgpu.test=on --name broken -e ALIYUN_COM_GPU_MEM_CONTAINER=1 $IMAGE /no/such/program >"$W/out" 2>&1
is "docker run fails" grep -q 'no such file or directory' "$W/out"
eq "no instance left for it" "$(instances | grep -c "$(id_of broken)")" 0
agree "runc failed"
docker rm broken >/dev/null

section "kill -9 of a container's processes"
pid=$(holding gpu_test2 $((2 * GIB)))
eq "2 GiB held in gpu_test2" "$(meminfo_free gpu_test2)" $((EIGHT - 2 * GIB - $(tables $((2 * GIB))) - CTXC))
kill -9 "$pid"
wait_for 30 sh -c "[ \"\$(sed -n 's/^Free: //p' $P/0/$(id_of gpu_test2)/meminfo)\" = $EIGHT ]"
eq "SIGKILL of the holder returns its memory" "$(meminfo_free gpu_test2)" $EIGHT
eq "no PID lines left" "$(grep -c ^PID: "$P/0/$(id_of gpu_test2)/meminfo")" 0
eq "the GPU has it back too" "$(nvidia-smi --query-gpu=memory.used --format=csv,noheader)" "0 MiB"
agree "holder killed"
kill -9 "$(docker inspect -f '{{.State.Pid}}' plain)"
wait_for 30 sh -c "[ \"\$(docker inspect -f '{{.State.Status}}' plain)\" = exited ]"
eq "SIGKILL of plain's init: the container exited" "$(docker inspect -f '{{.State.Status}}' plain)" exited
wait_for 30 sh -c "! ls -d $P/0/$(id_of plain) 2>/dev/null"
agree "container killed"
docker rm plain >/dev/null

section "dockerd killed and started again with cGPU containers running (live-restore)"
docker "${SPEC_RUN[@]}" --name gpu_test1 -e ALIYUN_COM_GPU_MEM_CONTAINER=6 -e ALIYUN_COM_GPU_MEM_DEV=15 $IMAGE >/dev/null
pid=$(holding gpu_test1 $GIB)
kill -9 "$(pidof dockerd)"
sleep 1
eq "instances while dockerd is down" "$(instances | wc -l)" 2
/etc/init.d/docker start >/dev/null
wait_for 120 docker version
eq "both containers still run" "$(docker ps -q --filter label=cgpu.test=on | wc -l)" 2
eq "gpu_test1 still holds its GiB" "$(meminfo_free gpu_test1)" $((SIX - GIB - $(tables $GIB) - CTXC))
loop=$(inside gpu_test1 cudaprobe alloc-loop -c 64)
eq "and is still refused past its budget" "$(val allocated "$loop")" $(((SIX - GIB - $(tables $GIB) - 2 * CTXC) / STEP * CHUNK))
agree "dockerd restarted"
docker stop -t 1 gpu_test1 >/dev/null
eq "docker stop after the restart unregisters" "$(instances | grep -c "$(id_of gpu_test1)")" 0
agree "stopped after the restart"

section "the module not loaded"
docker rm -f gpu_test1 gpu_test2 >/dev/null
rmmod cgpu_km
docker run -d --runtime cgpu --label cgpu.test=on --name nomod -e ALIYUN_COM_GPU_MEM_CONTAINER=1 $IMAGE sleep 100 >"$W/out" 2>&1
is "refused, saying how to load it" grep -q 'cgpu_km kernel module is not loaded (/proc/cgpu_km is missing): load it with `modprobe cgpu_km ngpus=1`' "$W/out"
eq "the container stays Created" "$(docker inspect -f '{{.State.Status}}' nomod)" created
docker cgpu run -d --name nomod2 -e ALIYUN_COM_GPU_MEM_CONTAINER=1 $IMAGE >"$W/out" 2>&1
is "docker cgpu run refuses too" grep -q 'cgpu_km kernel module is not loaded' "$W/out"
eq "a container that asks for no GPU memory still runs" "$(docker run --rm --runtime cgpu $IMAGE echo fine)" fine
agree "no module"
docker rm nomod >/dev/null
modprobe cgpu_km
agree "module loaded again"

section "two GPUs: the stand-in's nodes in containers, raw allocations through them"
# As on a node whose stand-in is nvidia alone (installed before nvidia-uvm was a module
# of its own): the reload takes what is loaded and loads both.
is "nvidia_uvm unloaded by hand" rmmod nvidia_uvm
# A bad channel cap is refused before anything changes.
./install.sh --prebuilt --sim-gpus 2 --enforce --max-channels 16385 >"$W/out" 2>&1
eq "install.sh --max-channels 16385: exit status, and why" "$? $(cat "$W/out")" \
	"2 install.sh: --max-channels 16385: want 0..16384 (0: no cap)"
./install.sh --prebuilt --sim-gpus 2 --max-channels 64 >"$W/out" 2>&1
eq "install.sh --max-channels without --enforce" "$? $(cat "$W/out")" \
	"2 install.sh: --max-channels needs --enforce (it caps what enforce=1 counts)"
eq "nothing changed" "$(cat /etc/modprobe.d/cgpu_km.conf) $(cat /sys/module/cgpu_km/parameters/max_channels)" \
	"options cgpu_km ngpus=1 enforce=1 256"
s=$(date +%s)
./install.sh --prebuilt --sim-gpus 2 --enforce --max-channels 64 >"$W/out" 2>&1
rc=$?
grep -E 'stand-in|nvidia|enforc|channels|FAILED' "$W/out" | sed 's/^/  | /'
eq "install.sh --sim-gpus 2 --enforce --max-channels 64 ($(($(date +%s) - s))s)" "$rc" 0
eq "the cap, now and at boot" "$(cat /sys/module/cgpu_km/parameters/max_channels) / $(cat /etc/modprobe.d/cgpu_km.conf)" \
	"64 / options cgpu_km ngpus=2 enforce=1 max_channels=64"
eq "and in the enforcement file" "$(sed -n 's/^channel cap: //p' $P/enforcement)" 64
# The same node again with another cap: set on the loaded module, no reload.
./install.sh --prebuilt --sim-gpus 2 --enforce --max-channels 32 >"$W/out" 2>&1
eq "install.sh --max-channels 32 on the loaded module: exit status, what it did" \
	"$? $(grep -c 'loaded     cgpu_km' "$W/out") $(grep -c 'set        max_channels=32' "$W/out")" "0 0 1"
eq "the new cap, now and at boot" "$(cat /sys/module/cgpu_km/parameters/max_channels) / $(cat /etc/modprobe.d/cgpu_km.conf)" \
	"32 / options cgpu_km ngpus=2 enforce=1 max_channels=32"
eq "the stand-in reloaded" "$(cat /sys/module/nvidia/parameters/gpus) / $(cat /etc/modprobe.d/cgpu-sim.conf)" "2 / options nvidia gpus=2 mem_mib=15109"
is "with nvidia_uvm loaded again" test -e /sys/module/nvidia/holders/nvidia_uvm
eq "its nodes" "$(nodes)" "$(uvm)$GPU0$GPU1$CTL"
eq "cgpu_km enforces at the stand-in's boundary" "$(head -1 $P/enforcement)" "enforcement: on (driver 535.261.03)"
# rawalloc (static: no libcgpu) allocates 256 MiB at a time with raw RM ioctls on GPU 1
# until refused, then holds it: the 1 GiB budget (1056195652 bytes) takes three.
docker cgpu run -d --label cgpu.test=on --name raw1 -e ALIYUN_COM_GPU_VISIBLE_DEVICES=1 \
	-e ALIYUN_COM_GPU_MEM_CONTAINER=1 $IMAGE rawalloc loop 256 1 >/dev/null
wait_for 60 sh -c "docker logs raw1 2>&1 | grep -qx held"
eq "a container on GPU 1 has nvidiactl, nvidia1 and nvidia-uvm's only" "$(nodes raw1)" "$(uvm)$GPU1$CTL"
is "and no file of the simulated node's state: the stand-in holds the GPUs" docker exec raw1 sh -c '[ ! -e /run/cgpu-sim/state ]'
is "nor does the node" test ! -e /run/cgpu-sim/state
eq "refused at its budget by cgpu_km" "$(docker logs raw1 2>&1 | grep ^loop:)" "loop: 3 x 256 MiB, then status 0x51"
eq "the stand-in's ledger of GPU 1" "$(cat $SD/gpus/1/used)" $((768 << 20))
eq "GPU 0 untouched" "$(cat $SD/gpus/0/used)" 0
eq "charged to raw1's instance on GPU 1" "$(sed -n 's/^Free: //p' "$P/1/$(id_of raw1)/meminfo")" $((1056195652 - (768 << 20)))
eq "a plain container with NVIDIA_VISIBLE_DEVICES=0 has nvidia0, nvidiactl and nvidia-uvm's" \
	"$(docker run --rm --runtime cgpu -e NVIDIA_VISIBLE_DEVICES=0 $IMAGE sh -c 'stat -c "%n %F %t:%T %a;" /dev/nvidia*' | tr -d '\n')" "$(uvm)$GPU0$CTL"
agree "raw allocations"
docker rm -f raw1 >/dev/null
wait_for 30 sh -c "[ \$(cat $SD/gpus/1/used) = 0 ]"
eq "docker rm gives the stand-in's memory back" "$(cat $SD/gpus/1/used)" 0
agree "raw1 removed"

section "enforce=1: a 2 GiB container cannot hold more, whatever runs in it"
# Each way out of the budget (docs/kmod.md): the simulated libcuda allocates through the
# stand-in, cgpu_km charges and refuses at its boundary; libcgpu, in kernel mode, charges
# nothing itself. At the peak, what GPU 0 holds (the node's driver) must be within the
# budget and the container's charge, which is the memory it holds and the most page
# tables its mappings can take; after the process, 0.
TWO=2112391304 # 2 of 15 GiB of a 15109 MiB T4
docker cgpu run -d --label cgpu.test=on --name esc -e ALIYUN_COM_GPU_VISIBLE_DEVICES=0 \
	-e ALIYUN_COM_GPU_MEM_CONTAINER=2 $IMAGE sleep 600 >/dev/null
ESC=$(id_of esc)
# escape NAME WANT MAPS [EXEC-OPTIONS] -- COMMAND...: runs COMMAND in esc until it holds
# ("holding" or "held"), then checks it stopped at WANT bytes of memory, charged them and
# MAPS for its mappings' page tables, of which GPU 0 holds no more.
escape() {
	local name=$1 want=$2 maps=$3 opts=() out held charged
	shift 3
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	docker exec -d "${opts[@]}" esc sh -c "exec $* >/tmp/$name 2>&1"
	wait_for 120 sh -c "docker exec esc grep -qE '^(holding|held)' /tmp/$name"
	out=$(docker exec esc cat /tmp/$name | grep -E '^(stop|loop:)' | tr '\n' ' ')
	held=$(cat $SD/gpus/0/used)
	charged=$((TWO - $(sed -n 's/^Free: //p' "$P/0/$ESC/meminfo")))
	if [ "$charged" = $((want + maps)) ] && [ "$held" -ge "$want" ] && [ "$held" -le "$charged" ] &&
		[ "$charged" -le "$TWO" ]; then
		ok "$name: stopped at $held bytes of $TWO, charged $charged ($out)"
	else
		bad "$name: GPU 0 holds $held (want $want and at most $maps of page tables), charged $charged (want $((want + maps)), at most $TWO) ($out)"
	fi
	docker exec esc sh -c 'kill $(pidof cudaprobe rawalloc)' 2>/dev/null
	wait_for 30 sh -c "[ \$(cat $SD/gpus/0/used) = 0 ]"
	eq "$name: given back" "$(cat $SD/gpus/0/used) $(sed -n 's/^Free: //p' "$P/0/$ESC/meminfo")" "0 $TWO"
}
MIB64=$((64 << 20))
# The context and 30 allocations of 64 MiB, each mapped; of 2 MiB + 1 byte (4 MiB held),
# 481; the static program maps nothing.
T64=$(tables $MIB64)
escape alloc-loop $((31 * MIB64)) $((31 * T64)) -- cudaprobe alloc-loop -c 64 -k
escape cgpu-disable $((31 * MIB64)) $((31 * T64)) -e CGPU_DISABLE=1 -- cudaprobe alloc-loop -c 64 -k
escape vmm-release-mapped $((31 * MIB64)) $((31 * T64)) -- cudaprobe vmm-loop -c 64 -k
escape pools $((31 * MIB64)) $((31 * T64)) -- cudaprobe pool-loop -c 64 -k
escape 2mib-plus-1 $((CTX + 481 * (4 << 20))) $((T64 + 481 * $(tables $((4 << 20))))) -- cudaprobe alloc-loop -b 2097153 -k
escape static-raw-ioctls $((31 * MIB64)) 0 -- rawalloc loop 64 0
docker rm -f esc >/dev/null
agree "esc removed"

section "upgrade.sh (cold)"
# The next version is the same sources under another number, built on the host; the
# broken one fails at once in Kbuild, before compiling anything.
(me=e2e && source scripts/cgpu-lib.sh && stage_source kmod "$W/kmod-broken")
sed -i "s/\"$VER\"/\"$BROKEN\"/" "$W/kmod-broken/dkms.conf"
echo '$(error broken on purpose by the cgpu stack test)' >>"$W/kmod-broken/Kbuild"
NEXT_ARGS=(--source "$V/next" --built "$V/next/cgpu_km.ko")
docker "${SPEC_RUN[@]}" --name busy -e ALIYUN_COM_GPU_MEM_CONTAINER=2 $IMAGE >/dev/null
./upgrade.sh "${NEXT_ARGS[@]}" >"$W/out" 2>&1
eq "refused while a container runs" "$?" 1
is "naming it" grep -q "instance $(id_of busy) on GPU 0 (container busy)" "$W/out"
docker rm -f busy >/dev/null
s=$(date +%s)
./upgrade.sh --source "$W/kmod-broken" >"$W/out" 2>&1
rc=$?
eq "a build that fails: exit status ($(($(date +%s) - s))s)" "$rc" 1
is "says so" grep -q "FAILED: building cgpu_km $BROKEN; cgpu_km $VER stays" "$W/out"
eq "still loaded" "$(cat $P/version)" "$VER"
eq "DKMS as before" "$(dkms status cgpu_km | cut -d, -f1 | tr '\n' ' ')" "cgpu_km/$VER "
is "no sources of $BROKEN left" test ! -e "/usr/src/cgpu_km-$BROKEN"
echo 2 >$P/0/policy
echo 8 >$P/0/max_inst
s=$(date +%s)
./upgrade.sh "${NEXT_ARGS[@]}" >"$W/out" 2>&1
rc=$?
sed 's/^/  | /' "$W/out"
eq "upgrade to $NEXT ($(($(date +%s) - s))s)" "$rc" 0
eq "/proc/cgpu_km/version" "$(cat $P/version)" "$NEXT"
eq "settings carried over" "$(cat $P/0/policy) $(cat $P/0/max_inst)" "2 8"
eq "enforce=1 carried over" "$(cat /sys/module/cgpu_km/parameters/enforce)" 1
is "DKMS has $NEXT installed, nothing else" sh -c "[ \"\$(dkms status cgpu_km)\" = \"cgpu_km/$NEXT, $KVER, $(uname -m): installed\" ]"
is "the old sources are gone" test ! -e "/usr/src/cgpu_km-$VER"
is "DKMS installed the module built on the host" cmp "/lib/modules/$KVER/updates/dkms/cgpu_km.ko" "$V/next/cgpu_km.ko"
docker cgpu run -d --label cgpu.test=on --name after -e ALIYUN_COM_GPU_MEM_CONTAINER=6 $IMAGE sleep 1000 >/dev/null
eq "a container on the new module" "$(val cuda.total "$(inside after cudaprobe meminfo)")" $SIX
agree "after the upgrade"
docker rm -f after >/dev/null
./upgrade.sh "${NEXT_ARGS[@]}" >"$W/out" 2>&1
is "the same version again is refused" grep -q "cgpu_km $NEXT is installed already" "$W/out"

section "install.sh --uninstall --restart-docker"
s=$(date +%s)
./install.sh --uninstall --restart-docker >"$W/out" 2>&1
rc=$?
sed 's/^/  | /' "$W/out"
eq "exit status ($(($(date +%s) - s))s)" "$rc" 0
is "no module" test ! -d /sys/module/cgpu_km
is "no device" test ! -e /dev/cgpu
is "no stand-in driver, no /dev/nvidia*" sh -c "[ ! -d /sys/module/nvidia ] && [ ! -d /sys/module/nvidia_uvm ] && ! ls /dev/nvidia* 2>/dev/null"
is "no runtime in docker" sh -c "! docker info --format '{{json .Runtimes}}' | grep -q cgpu"
is "daemon.json has the user's settings, and only those" cmp <(jq -S . /etc/docker/daemon.json) <(jq -S . "$W/user-daemon.json")
snapshot "$W/uninstalled"
is "no file left behind" diff <(names "$W/before") <(names "$W/uninstalled")
diff <(names "$W/before") <(names "$W/uninstalled") | head -20

section "a failed install leaves the node as it was"
cp /etc/docker/daemon.json "$W/pre-rollback.json"
mkdir -p "$W/tree/scripts" "$W/tree/libcgpu/build" "$W/tree/sim" "$W/tree/simdrv"
cp -r install.sh bin "$W/tree/"
cp -r sim/build "$W/tree/sim/"
cp scripts/cgpu-lib.sh "$W/tree/scripts/"
cp libcgpu/build/libcgpu.so "$W/tree/libcgpu/build/"
cp simdrv/nvidia.ko simdrv/nvidia-uvm.ko "$W/tree/simdrv/"
cp -r kmod "$W/tree/kmod"
echo '$(error broken on purpose by the cgpu stack test)' >>"$W/tree/kmod/Kbuild"
s=$(date +%s)
"$W/tree/install.sh" --prebuilt --sim-gpus 1 >"$W/out" 2>&1
rc=$?
sed 's/^/  | /' "$W/out"
eq "exit status ($(($(date +%s) - s))s)" "$rc" 1
is "the failed step is named" grep -q "FAILED: building cgpu_km $VER through DKMS" "$W/out"
is "what it changed is undone" grep -q 'the node is as it was before this run' "$W/out"
is "daemon.json as it was" cmp /etc/docker/daemon.json "$W/pre-rollback.json"
is "the stand-in unloaded again" sh -c "[ ! -d /sys/module/nvidia ] && [ ! -d /sys/module/nvidia_uvm ]"
snapshot "$W/rolled-back"
is "no file left behind" diff <(names "$W/before") <(names "$W/rolled-back")
diff <(names "$W/before") <(names "$W/rolled-back") | head -20

section "done"
summary e2e
