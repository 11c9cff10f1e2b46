#!/usr/bin/env bash
# Loading and unloading: bad parameters, the self-test, unload refused while instances
# or open files exist, the upgrade switch that allows it, and repeated cycles.
source test/kmod/lib.sh
unload
G=$(cid unload) g=$(short "$G")
klog() { dmesg | grep 'cgpu_km' | tail -n "${1:-1}"; }

params() {
	load ngpus=0 2>/dev/null && bad "ngpus=0 loaded" || ok
	has "ngpus=0 logged" "$(klog)" 'ngpus=0 is outside 1\.\.16'
	load ngpus=17 2>/dev/null && bad "ngpus=17 loaded" || ok
	eq "nothing left behind" "$(ls -d $P /dev/cgpu /sys/class/cgpu 2>/dev/null)" ""
	load ngpus=16 selftest=1 || bad "ngpus=16 selftest=1"
	has "self-test at load" "$(klog 2)" 'self-test passed'
	eq "16 GPU dirs" "$(ls -d $P/[0-9]* | wc -l)" 16
	unload || bad "rmmod without instances"
	eq "tree and device gone" "$(ls -d $P /dev/cgpu /sys/class/cgpu 2>/dev/null)" ""
}

pinned() {
	load || bad "load"
	eq "add" "$(add 0 $G memsize=$GIB)" OK
	rmmod cgpu_km 2>/dev/null && bad "rmmod with an instance succeeded" || ok
	has "the refusal is logged" "$(dmesg | grep cgpu_km)" 'unload refused until they are deleted'
	eq "the instance survived" "$(cat $P/0/$g/memsize)" "$GIB"
	eq "upgrade 1" "$(wr $P/upgrade 1)" OK
	eq "upgrade 0 pins again" "$(wr $P/upgrade 0)" OK
	rmmod cgpu_km 2>/dev/null && bad "rmmod after upgrade 0 succeeded" || ok
	eq "upgrade 1" "$(wr $P/upgrade 1)" OK
	unload || bad "rmmod with upgrade 1"
	has "deleting instances at unload is logged" "$(klog 2)" 'deleted 1 instance\(s\)'
	eq "gone" "$(ls -d $P /dev/cgpu 2>/dev/null)" ""
}

open_files() {
	load || bad "load"
	eq "add" "$(add 0 $G memsize=$GIB)" OK
	eq "upgrade 1" "$(wr $P/upgrade 1)" OK
	start h -c "$(docker_cg "$G")" open attach charge 0 1G
	rmmod cgpu_km 2>/dev/null && bad "rmmod with /dev/cgpu open succeeded" || ok
	eq "charges intact" "$(head -1 $P/0/$g/meminfo)" "Free: 0"
	stop h
	unload || bad "rmmod once the file closed"
	# Not even attached: an open file alone holds the module.
	load || bad "load"
	exec 8</dev/cgpu
	rmmod cgpu_km 2>/dev/null && bad "rmmod with an unattached open file succeeded" || ok
	exec 8<&-
	unload || bad "rmmod after closing"
}

cycles() {
	local i
	for i in $(seq 1 10); do
		load ngpus=2 || { bad "load cycle $i"; return; }
		add 0 $G memsize=$GIB >/dev/null
		add 1 $G memsize=$GIB >/dev/null
		"$KT" ops -c "$(docker_cg "$G")" open attach charge 0 1M charge 1 2M >/dev/null ||
			bad "charges in cycle $i"
		wr $P/upgrade 1 >/dev/null
		unload || bad "unload cycle $i"
	done
	ok
}

# rmmod racing inst_ctl writers and /dev/cgpu openers: each round ends unloaded,
# whoever won, and the kernel log stays clean (the VM run fails on any oops or warning).
races() {
	local i j k ip pids
	ip=$(cinit "$(docker_cg "$G")")
	for i in $(seq 1 "${RACE_ROUNDS:-8}"); do
		load ngpus=2 || { bad "load race $i"; return; }
		wr $P/upgrade 1 >/dev/null
		pids=()
		for j in 0 1; do
			(for k in $(seq 1 30); do
				"$KT" write $P/inst_ctl "add $j $G memsize=$GIB"
				"$KT" write $P/inst_ctl "bind $j $G $ip"
				"$KT" write $P/upgrade 1
				"$KT" write $P/inst_ctl "del $j $G"
			done) >/dev/null 2>&1 &
			pids+=($!)
		done
		(for k in $(seq 1 30); do
			"$KT" ops -c "$(docker_cg "$G")" open attach charge 0 1M
		done) >/dev/null 2>&1 &
		pids+=($!)
		sleep "0.$((RANDOM % 8))"
		while [ -d /sys/module/cgpu_km ] && ! rmmod cgpu_km 2>/dev/null; do sleep 0.05; done
		wait "${pids[@]}"
		eq "race $i: unloaded, tree and device gone" "$(ls -d $P /dev/cgpu 2>/dev/null)" ""
	done
	eq "no leak reported" "$(dmesg | grep -c 'object(s) leaked')" 0
}

params
pinned
open_files
cycles
races
finish
