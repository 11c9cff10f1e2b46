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
	eq "add" "$(wr $P/inst_ctl "add 0 $G memsize=$GIB")" OK
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
	eq "add" "$(wr $P/inst_ctl "add 0 $G memsize=$GIB")" OK
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
		wr $P/inst_ctl "add 0 $G memsize=$GIB" >/dev/null
		wr $P/inst_ctl "add 1 $G memsize=$GIB" >/dev/null
		"$KT" ops -c "$(docker_cg "$G")" open attach charge 0 1M charge 1 2M >/dev/null ||
			bad "charges in cycle $i"
		wr $P/upgrade 1 >/dev/null
		unload || bad "unload cycle $i"
	done
	ok
}

params
pinned
open_files
cycles
finish
