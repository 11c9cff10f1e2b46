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
	eq "add 6 GiB" "$(add 0 $A memsize=$((6 * GIB)))" OK
	eq "add 8 GiB" "$(add 0 $B memsize=$((8 * GIB)))" OK
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

# layout BOUND-DIR [PROCESS-DIR]: c bound to a process in BOUND-DIR; a process in
# PROCESS-DIR (default BOUND-DIR) is found as container c.
layout() {
	local dir=$1 in=${2:-$1}
	mkdir -p "$dir" "$in"
	eq "bind c to ${dir#$CG}" "$(bind 0 "$C" "$dir")" OK
	start l -c "$in" open attach charge 0 1M
	has "found in ${in#$CG}" "$(out l)" "^attach OK id=$c ngpus=1"
	eq "charged in ${in#$CG}" "$(sed -n 2p $P/0/$c/meminfo)" "PID: $(pidof_w l) Mem: $((1 << 20))"
	stop l
}

layouts() {
	local C O o p
	C=$(cid layouts) c=$(short "$C")
	eq "add c" "$(wr $P/inst_ctl "add 0 $C memsize=$GIB")" OK
	start u -c "$(docker_cg "$C")" open attach =ENOENT
	stop u
	layout "$CG/system.slice/docker-$C.scope"
	layout "$CG/docker/$C"
	layout "$CG/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d.slice/cri-containerd-$C.scope"
	layout "$CG/machine.slice/libpod-$C.scope"
	# Names play no part: any cgroup the container's init is in.
	layout "$CG/plain/name"
	layout "$CG/plain/name" "$CG/plain/name/inner/deeper"
	# Docker in Docker: the innermost bound cgroup is the caller's container.
	O=$(cid outer) o=$(short "$O")
	eq "add outer" "$(add 0 "$O" memsize=$GIB)" OK
	layout "$(docker_cg "$O")/docker/$C"
	start out -c "$(docker_cg "$O")/docker" open attach
	has "outer's process outside the inner one" "$(out out)" "^attach OK id=$o ngpus=1"
	stop out
	eq "del outer" "$(wr $P/inst_ctl "del 0 $O")" OK
	# cgroup v1: a controller mounted on its own hierarchy, Docker's /docker/<id>.
	mkdir -p /tmp/v1
	if mount -t cgroup -o pids cgpu-v1 /tmp/v1; then
		ok
		mkdir -p /tmp/v1/docker/$C
		eq "bind c in cgroup v1" "$(bind 0 "$C" /tmp/v1/docker/$C)" OK
		start l1 -c /tmp/v1/docker/$C open attach
		has "found in cgroup v1 /docker/<id>" "$(out l1)" "^attach OK id=$c ngpus=1"
		stop l1
		p=$(cinit /tmp/v1/docker/$C)
		kill "$p"
		while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
		eq "del c (its v1 cgroup goes with it)" "$(wr $P/inst_ctl "del 0 $C")" OK
		rmdir /tmp/v1/docker/$C /tmp/v1/docker
		umount /tmp/v1
	else
		bad "cannot mount a cgroup v1 pids hierarchy"
		wr $P/inst_ctl "del 0 $C" >/dev/null
	fi
}

