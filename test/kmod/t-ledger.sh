#!/usr/bin/env bash
# The memory ledger through /dev/cgpu, with real processes in real cgroups: two
# containers of 6 and 8 GiB, per-process meminfo lines, isolation, the cgroup layouts
# a container can be found by, several GPUs, and deleting an instance that holds charges.
source test/kmod/lib.sh
unload
load ngpus=2 || { bad "insmod"; finish; exit 1; }
A=$(cid ledger-a) B=$(cid ledger-b)
a=$(short "$A") b=$(short "$B")
cga=$(docker_cg "$A") cgb=$(docker_cg "$B")

six_and_eight() {
	local a1 b1 b2
	eq "add 6 GiB" "$(wr $P/inst_ctl "add 0 $A memsize=$((6 * GIB))")" OK
	eq "add 8 GiB" "$(wr $P/inst_ctl "add 0 $B memsize=$((8 * GIB))")" OK
	start a1 -c "$cga" open attach fill 0 1G query 0 charge 0 1 =ENOMEM
	has "a1 fills its 6 GiB, then ENOMEM" "$(out a1)" "^fill OK charged=$((6 * GIB)) stop=ENOMEM"
	has "a1's query" "$(out a1)" "^query OK gpu=0 memsize=$((6 * GIB)) used=$((6 * GIB)) weight=1"
	start b1 -c "$cgb" open attach charge 0 3G
	start b2 -c "$cgb" open attach fill 0 1G
	has "b2 gets the rest of b's 8 GiB" "$(out b2)" "^fill OK charged=$((5 * GIB)) stop=ENOMEM"
	a1=$(pidof_w a1) b1=$(pidof_w b1) b2=$(pidof_w b2)
	eq "meminfo a" "$(cat $P/0/$a/meminfo)" "Free: 0
PID: $a1 Mem: $((6 * GIB))"
	eq "meminfo b" "$(cat $P/0/$b/meminfo)" "Free: 0
PID: $b1 Mem: $((3 * GIB))
PID: $b2 Mem: $((5 * GIB))"
	# An odd step: the budget is never passed by a single byte.
	stop b2
	start b3 -c "$cgb" open attach fill 0 1000000007
	has "odd step stops below the limit" "$(out b3)" \
		"^fill OK charged=$(( 5 * GIB / 1000000007 * 1000000007 )) stop=ENOMEM"
	stop b3
	eq "b after b2 and b3 closed" "$(cat $P/0/$b/meminfo)" "Free: $((5 * GIB))
PID: $b1 Mem: $((3 * GIB))"
	# memsize: not below what is held, any value at or above it.
	eq "memsize below used" "$(wr $P/0/$b/memsize $((3 * GIB - 1)))" EBUSY
	eq "memsize at used" "$(wr $P/0/$b/memsize $((3 * GIB)))" OK
	eq "meminfo at the new limit" "$(head -1 $P/0/$b/meminfo)" "Free: 0"
	eq "memsize back to 8 GiB" "$(wr $P/0/$b/memsize $((8 * GIB)))" OK
	stop a1
	stop b1
	eq "a released" "$(cat $P/0/$a/meminfo)" "Free: $((6 * GIB))"
	eq "b released" "$(cat $P/0/$b/meminfo)" "Free: $((8 * GIB))"
}

# One process with several files: one line, the sum; each file releases its own part.
one_pid_many_files() {
	local p
	start m -c "$cga" open attach charge 0 1G open attach charge 0 2G open attach charge 0 4096 \
		close
	p=$(pidof_w m)
	eq "merged line" "$(cat $P/0/$a/meminfo)" "Free: $((3 * GIB))
PID: $p Mem: $((3 * GIB))"
	stop m
	eq "all three released" "$(cat $P/0/$a/meminfo)" "Free: $((6 * GIB))"
}

# A process in a container reads only its own container's nodes.
isolation() {
	eq "own meminfo from inside a" "$("$KT" ops -c "$cga" >/dev/null; bash -c "echo 0 >$cga/cgroup.procs; cat $P/0/$a/meminfo")" "Free: $((6 * GIB))"
	eq "b's meminfo from inside a" "$(bash -c "echo 0 >$cga/cgroup.procs; cat $P/0/$b/meminfo" 2>&1 | grep -c 'Permission denied')" 1
	eq "b's memsize from inside a" "$(bash -c "echo 0 >$cga/cgroup.procs; cat $P/0/$b/memsize" 2>&1 | grep -c 'Permission denied')" 1
	eq "GPU nodes from inside a" "$(bash -c "echo 0 >$cga/cgroup.procs; cat $P/0/max_inst")" 16
	eq "the host reads b" "$(cat $P/0/$b/memsize)" $((8 * GIB))
	# Outside every instance: not limited, nothing to charge.
	start n open attach =ENOENT charge 0 1 =ENOTCONN query 0 =ENOTCONN
	stop n
	start n2 -c "$(docker_cg "$(cid nobody)")" open attach =ENOENT
	stop n2
}

# layout CGROUP-DIR: a process there is found as container c.
layout() {
	local dir=$1
	mkdir -p "$dir"
	start l -c "$dir" open attach charge 0 1M
	has "found under ${dir#$CG}" "$(out l)" "^attach OK id=$c ngpus=1"
	eq "charged under ${dir#$CG}" "$(sed -n 2p $P/0/$c/meminfo)" "PID: $(pidof_w l) Mem: $((1 << 20))"
	stop l
	rmdir "$dir"
}

