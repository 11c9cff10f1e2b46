#!/usr/bin/env bash
# Compute slices in real time, inside the test VM (test/suites/65-vm-sched.sh starts it
# through test/vm/run.sh), as root from the repo root: cgpu_km's scheduler, libcgpu's
# gate and the simulated GPU, with two containers (cgroups named as Docker's systemd
# driver names them) running GPU work (libcgpu/tests/sched-load.c). The GPU work each
# container gets is measured on the simulated device, not read from the scheduler.
set -uo pipefail
source libcgpu/tests/vm-lib.sh
KT=$PWD/test/kmod/build/kt
LOAD=$HOOK/sched-load
within() {
	if awk -v v="$2" -v l="$3" -v h="$4" 'BEGIN { exit !(v >= l && v <= h) }'; then ok
	else bad "$1: $2 not in [$3, $4]"; fi
}
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.3f", y ? x / y : 0 }'; }
kv() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$2" | tail -1; }

A=$(printf sched-a | sha256sum | cut -c1-64)
B=$(printf sched-b | sha256sum | cut -c1-64)
cgA=$CG/system.slice/docker-$A.scope cgB=$CG/system.slice/docker-$B.scope
mkdir -p "$cgA" "$cgB"
stat_of() { "$KT" sched -c "$1" stat; }
# up [PARAM=VALUE...]: the module with both containers, A at weight 1, B at weight 2.
up() {
	insmod kmod/cgpu_km.ko ngpus=1 "$@" || { bad "insmod $*"; return 1; }
	echo "add 0 $A memsize=$((1 << 30)) weight=1" >$P/inst_ctl || bad "add A"
	echo "add 0 $B memsize=$((1 << 30)) weight=2" >$P/inst_ctl || bad "add B"
	bind_ctr 0 "$A" || bad "bind A"
	bind_ctr 0 "$B" || bad "bind B"
}
down() {
	echo "del 0 $A" >$P/inst_ctl || bad "del A"
	echo "del 0 $B" >$P/inst_ctl || bad "del B"
	rmmod cgpu_km || bad "rmmod"
}
# work_between FILE T1 T2: the share of the GPU the run in FILE had between two times
# (from its progress lines "p T_NS WORK_US").
work_between() {
	awk -v a="$2" -v b="$3" '$1 == "p" && $2 >= a && !t1 { t1 = $2; w1 = $3 }
		$1 == "p" && $2 <= b { t2 = $2; w2 = $3 }
		END { printf "%.3f", (t2 > t1) ? (w2 - w1) * 1000 / (t2 - t1) : 0 }' "$1"
}
# Batches of 8 kernels of 1 ms with a sync after each: a training step's shape.
RUN="run 10 1000 8"

echo "--- every gated entry point waits while another container holds the GPU"
# A never ends its slice; it is killed after 0.5 s, well inside the grace period.
up grace_ms=2000
echo 1 >$P/0/policy
in_ctr "$cgB" "$LOAD" calls "$W" >"$W/calls" 2>&1 &
calls=$!
"$LOAD" list >"$W/list"
while read -r name; do
	"$KT" sched -c "$cgA" hold 0 >"$W/hold" 2>&1 &
	holder=$!
	for i in $(seq 1 500); do grep -q holding "$W/hold" && break; sleep 0.02; done
	for i in $(seq 1 500); do grep -qx "ready $name" "$W/calls" && break; sleep 0.02; done
	touch "$W/go-$name"
	sleep 0.5
	{ kill -9 $holder; wait $holder; } 2>/dev/null
	for i in $(seq 1 500); do grep -q "^$name r=" "$W/calls" && break; sleep 0.02; done
	line=$(grep "^$name r=" "$W/calls")
	eq "$name succeeded" "$(kv r "$line")" 0
	ms=$(kv ms "$line")
	if [ "$name" = cuMemcpyHtoD_v2 ]; then
		within "$name (not gated) returned at once (ms)" "$ms" 0 300
	else
		within "$name waited for the slice (ms)" "$ms" 400 5000
	fi
	printf '%-32s %5s ms\n' "$name" "$ms"
done <"$W/list"
wait $calls || bad "sched-load calls: $(tail -3 "$W/calls")"
down

# ratio_run: policy 2, weights 1:2, both busy for 10 s; prints the GPU work each got
# and the kernel's charges; sets RW (work ratio) and RC (charged ratio).
ratio_run() {
	echo 2 >$P/0/policy
	in_ctr "$cgA" "$LOAD" $RUN >"$W/a" 2>&1 &
	in_ctr "$cgB" "$LOAD" $RUN >"$W/b" 2>&1 &
	wait
	local wa wb ca cb sa sb
	wa=$(kv work_us "$(tail -1 "$W/a")") wb=$(kv work_us "$(tail -1 "$W/b")")
	sa=$(stat_of "$cgA") sb=$(stat_of "$cgB")
	ca=$(kv charged_ns "$sa") cb=$(kv charged_ns "$sb")
	RW=$(ratio "$wb" "$wa") RC=$(ratio "$cb" "$ca")
	echo "quantum $(($(kv quantum_ns "$sa") / 1000000)) ms: GPU work A $((wa / 1000)) ms," \
		"B $((wb / 1000)) ms: ratio $RW; charged ratio $RC; GPU busy $(ratio $((wa + wb)) 10000000);" \
		"slices A $(kv grants "$sa"), B $(kv grants "$sb")"
	echo "  A: $(tail -1 "$W/a")"
	echo "  B: $(tail -1 "$W/b")"
}
echo "--- policy 2, weights 1:2, both busy: the default 4 ms quantum"
# Under TCG a switch costs milliseconds of emulated wakeups (the holder's drain ending,
# the next holder's wait returning) instead of tens of us on hardware, a large part of a
# 4 ms slice: the kernel's shares hold exactly, the work ratio shows that cost.
up
ratio_run
within "charged B/A at 1:2 (4 ms)" "$RC" 1.8 2.2
within "work B/A at 1:2 (4 ms; TCG's switch cost included)" "$RW" 1.6 2.6
down

