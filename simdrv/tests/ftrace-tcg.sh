#!/usr/bin/env bash
# A reproducer, not part of any suite: inside the test VM (test/vm/run.sh --timeout 240
# -- simdrv/tests/ftrace-tcg.sh [FUNCTION]), the kernel's own function tracer and a kprobe
# event are switched on and off on a function of the stand-in driver (default its ioctl
# entry) while three processes call it without pause. No cgpu_km is loaded. Under QEMU
# TCG on Debian's 6.1 the callers hang at nvidia_frontend_unlocked_ioctl+0x0 (soft
# lockup) within the first rounds (docs/kmod.md, "Patching a hot entry in the test VM").
set -u
FN=${1:-nvidia_frontend_unlocked_ioctl}
cd "$(dirname "$0")/.."
source tests/load.sh
simdrv_load gpus=1 mem_mib=1024 version=535.261.03
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
T=/sys/kernel/tracing
for i in 1 2 3; do build/rawalloc churn 96 >/dev/null & done
sleep 1
for r in 1 2 3 4 5 6 7 8; do
	echo "$FN" >$T/set_ftrace_filter
	echo function >$T/current_tracer; sleep 0.2; echo nop >$T/current_tracer
	echo "ftrace round $r ok"
done
for r in 1 2 3 4 5 6 7 8; do
	echo "p:kp nvidia:$FN" >$T/kprobe_events
	echo 1 >$T/events/kprobes/kp/enable; sleep 0.2; echo 0 >$T/events/kprobes/kp/enable
	echo >$T/kprobe_events
	echo "kprobe round $r ok"
done
kill -KILL $(jobs -p); wait
simdrv_unload
echo "ftrace-tcg: no hang on $FN"