layouts() {
	local C
	C=$(cid layouts) c=$(short "$C")
	eq "add c" "$(wr $P/inst_ctl "add 0 $C memsize=$GIB")" OK
	layout "$CG/system.slice/docker-$C.scope"
	layout "$CG/docker/$C"
	layout "$CG/system.slice/cri-containerd-$C.scope"
	layout "$CG/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d.slice/cri-containerd-$C.scope"
	layout "$CG/kubepods/besteffort/pod0a1b2c3d-0000-1111-2222-333344445555/$C"
	layout "$CG/machine.slice/crio-$C.scope"
	layout "$CG/machine.slice/libpod-$C.scope"
	mkdir -p "$CG/system.slice/docker-$C.scope"
	layout "$CG/system.slice/docker-$C.scope/inner/deeper"
	# Docker in Docker: the innermost container id counts.
	layout "$CG/system.slice/docker-$(cid outer).scope/docker/$C"
	# cgroup v1: a controller mounted on its own hierarchy, Docker's /docker/<id>.
	mkdir -p /tmp/v1
	if mount -t cgroup -o pids cgpu-v1 /tmp/v1; then
		ok
		mkdir -p /tmp/v1/docker/$C
		start l1 -c /tmp/v1/docker/$C open attach
		has "found in cgroup v1 /docker/<id>" "$(out l1)" "^attach OK id=$c ngpus=1"
		stop l1
		rmdir /tmp/v1/docker/$C /tmp/v1/docker
		umount /tmp/v1
	else
		bad "cannot mount a cgroup v1 pids hierarchy"
	fi
	eq "c empty" "$(cat $P/0/$c/meminfo)" "Free: $GIB"
	eq "del c" "$(wr $P/inst_ctl "del 0 $C")" OK
}

# A container on both GPUs: slots in GPU order, each GPU its own ledger.
two_gpus() {
	local D d
	D=$(cid two-gpus) d=$(short "$D")
	eq "add on GPU 1" "$(wr $P/inst_ctl "add 1 $D memsize=$((2 * GIB)) weight=2 highprio=1 uuid=GPU-c6a1d000-0000-4000-8000-000000000001")" OK
	eq "add on GPU 0" "$(wr $P/inst_ctl "add 0 $D memsize=$GIB")" OK
	start g -c "$(docker_cg "$D")" open attach query 0 query 1 query 2 =ERANGE charge 1 2G \
		charge 0 1G charge 1 1 =ENOMEM
	has "two GPUs" "$(out g)" "^attach OK id=$d ngpus=2"
	has "slot 0" "$(out g)" "^query OK gpu=0 memsize=$GIB used=0 weight=1 highprio=0 uuid=0{32}$"
	has "slot 1" "$(out g)" "^query OK gpu=1 memsize=$((2 * GIB)) used=0 weight=2 highprio=1 uuid=c6a1d000000040008000000000000001$"
	eq "GPU 1 ledger" "$(head -1 $P/1/$d/meminfo)" "Free: 0"
	eq "GPU 0 ledger" "$(head -1 $P/0/$d/meminfo)" "Free: 0"
	stop g
	eq "GPU 1 released" "$(cat $P/1/$d/meminfo)" "Free: $((2 * GIB))"
	eq "del" "$(wr $P/inst_ctl "del 1 $D")$(wr $P/inst_ctl "del 0 $D")" OKOK
}

# Deleting an instance whose processes hold memory: their charges stay valid until
# they close, and none of them leaks into a new instance of the same id.
delete_with_charges() {
	local E e cge old new
	E=$(cid deleted) e=$(short "$E") cge=$(docker_cg "$E")
	eq "add e" "$(wr $P/inst_ctl "add 0 $E memsize=$GIB weight=5")" OK
	start old -c "$cge" open attach charge 0 512M
	old=$(pidof_w old)
	eq "del e while it holds 512 MiB" "$(wr $P/inst_ctl "del 0 $E")" OK
	eq "dir gone" "$(ls $P/0 | grep -c "$e")" 0
	eq "its weight is free again" "$(cat $P/0/free_weight)" 14
	eq "re-add e with 2 GiB" "$(wr $P/inst_ctl "add 0 $E memsize=$((2 * GIB))")" OK
	eq "the new e starts empty" "$(cat $P/0/$e/meminfo)" "Free: $((2 * GIB))"
	start new -c "$cge" open attach fill 0 512M
	has "the new e's whole budget" "$(out new)" "^fill OK charged=$((2 * GIB)) stop=ENOMEM"
	new=$(pidof_w new)
	eq "only the new process in the new e" "$(cat $P/0/$e/meminfo)" "Free: 0
PID: $new Mem: $((2 * GIB))"
	stop old
	has "the old process's own ledger went on working" "$(out old)" "^charge OK used=$((512 << 20))"
	eq "the new e unchanged by the old closing" "$(head -1 $P/0/$e/meminfo)" "Free: 0"
	stop new
	eq "del e" "$(wr $P/inst_ctl "del 0 $E")" OK
	# A file still attached to a deleted instance keeps answering for it.
	eq "add e again" "$(wr $P/inst_ctl "add 0 $E memsize=$GIB")" OK
	start late -c "$cge" open attach charge 0 1G
	eq "del under it" "$(wr $P/inst_ctl "del 0 $E")" OK
	rm -f "$W/late.hold"
	wait "$(cat "$W/late.pid")"
	eq "late exited cleanly" "$?" 0
}

six_and_eight
one_pid_many_files
isolation
layouts
two_gpus
delete_with_charges
eq "del a, b" "$(wr $P/inst_ctl "del 0 $A")$(wr $P/inst_ctl "del 0 $B")" OKOK
unload || bad "rmmod after the ledger tests"
finish
