#!/usr/bin/env bash
# 25 containers x 4 processes charging and uncharging random sizes for STORM_SECONDS
# (default 30) while processes are SIGKILLed at random (kt_storm.c); afterwards every
# ledger is back to Free = memsize with no PID line. Five containers span both GPUs.
source test/kmod/lib.sh
unload
load ngpus=2 || { bad "insmod"; finish; exit 1; }
eq "max_inst 25" "$(wr $P/0/max_inst 25)" OK
args=() ids=()
for i in $(seq 1 25); do
	id=$(cid "storm-$i")
	ids+=("$id")
	eq "add storm-$i" "$(add 0 $id memsize=$(( (i % 8 + 1) * GIB )) weight=1)" OK
	[ "$i" -gt 5 ] || eq "add storm-$i on GPU 1" "$(add 1 $id memsize=$((i << 20)))" OK
	args+=("$(docker_cg "$id"):$(short "$id")")
done
eq "free_weight with 25 instances" "$(cat $P/0/free_weight)" 0
res=$("$KT" storm "${STORM_SECONDS:-30}" 4 "${args[@]}" 2>&1)
echo "$res"
has "storm ran clean" "$res" ', 0 worker errors, 0 failures$'
for id in "${ids[@]}"; do
	s=$(short "$id")
	for g in 0 1; do
		[ -d $P/$g/$s ] || continue
		eq "ledger $g/$s after the storm" "$(cat $P/$g/$s/meminfo)" "Free: $(cat $P/$g/$s/memsize)"
		eq "del $g/$s" "$(wr $P/inst_ctl "del $g $s")" OK
	done
done
unload || bad "rmmod after the storm"
finish
