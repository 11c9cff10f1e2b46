#!/usr/bin/env bash
# Inside the test VM (test/suites/57-vm-simdrv.sh): loads the stand-in driver as built
# on the host, checks its nodes, runs the raw-ABI program against it, kills a holder
# with SIGKILL and expects every byte back, then does the same for the 545+ layout.
# Then the simulated libcuda and NVML (sim/build) on it: their memory is the driver's,
# and test/gpu/rmtrace.sh's trace of them adds up to it.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/load.sh
ko=$PWD/nvidia.ko
raw=$PWD/build/rawalloc
used() { cat /proc/driver/nvidia-sim/gpus/"${1:-0}"/used; }
MiB=$((1 << 20))

for ver in 535.261.03 550.163.01; do
	echo "== stand-in driver $ver"
	simdrv_load gpus=2 mem_mib=1024 version="$ver"
	# Two modules, as NVIDIA's: nvidia_uvm uses nvidia's exports, so nvidia stays while
	# it is loaded.
	[ -e /sys/module/nvidia/holders/nvidia_uvm ] || { echo "nvidia_uvm does not hold nvidia" >&2; exit 1; }
	if rmmod nvidia 2>/dev/null; then echo "nvidia unloaded under nvidia_uvm" >&2; exit 1; fi
	# The real driver's device numbers: major 195, nvidia0..N-1, nvidiactl at 255.
	for n in nvidia0:0 nvidia1:1 nvidiactl:255; do
		[ "$(stat -c '%F %t %T %a' "/dev/${n%%:*}")" = "character special file c3 $(printf '%x' "${n#*:}") 666" ] ||
			{ echo "bad node /dev/${n%%:*}: $(stat -c '%F %t %T %a' "/dev/${n%%:*}")" >&2; exit 1; }
	done
	[ ! -e /dev/nvidia2 ] || { echo "/dev/nvidia2 exists with gpus=2" >&2; exit 1; }
	# nvidia-uvm's nodes: the major the kernel gave the region named nvidia-uvm, minors
	# 0 and 1, served by nvidia_uvm's code; opened and initialized as libcuda's cuInit does.
	um=$(awk '$2 == "nvidia-uvm" { print $1 }' /proc/devices)
	[ -n "$um" ] || { echo "no nvidia-uvm region in /proc/devices" >&2; exit 1; }
	for n in nvidia-uvm:0 nvidia-uvm-tools:1; do
		[ "$(stat -c '%F %t %T %a' "/dev/${n%%:*}")" = "character special file $(printf '%x' "$um") $(printf '%x' "${n#*:}") 666" ] ||
			{ echo "bad node /dev/${n%%:*}: $(stat -c '%F %t %T %a' "/dev/${n%%:*}") (nvidia-uvm is major $um)" >&2; exit 1; }
	done
	grep -q " uvm_ioctl	\[nvidia_uvm\]" /proc/kallsyms || { echo "no uvm_ioctl of nvidia_uvm in kallsyms" >&2; exit 1; }
	u=$("$raw" uvm)
	[ "$u" = "uvm: initialize 0x0, again 0x0, other flags 0x1f, unknown errno 22, tools open" ] ||
		{ echo "$u" >&2; exit 1; }
	# The module's version where NVIDIA's module has it (its MODULE_VERSION).
	[ "$(cat /sys/module/nvidia/version)" = "$ver" ] ||
		{ echo "/sys/module/nvidia/version: $(cat /sys/module/nvidia/version)" >&2; exit 1; }
	# The entry is reachable by the name the real release gives it.
	if [ "${ver%%.*}" -ge 545 ]; then entry=nvidia_unlocked_ioctl; else entry=nvidia_frontend_unlocked_ioctl; fi
	grep -q " $entry	\[nvidia\]" /proc/kallsyms || { echo "no $entry in kallsyms" >&2; exit 1; }
	# A second nvidia module: the kernel refuses the name.
	if insmod "$ko" 2>/dev/null; then echo "a second nvidia module loaded" >&2; exit 1; fi

	"$raw" check
	[ "$(used)" = 0 ]
	"$raw" engine
	# nvidia-uvm's mappings of RM memory hold it past its handle: three of 64 MiB
	# mapped with their handles freed hold 192 MiB, until their ranges are freed or the
	# va_space closed. nvidia.ko's half is exported by NVIDIA's names.
	for sym in nvUvmInterfaceDupMemory nvUvmInterfaceFreeDupedHandle; do
		grep -q " $sym	\[nvidia\]" /proc/kallsyms || { echo "no $sym in kallsyms" >&2; exit 1; }
	done
	uf=$(mktemp)
	"$raw" uvmhold 64 3 >"$uf" &
	pid=$!
	until grep -qx held "$uf"; do kill -0 "$pid" || { cat "$uf" >&2; exit 1; }; sleep 0.1; done
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	u=$(cat "$uf")
	rm -f "$uf"
	for want in "uvmhold: round 3: map status 0" \
		"uvmhold: 3 mapped, the driver holds 192 MiB more" \
		"uvmhold: one range freed, the driver holds 128 MiB more" \
		"uvmhold: closed, the driver holds 0 MiB more"; do
		grep -qx "$want" <<<"$u" || { echo "uvmhold: no \"$want\" in: $u" >&2; exit 1; }
	done
	[ "$(used)" = 0 ] || { echo "after uvmhold $(used) bytes are still held" >&2; exit 1; }
	echo "uvmhold: three mappings of 64 MiB hold 192 MiB past their handles, 128 once one range is freed, 0 once the va_space closes"

	# SIGKILL of a holder returns every byte.
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	"$raw" hold 300 >"$fifo" &
	pid=$!
	# start() reports the version first; the holder is ready at "held".
	while read -r line && [ "$line" != held ]; do echo "$line"; done <"$fifo"
	[ "$line" = held ] || { echo "the holder did not get its memory" >&2; exit 1; }
	[ "$(used)" = $((300 << 20)) ] || { echo "held $(used), want 300 MiB" >&2; exit 1; }
	echo "holder $pid holds $(( $(used) >> 20 )) MiB; SIGKILL"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	rm -f "$fifo"
	[ "$(used)" = 0 ] || { echo "after SIGKILL $(used) bytes are still held" >&2; exit 1; }
	simdrv_unload
	[ ! -e /dev/nvidiactl ] && [ ! -e /dev/nvidia-uvm ] && [ ! -e /proc/driver/nvidia-sim ] &&
		! grep -q ' nvidia-uvm$' /proc/devices
done
# The simulated libcuda allocates through the driver (docs/sim.md, "Memory in the
# stand-in driver"). sim-test's groups, on the node they expect (4 x 15109 MiB), check
# each figure of the sim's allocation model against NVML, which now reads the driver's
# ledger (so without the contexts' own memory: CGPU_SIM_CTX_RESERVE_MIB=0); a holder
# shows the model's bytes and its context's 64 MiB in /proc, NVML and nvidia-smi;
# SIGKILL gives them back.
sim=$PWD/../sim/build
export LD_LIBRARY_PATH=$sim CGPU_SIM_STATE=$(mktemp -u)
out=$(mktemp)
all_free() { for g in 0 1 2 3; do [ "$(used $g)" = 0 ] || { echo "$1: GPU $g holds $(used $g)" >&2; exit 1; }; done; }
for ver in 535.261.03 550.163.01; do
	echo "== the simulated libcuda on driver $ver"
	simdrv_load gpus=4 mem_mib=15109 version="$ver"
	rm -f "$CGPU_SIM_STATE"
	"$sim/cudaprobe" -d 1 alloc $((100 * MiB + 1)) -k >"$out" &
	pid=$!
	until grep -q '^holding' "$out"; do kill -0 "$pid" || { cat "$out" >&2; exit 1; }; sleep 0.1; done
	# 100 MiB + 1 takes 51 pages of 2 MiB in the model, and the context 64 MiB more; the
	# GPU holds nvidia-uvm's page tables for their mappings too, in no process's figure
	# (a directory of each level: 12 KiB).
	[ "$(used 1)" = $((166 * MiB + 3 * 4096)) ] || { echo "driver holds $(used 1), want 166 MiB and 12 KiB" >&2; exit 1; }
	# meminfo makes a context of its own on GPU 1: 64 MiB more while it runs, mapped in
	# a va_space of its own.
	"$sim/cudaprobe" -d 1 meminfo | grep -qx "nvml.used=$((230 * MiB + 6 * 4096))" || { echo "NVML: $("$sim/cudaprobe" -d 1 meminfo)" >&2; exit 1; }
	smi=$("$sim/nvidia-smi" --query-gpu=index,memory.used,memory.total --format=csv,noheader | sed -n 2p)
	[ "$smi" = "1, 166 MiB, 15109 MiB" ] || { echo "nvidia-smi: $smi" >&2; exit 1; }
	# The driver lists its client by the creator's pid; nvidia-smi's process table too.
	grep -qx "$pid $((166 * MiB))" /proc/driver/nvidia-sim/gpus/1/processes ||
		{ echo "processes: $(cat /proc/driver/nvidia-sim/gpus/1/processes)" >&2; exit 1; }
	# A reader in another pid namespace (a container) is not shown the host's process.
	[ -z "$(unshare --pid --fork cat /proc/driver/nvidia-sim/gpus/1/processes)" ] ||
		{ echo "another pid namespace sees: $(unshare --pid --fork cat /proc/driver/nvidia-sim/gpus/1/processes)" >&2; exit 1; }
	"$sim/nvidia-smi" | grep -Eq "^\|  +1 +N/A +N/A +$pid +C +N/A +166MiB \|$" || { "$sim/nvidia-smi" >&2; exit 1; }
	echo "cudaprobe $pid holds 102 MiB and its context 64 MiB in the driver, its process list, NVML and nvidia-smi say so; SIGKILL"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	: >"$out"
	all_free "after SIGKILL of cudaprobe"
	if [ "$ver" = 535.261.03 ]; then
		for g in memory pools vmm arrays timeline graphmem fork reap nvml; do
			CGPU_SIM_CTX_RESERVE_MIB=0 "$sim/sim-test" "$g"
			all_free "after sim-test $g"
		done
		# GPU 1's engine is the driver's page: a process in a pid namespace of its own
		# (as in another container), sharing no file with the first, queues behind the
		# first's 3 s of kernels, which it joined 0.3 s after its context was made.
		"$sim/cudaprobe" -d 1 launch 10 300000 >"$out" &
		pid=$!
		until grep -q "^$pid " /proc/driver/nvidia-sim/gpus/1/processes; do kill -0 "$pid"; sleep 0.05; done
		sleep 0.3
		wall=$(unshare --pid --fork "$sim/cudaprobe" -d 1 launch 1 10000 | sed -n 's/^wall_ms=\([0-9]*\).*/\1/p')
		[ "${wall:-0}" -ge 1000 ] || { echo "a 10 ms kernel beside 3 s of another process's took ${wall:-?} ms: the engine is not shared" >&2; exit 1; }
		# ... and GPU 0's engine is another one.
		wall0=$("$sim/cudaprobe" -d 0 launch 1 10000 | sed -n 's/^wall_ms=\([0-9]*\).*/\1/p')
		[ "${wall0:-9999}" -lt 1000 ] || { echo "a 10 ms kernel on GPU 0 took ${wall0:-?} ms beside GPU 1's work" >&2; exit 1; }
		wait "$pid"
		echo "GPU 1's engine, shared by two processes through the driver: a 10 ms kernel waited $wall ms; on GPU 0 it took $wall0 ms"
		# test/gpu/rmtrace.sh, made for a real GPU, here on the simulated libcuda: the
		# video memory it adds up from the RM calls it traced, frees and a context's
		# teardown included, is the process's figure and the GPU's at every step.
		rt=$(mktemp -d)
		OUT=$rt NVIDIA_SMI=$sim/nvidia-smi RMTRACE_STEPS="ctx alloc:$((100 * MiB + 1)) vmm:$((2 * MiB)) ctx2 drop2 alias:4" \
			bash ../test/gpu/rmtrace.sh >"$rt/log" 2>&1 || { cat "$rt/log" >&2; exit 1; }
		for want in "ctx mem40 64.0 MiB held; pages of those made: 2m:1" "alloc:$((100 * MiB + 1)) mem40 166.0 MiB held; pages of those made: 2m:1" \
			"vmm:$((2 * MiB)) mem40 168.0 MiB held; pages of those made: 2m:1" "ctx2 mem40 232.0 MiB held; pages of those made: 2m:1" \
			"drop2 mem40 168.0 MiB held; pages of those made: none" "drop2 made none, 1 freed" \
			"alias:4 mem40 170.0 MiB held; pages of those made: 2m:1" \
			"ctx live devices 1, subdevices 1, groups 0, channels 0, VA spaces 0" \
			"all early 0 objects made under a device before its first subdevice"; do
			awk '{ $1 = $1 } 1' "$rt/report" | grep -qxF "$want" || { echo "rmtrace: no line '$want' in:" >&2; cat "$rt/log" >&2; exit 1; }
		done
		for c in 0x41:1 0x80:1 0x2080:1 0x40:1; do
			grep -Eq "^ctx +made +(.* )?$c( |$)" "$rt/report" || { echo "rmtrace: ctx made no $c:" >&2; cat "$rt/log" >&2; exit 1; }
		done
		[ "$(grep -c ' smi .*(+0.0 against mem40), GPU +[0-9]* MiB (+0.0 against the process)$' "$rt/report")" = 6 ] ||
			{ echo "rmtrace: the traced memory is not the driver's figure:" >&2; cat "$rt/log" >&2; exit 1; }
		echo "rmtrace on the simulated libcuda: the 0x40 memory it traced is the driver's figure at each of 6 steps (64, 166, 168, 232, 168, 170 MiB)"
		# Its raw steps reach RM's ioctls on their own: a client, a device, its subdevice
		# and a VA space of RM's are made, and a LAZY range in it (pinning nothing); the
		# range's size as RM reports it is asked with a control the stand-in does not
		# serve to user space (on a GPU RM answers, and the figures say what it holds).
		got=$(echo | RMTRACE_OUT=$rt/raw LD_PRELOAD=$rt/librmtrace.so "$rt/rmprobe" rmlazy:$((1 * MiB))) ||
			{ echo "rmprobe rmlazy failed: $got" >&2; cat "$rt/raw" >&2; exit 1; }
		got=${got%%$'\n'*}
		[ "$got" = "range 0x2000: surface errno-22" ] &&
			[ "$(grep -Ec '^rm alloc form=nvos21 xfer=0 class=0x(41|80|2080|90f1) .* status=0x0' "$rt/raw")" = 4 ] &&
			grep -q '^rm alloc form=nvos21 xfer=0 class=0x90f1 .* status=0x0 vasflags=0x0 extowned=0$' "$rt/raw" &&
			grep -q '^rm alloc form=nvos21 xfer=0 class=0x50a0 .* status=0x0 flags=0x80400 lazy=1 ext=0 sparse=0 .* size=1048576$' "$rt/raw" ||
			{ echo "rmprobe's raw range: $got" >&2; cat "$rt/raw" >&2; exit 1; }
		echo "rmprobe's raw steps: client, device, subdevice, an RM VA space and a LAZY range in it made through RM's ioctls, the range's size asked of RM"
		# ... and it sees NVIDIA's own libcuda (Debian's 535, NVIDIA_REF from suite 57)
		# through the same preload: its client, made with NVOS21, then a control the
		# stand-in does not serve, so cuInit finds no device.
		got=$(echo | LD_LIBRARY_PATH=${NVIDIA_REF:?NVIDIA_REF: the folder of sim/fetch-nvidia-ref.sh} RMTRACE_OUT=$rt/real LD_PRELOAD=$rt/librmtrace.so "$rt/rmprobe" ctx) && exit 1
		[ "$got" = "error=CUDA_ERROR_NO_DEVICE call=cuInit step=ctx" ] &&
			grep -Eqx "rm alloc form=nvos21 xfer=0 class=0x41 root=0x0 parent=0x0 handle=0xc1d[0-9a-f]{5} status=0x0" "$rt/real" ||
			{ echo "rmtrace on NVIDIA's libcuda: $got" >&2; cat "$rt/real" >&2; exit 1; }
		echo "rmtrace on NVIDIA's libcuda 535: $(grep -c . "$rt/real") calls traced, its client made with NVOS21, then control $(sed -n 's/^rm control cmd=\(0x[0-9a-f]*\) rc=.*/\1/p' "$rt/real" | head -1) not served and $got"
		rm -rf "$rt"
		[ ! -e "$CGPU_SIM_STATE" ] || { echo "the simulated libraries made $CGPU_SIM_STATE with the driver loaded" >&2; exit 1; }
	fi
	simdrv_unload
done
rm -f "$CGPU_SIM_STATE" "$out"
unset LD_LIBRARY_PATH CGPU_SIM_STATE

# nvidia-uvm without nvidia: its symbols are missing, the kernel refuses it.
if insmod "$PWD/nvidia-uvm.ko" 2>/dev/null; then echo "nvidia-uvm loaded without nvidia" >&2; exit 1; fi
# Bad module parameters are refused.
for bad in "gpus=0" "gpus=17" "version=abc" "mem_mib=0"; do
	if insmod "$ko" $bad 2>/dev/null; then echo "loaded with $bad" >&2; exit 1; fi
done
echo "vm-guest: stand-in driver passed"
