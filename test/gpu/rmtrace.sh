#!/usr/bin/env bash
# What libcuda asks of NVIDIA's driver, step by step, for a machine with an NVIDIA GPU, its
# driver, a C compiler and make (no kernel headers, no cgpu_km, no Docker): the questions
# docs/kmod.md leaves open because no machine here has a GPU. rmprobe (test/gpu/rmprobe.c)
# makes a context and then one kind of memory after another, all kept; librmtrace.so
# (test/gpu/rmtrace.c), preloaded, logs each RM and nvidia-uvm ioctl; after each step
# nvidia-smi gives the process's figure and the GPU's used memory. rmtrace.awk prints, for
# each step:
#   made        objects made in the step, class:count (0x40 video memory, 0x50a0 a VA
#               range, 0x80 device, 0x2080 subdevice, 0xa06c channel group, 0x..6f
#               channel, 0x90f1 VA space), and how many were freed
#   live        devices, subdevices, channel groups, channels and VA spaces held: what
#               max_channels must allow a process
#   mem40       bytes of 0x40 objects held, and the page sizes of those made in the step
#               (cgpu_km charges 4k pages at 64 KiB)
#   va          the flags of the VA ranges made in the step; the bytes held by those
#               whose page tables RM pins for the whole range at once (neither LAZY nor
#               EXTERNALLY_MANAGED; pt: their 4 KiB, 64 KiB and 2 MiB leaf levels at 8
#               bytes an entry, what a range of the default page size pins), and by the
#               SPARSE ones (sparsified when made, at the levels the range does not
#               cover whole); and the flags of the VA spaces made (0x8,
#               IS_EXTERNALLY_OWNED: nvidia-uvm's, where RM makes no ranges)
#   smi         nvidia-smi: the process's MiB, the GPU's used MiB above the start, and
#               each against the 0x40 bytes held (what cgpu_km charges); n/a where
#               nvidia-smi gave no figure
#   dma         RM's own GPU mappings (NV_ESC_RM_MAP_MEMORY_DMA, whose page tables RM
#               makes and cgpu_km does not follow): made in the step, their bytes and
#               the classes of the ranges they went into, unmapped, failed, and the
#               bytes held mapped
#   uvm         nvidia-uvm commands, by name where the stand-in serves them
#               (REGISTER_CHANNEL, REGISTER_GPU_VASPACE...), else by number, and MMAP,
#               mmaps of /dev/nvidia-uvm (managed ranges, which cgpu_km refuses to
#               containers: one in the ctx step would fail every container's CUDA);
#               then the bytes of the spans of sparse mappings, semaphore pools and
#               dynamic parallelism regions made, whose page tables cgpu_km charges
#               at their most (80 KiB for a pool of 4 KiB): what a context's cost
#   calls       the RM_ALLOC forms, controls, RM's older heap calls (vidheap, by
#               function), duplicates, refusals and other escapes
# and at the end the objects made under a device before its first subdevice (cgpu_km
# refuses them in a limited container: docs/kmod.md). Live counts follow frees of an
# object, its parents and its client, not a client the driver frees as its file closes,
# nor duplicates. A measurement, not a pass/fail: it prints the report whatever happens
# after the context, and exits 1 when a step failed (its error is printed above the
# report, and the steps after it still ran) or no RM allocation was seen (the
# interposition did not work). The GPU's figures are every GPU's used memory, summed,
# so the machine must be otherwise idle, with MIG off (the raw steps' client subscribes
# to no partition); the steps that free come last, since Hopper scrubs freed memory
# after the free returns. About a minute. Run from anywhere: bash
# test/gpu/rmtrace.sh. NVIDIA_SMI, RMTRACE_STEPS and OUT override the tool, the steps
# (rmprobe's) and the output folder.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$(mktemp -d)}
SMI=${NVIDIA_SMI:-nvidia-smi}
read -r -a STEPS <<<"${RMTRACE_STEPS:-ctx alloc:1073741824 reserve:17179869184 vmm:67108864 pool:67108864 managed:67108864 host:67108864 alias:2048 rmsetup rmlazy:68719476736 rmrange:68719476736 rmsparse:68719476736 ctx2 drop2}"
T=$OUT/trace

make -s -C "$ROOT/test/gpu" B="$OUT" || exit 1

# CUDA's device 0 is the first GPU in nvidia-smi's order only under PCI bus order.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
# A probe that died between "at STEP" and reading its line must not kill the script
# with the report unwritten.
trap '' PIPE
num() { [[ $1 =~ ^[0-9]+$ ]] && echo "$1" || echo n/a; }
smi() { timeout -k 5 30 "$SMI" "$@"; }
# Every GPU's, summed: which one the raw steps' device instance 0 is needs no guess.
gpu_used() { num "$(smi --query-gpu=memory.used --format=csv,noheader,nounits | awk '{ if ($1 !~ /^[0-9]+$/) bad = 1; s += $1 } END { if (NR && !bad) print s }')"; }
# The process's MiB on every GPU; n/a when nvidia-smi does not list it or gives no number.
proc_used() {
	num "$(smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits |
		awk -F', *' -v p="$1" '$1 == p { if ($2 !~ /^[0-9]+$/) bad = 1; s += $2; seen = 1 }
			END { if (seen && !bad) print s }')"
}

smi -L | head -1 | sed 's/^/gpu: /'
base=$(gpu_used)
: >"$T"
: >"$OUT/figures"
# bash drops PROBE and PROBE_PID once the probe exits, so the probe starts only once
# they are kept; it has 200 seconds for all its steps.
coproc PROBE {
	read -r _ || exit 1
	exec timeout -k 5 200 env RMTRACE_OUT="$T" LD_PRELOAD="$OUT/librmtrace.so" "$OUT/rmprobe" "${STEPS[@]}" 2>"$OUT/probe.err"
}
probe_pid=$PROBE_PID
exec {from}<&"${PROBE[0]}" {to}>&"${PROBE[1]}"
echo go >&"$to"
while IFS= read -r line <&"$from"; do
	case $line in
	"at "*)
		read -r _ step pid <<<"$line"
		g=$(gpu_used)
		[ "$g" = n/a ] || [ "$base" = n/a ] || g=$((g - base))
		echo "$step $(proc_used "${pid#pid=}") $g" >>"$OUT/figures"
		echo >&"$to"
		;;
	*) echo "$line" | tee -a "$OUT/probe.out" ;;
	esac
done
exec {from}<&- {to}>&-
wait "$probe_pid"
rc=$?

awk -f "$ROOT/test/gpu/rmtrace.awk" "$OUT/figures" "$T" >"$OUT/report" || { echo "the report's awk failed" >&2; exit 1; }
cat "$OUT/report"
grep -q '^rm alloc' "$T" || { echo "no RM allocation in the trace ($T): the interposition did not work" >&2; exit 1; }
[ "$rc" = 0 ] || { echo "rmprobe: a step failed (exit $rc): $(cat "$OUT/probe.out" "$OUT/probe.err" 2>/dev/null | tail -3)" >&2; exit 1; }
echo "trace: $T, report: $OUT/report"