echo "--- policy 2, weights 1:2, both busy: 50 ms slices, the switch cost back to its hardware share"
up quantum_us=50000
ratio_run
within "work B/A at 1:2" "$RW" 1.8 2.2
within "charged B/A at 1:2" "$RC" 1.8 2.2

echo "--- policy 1: a lone busy container gets the GPU"
echo 1 >$P/0/policy
# Kernels of 2 ms, 8 to a batch: a busy container's queue, as the sim runs it under TCG.
"$LOAD" run 5 2000 8 mix >"$W/free"
in_ctr "$cgA" "$LOAD" run 5 2000 8 mix >"$W/lone"
alone=$(ratio "$(kv work_us "$(tail -1 "$W/free")")" "$(kv wall_us "$(tail -1 "$W/free")")")
lone=$(ratio "$(kv work_us "$(tail -1 "$W/lone")")" "$(kv wall_us "$(tail -1 "$W/lone")")")
echo "GPU busy: $lone through the gate (launch, Ex, cooperative, graph), $alone with no cgpu"
within "lone container's share of the GPU" "$lone" 0.9 1.0

echo "--- policy 2 -> 5 at run time: slicing stops"
echo 2 >$P/0/policy
in_ctr "$cgA" "$LOAD" run 15 1000 8 >"$W/a" 2>&1 &
in_ctr "$cgB" "$LOAD" run 15 1000 8 >"$W/b" 2>&1 &
sleep 1
t0=$("$LOAD" now)
sleep 6
t1=$("$LOAD" now)
echo 5 >$P/0/policy
ga=$(kv grants "$(stat_of "$cgA")") gb=$(kv grants "$(stat_of "$cgB")")
sleep 5
t2=$("$LOAD" now)
wait
r2=$(ratio "$(work_between "$W/b" "$t0" "$t1")" "$(work_between "$W/a" "$t0" "$t1")")
r5=$(ratio "$(work_between "$W/b" $((t1 + 500000000)) "$t2")" "$(work_between "$W/a" $((t1 + 500000000)) "$t2")")
echo "B/A under policy 2: $r2, after the switch to 5: $r5"
within "B/A under policy 2" "$r2" 1.8 2.2
within "B/A under policy 5 (the device's own FIFO)" "$r5" 0.8 1.25
eq "no slice granted to A under policy 5" "$(kv grants "$(stat_of "$cgA")")" "$ga"
eq "no slice granted to B under policy 5" "$(kv grants "$(stat_of "$cgB")")" "$gb"

echo "--- a container stopped while it holds the GPU does not stall the other"
echo 1 >$P/0/policy
# Long runs, ended by the script: finding A holding takes a kt start per try.
in_ctr "$cgA" "$LOAD" run 60 1000 8 >"$W/a" 2>&1 &
in_ctr "$cgB" "$LOAD" run 60 1000 8 >"$W/b" 2>&1 &
sleep 2
pa=$(cat "$cgA/cgroup.procs")	# sched-load alone (sh and env exec it)
pb=$(cat "$cgB/cgroup.procs")
tb=$(kv takebacks "$(stat_of "$cgA")")
held=0
for i in $(seq 1 100); do
	kill -STOP $pa
	# Holding: A's process took part in the slice A holds (not merely granted).
	if [ "$(kv holding "$(stat_of "$cgA")")" = 1 ]; then held=1; break; fi
	kill -CONT $pa
	sleep 0.0$((RANDOM % 9 + 1))
done
eq "A stopped while holding the GPU" "$held" 1
t0=$("$LOAD" now)
sleep 3
t1=$("$LOAD" now)
kill -CONT $pa
sleep 3
t2=$("$LOAD" now)
kill $pa $pb
wait
share=$(work_between "$W/b" $((t0 + 300000000)) "$t1")
after=$(work_between "$W/a" $((t1 + 500000000)) "$t2")
echo "B's share while A was stopped: $share; A's share after SIGCONT: $after"
within "B's share of the GPU while A was stopped" "$share" 0.8 1.0
# Once for the stop that found it holding; a try before it (A stopped a few 100 ms
# while kt starts) may have cost it another.
within "A's slices taken back" $(($(kv takebacks "$(stat_of "$cgA")") - tb)) 1 5
within "A ran on after SIGCONT (its share)" "$after" 0.2 1.0

echo "--- benchmark: a launch through libcgpu with the slice held, against the simulated driver directly"
# Not preloaded: the benchmark loads libcgpu beside the driver itself.
sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cgA" "$HOOK/bench" "$HOOK/libcgpu.so" 500 |
	grep -E '^(launch|pass-through)'
down
echo "vm-sched: $checks checks, $fails failed"
[ "$fails" = 0 ]
