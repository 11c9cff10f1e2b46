#!/usr/bin/env bash
# libcgpu with the kernel ledger, inside the test VM (test/suites/60-vm-libcgpu.sh
# starts it through test/vm/run.sh), as root from the repo root. SPEC's example:
# two containers of 6 and 8 GiB on one 15 GiB simulated T4, each a cgroup named as
# Docker's systemd driver names it, every CUDA process in it with libcgpu preloaded.
set -uo pipefail
source libcgpu/tests/vm-lib.sh
export CGPU_SIM_MEM_MIB=15109 CGPU_TEST_SMI=$SIM/nvidia-smi
# val KEY FILE: a key=value line of cudaprobe's output.
val() { sed -n "s/^$1=//p" "$2" | head -1; }

T=$((15109 << 20))
SIX=$((6 * T / 15)) EIGHT=$((8 * T / 15)) ONE=$((1 << 30))
A=$(printf a | sha256sum | cut -c1-64)
B=$(printf b | sha256sum | cut -c1-64)
C=$(printf c | sha256sum | cut -c1-64)
D=$(printf d | sha256sum | cut -c1-64)
SMALL=$((48 << 20))
UUID=GPU-c6a1d000-0000-4000-8000-000000000000
insmod kmod/cgpu_km.ko ngpus=1 || { echo "FAIL: insmod"; exit 1; }
for x in "$A $SIX" "$B $EIGHT" "$C $ONE" "$D $SMALL"; do
	set -- $x
	mkdir -p "$CG/system.slice/docker-$1.scope"
	echo "add 0 $1 memsize=$2 uuid=$UUID" >$P/inst_ctl || bad "inst_ctl add $1"
	bind_ctr 0 "$1" || bad "inst_ctl bind $1"
done

# bg NAME ID CMD...: like in_ctr, in the background; waits for cudaprobe's
# "holding pid=PID" and keeps PID in $W/NAME.pid.
bg() {
	local name=$1 id=$2 i
	shift 2
	in_ctr "$id" "$@" >"$W/$name.out" 2>&1 &
	for i in $(seq 1 600); do
		sed -n 's/^holding pid=//p' "$W/$name.out" >"$W/$name.pid"
		[ ! -s "$W/$name.pid" ] || return 0
		sleep 0.05
	done
	bad "$name did not get to hold: $(cat "$W/$name.out")"
}
meminfo_free() { sed -n 's/^Free: //p' "$P/0/$(cut -c1-12 <<<"$1")/meminfo"; }
meminfo_pids() { grep -c '^PID:' "$P/0/$(cut -c1-12 <<<"$1")/meminfo"; }
chunk=$((64 << 20))

echo "--- each container allocates up to its own budget, refused past it"
for x in "$A $SIX" "$B $EIGHT"; do
	set -- $x
	in_ctr "$1" "$SIM/cudaprobe" alloc-loop -c 64 >"$W/loop" 2>"$W/loop.err"
	eq "allocated in $(cut -c1-12 <<<"$1")" "$(val allocated "$W/loop")" $(($2 / chunk * chunk))
	eq "stopped by" "$(val stop "$W/loop")" CUDA_ERROR_OUT_OF_MEMORY
	eq "kernel mode, no local-mode line" "$(grep -c 'environment in this process' "$W/loop.err")" 0
	eq "released at exit" "$(meminfo_free "$1")" "$2"
	echo "container $(cut -c1-12 <<<"$1"): $(val allocated "$W/loop") of $2 bytes"
done

echo "--- CGPU_DISABLE set in a registered container's process (docker exec -e) lifts nothing"
in_ctr "$A" env CGPU_DISABLE=true "$SIM/cudaprobe" alloc-loop -c 64 >"$W/loop" 2>"$W/loop.err"
eq "allocated with CGPU_DISABLE=true" "$(val allocated "$W/loop")" $((SIX / chunk * chunk))
eq "stopped by" "$(val stop "$W/loop")" CUDA_ERROR_OUT_OF_MEMORY
eq "said it is ignored" "$(grep -c 'CGPU_DISABLE is ignored' "$W/loop.err")" 1
eq "released at exit" "$(meminfo_free "$A")" "$SIX"