# A cgroup named like another container's is not that container: neither one made
# directly in the hierarchy (a host user's systemd-run --scope --unit=docker-<id>) nor
# one a container makes inside its own writable subtree.
forged_names() {
	local V X v x cgv cgx nocap=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin --)
	V=$(cid victim) X=$(cid attacker) v=$(short "$V") x=$(short "$X")
	cgv=$(docker_cg "$V") cgx=$(docker_cg "$X")
	eq "add victim" "$(add 0 "$V" memsize=$GIB)" OK
	eq "add attacker" "$(add 0 "$X" memsize=$((2 * GIB)))" OK
	for d in "$CG/docker-$V.scope" "$CG/user.slice/docker-$V.scope" "$CG/docker/$V"; do
		mkdir -p "$d"
		start f -c "$d" open attach =ENOENT charge 0 1 =ENOTCONN
		stop f
		eq "host-side ${d#$CG}: victim's meminfo refused" \
			"$(bash -c "echo 0 >$d/cgroup.procs; exec ${nocap[*]} cat $P/0/$v/meminfo" 2>&1 | grep -c 'Permission denied')" 1
	done
	mkdir -p "$cgx/docker-$V.scope" "$cgx/system.slice/docker-$V.scope"
	for d in "$cgx/docker-$V.scope" "$cgx/system.slice/docker-$V.scope"; do
		start f -c "$d" open attach charge 0 1G charge 0 1G charge 0 1 =ENOMEM
		has "in-container ${d#$cgx}: its own container" "$(out f)" "^attach OK id=$x ngpus=1"
		eq "the attacker's budget was charged" "$(sed -n 2p $P/0/$x/meminfo)" "PID: $(pidof_w f) Mem: $((2 * GIB))"
		eq "the victim untouched" "$(cat $P/0/$v/meminfo)" "Free: $GIB"
		stop f
		eq "victim's meminfo from ${d#$cgx}" "$(bash -c "echo 0 >$d/cgroup.procs; cat $P/0/$v/meminfo" 2>&1 | grep -c 'Permission denied')" 1
		eq "own meminfo from ${d#$cgx}" "$(bash -c "echo 0 >$d/cgroup.procs; exec ${nocap[*]} cat $P/0/$x/meminfo")" "Free: $((2 * GIB))"
	done
	# bind's own refusals, each changing nothing.
	eq "bind of an unknown id" "$(wr $P/inst_ctl "bind 0 $(cid nobody) $(cinit "$cgv")")" ENOENT
	eq "bind to no task" "$(wr $P/inst_ctl "bind 0 $V 4194304")" ESRCH
	eq "bind to the root cgroup (pid 1)" "$(wr $P/inst_ctl "bind 0 $V 1")" EINVAL
	eq "bind to another container's cgroup" "$(wr $P/inst_ctl "bind 0 $V $(cinit "$cgx")")" EEXIST
	eq "bind on no GPU" "$(wr $P/inst_ctl "bind 7 $V 1")" ENODEV
	start f -c "$cgv" open attach
	has "the victim still finds its own" "$(out f)" "^attach OK id=$v ngpus=1"
	stop f
	eq "del victim, attacker" "$(wr $P/inst_ctl "del 0 $V")$(wr $P/inst_ctl "del 0 $X")" OKOK
}

# A container may attach CGPU_INST_FILES_MAX (1024) files to an instance, not one more;
# meminfo with all of them is one quick read.
files_cap() {
	local F f t0
	F=$(cid capped) f=$(short "$F")
	eq "add capped" "$(add 0 "$F" memsize=$GIB)" OK
	start many -c "$(docker_cg "$F")" many 1025 =EMFILE
	has "1024 attached, the next EMFILE" "$(out many)" "^many EMFILE attached=1024$"
	start more -c "$(docker_cg "$F")" open attach =EMFILE
	stop more
	t0=$(date +%s%N)
	eq "meminfo at the cap" "$(cat $P/0/$f/meminfo)" "Free: $GIB"
	within "meminfo at the cap, ms" $(( ($(date +%s%N) - t0) / 1000000 )) 0 2000
	stop many
	start again -c "$(docker_cg "$F")" open attach charge 0 1M
	stop again
	eq "del capped" "$(wr $P/inst_ctl "del 0 $F")" OK
}

# A container on both GPUs: slots in GPU order, each GPU its own ledger.
two_gpus() {
	local D d
	D=$(cid two-gpus) d=$(short "$D")
	eq "add on GPU 1" "$(add 1 $D memsize=$((2 * GIB)) weight=2 highprio=1 uuid=GPU-c6a1d000-0000-4000-8000-000000000001)" OK
	eq "add on GPU 0" "$(add 0 $D memsize=$GIB)" OK
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
	eq "add e" "$(add 0 $E memsize=$GIB weight=5)" OK
	start old -c "$cge" open attach charge 0 512M
	old=$(pidof_w old)
	eq "del e while it holds 512 MiB" "$(wr $P/inst_ctl "del 0 $E")" OK
	eq "dir gone" "$(ls $P/0 | grep -c "$e")" 0
	eq "its weight is free again" "$(cat $P/0/free_weight)" 14
	eq "re-add e with 2 GiB" "$(add 0 $E memsize=$((2 * GIB)))" OK
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
	eq "add e again" "$(add 0 $E memsize=$GIB)" OK
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
forged_names
files_cap
two_gpus
delete_with_charges
eq "del a, b" "$(wr $P/inst_ctl "del 0 $A")$(wr $P/inst_ctl "del 0 $B")" OKOK
unload || bad "rmmod after the ledger tests"
finish