echo "--- cuMemGetInfo, cuDeviceTotalMem, NVML and nvidia-smi show the budget"
for x in "$A $SIX 6043" "$B $EIGHT 8058"; do
	set -- $x
	in_ctr "$1" "$SIM/cudaprobe" meminfo >"$W/mi"
	for k in cuda.total cuda.free cuda.devtotal nvml.total nvml.free nvml2.total; do
		eq "$k" "$(val $k "$W/mi")" "$2"
	done
	eq "nvidia-smi" "$(in_ctr "$1" "$SIM/nvidia-smi" | grep -o '[0-9]*MiB / [0-9]*MiB')" "0MiB / $3MiB"
done

echo "--- two processes in one container share one budget"
bg a1 "$A" "$SIM/cudaprobe" alloc $((4 << 30)) -k
in_ctr "$A" "$SIM/cudaprobe" meminfo >"$W/mi"
eq "the other process sees what is left" "$(val cuda.free "$W/mi")" $((SIX - (4 << 30)))
eq "nvml used is the container's" "$(val nvml.used "$W/mi")" $((4 << 30))
bg a2 "$A" "$SIM/cudaprobe" alloc-loop -c 64 -k
eq "second process gets the rest" "$(val allocated "$W/a2.out")" $(((SIX - (4 << 30)) / chunk * chunk))
eq "meminfo has both" "$(meminfo_pids "$A")" 2
eq "container B untouched" "$(meminfo_free "$B")" "$EIGHT"

echo "--- SIGKILL returns the memory"
kill -9 "$(cat "$W/a2.pid")" "$(cat "$W/a1.pid")"
wait
eq "meminfo back" "$(meminfo_free "$A")" "$SIX"
eq "no process lines" "$(meminfo_pids "$A")" 0
LD_PRELOAD= "$SIM/nvidia-smi" --query-gpu=memory.used --format=csv,noheader,nounits >"$W/phys"
eq "the simulated GPU reaped it too" "$(cat "$W/phys")" 0

echo "--- every hooked call through every path, kernel ledger (1 GiB container; 48 MiB for threads)"
for g in paths pools handles ctx; do
	in_ctr "$C" "$HOOK/hook-test" $g $ONE || bad "hook-test $g"
done
in_ctr "$C" "$HOOK/hook-test" fork $ONE shared || bad "hook-test fork"
in_ctr "$D" "$HOOK/hook-test" threads $SMALL || bad "hook-test threads"
eq "nothing left charged" "$(meminfo_free "$C")" "$ONE"
eq "nothing left charged (threads)" "$(meminfo_free "$D")" "$SMALL"

echo "--- a process in no container: not limited; with a budget in its env: local mode"
"$SIM/cudaprobe" alloc-loop -c 1024 >"$W/free"
eq "outside any container" "$(val allocated "$W/free")" $((14 << 30))
LD_PRELOAD=$HOOK/libcgpu.so CGPU_MEM_LIMIT_BYTES=$((2 * T / 15)) "$SIM/cudaprobe" alloc-loop -c 64 >"$W/local" 2>"$W/local.err"
eq "ENOENT with a budget in the env" "$(val allocated "$W/local")" $((2 * T / 15 / chunk * chunk))
eq "said so" "$(grep -c 'environment in this process' "$W/local.err")" 1

echo "--- benchmark: libcgpu with the kernel ledger (figures, not checks)"
# Not preloaded: with libcgpu preloaded its dlsym hands the benchmark's "direct"
# lookups the hooks too, and both columns would measure libcgpu.
sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/system.slice/docker-$C.scope" \
	"$HOOK/bench" "$HOOK/libcgpu.so" 500
echo "--- the same outside any container, process-local mode, for comparison"
CGPU_MEM_LIMIT_BYTES=$ONE "$HOOK/bench" "$HOOK/libcgpu.so" 500 2>/dev/null

for id in "$A" "$B" "$C" "$D"; do
	echo "del 0 $id" >$P/inst_ctl || bad "inst_ctl del"
done
rmmod cgpu_km || bad "rmmod"
echo "vm-libcgpu: $checks checks, $fails failed"
[ "$fails" = 0 ]
