#!/usr/bin/env bash
# CGPU_IOC_INST_STAT: the host's view of any instance's scheduler figures. Root reads
# them on an unattached file and they agree with SCHED_STAT from inside the container;
# busy instances (kt sched clients, weights 1:2 on policy 2) show the last complete
# second's use; policy 5 reports none; no CAP_SYS_ADMIN, no GPU, no instance and a
# malformed id are refused.
source test/kmod/lib.sh
A=$(cid inst-a) B=$(cid inst-b)
a=$(short "$A") b=$(short "$B")
cgA=$(docker_cg "$A") cgB=$(docker_cg "$B")
ist() { "$KT" ops open inststat "$@"; }	# ist GPU ID [=ERRNO]: prints the answer line
res() { sed -n '/^inststat /{s/^inststat \([A-Z0-9]*\).*/\1/p;q}' <<<"$1"; }

unload
# grace 2 s as in t-sched: TCG can stall the guest past the default 100 ms.
load ngpus=2 grace_ms=2000 || { bad "insmod"; finish; exit 1; }
eq "add A weight 1" "$(add 0 $A memsize=$GIB weight=1)" OK
eq "add B weight 2" "$(add 0 $B memsize=$GIB weight=2)" OK
eq "policy 2" "$(wr $P/0/policy 2)" OK

echo "--- an idle instance, from an unattached file"
r=$(ist 0 "$a")
echo "$r"
eq "root reads A" "$(res "$r")" OK
eq "A: gpu" "$(kv gpu "$r")" 0
eq "A: weight" "$(kv weight "$r")" 1
eq "A: policy" "$(kv policy "$r")" 2
eq "A: nothing used yet" "$(kv used_ns "$r")" 0
eq "A: no last second" "$(kv last_second_used_ns "$r")" 0
age1=$(kv age_ns "$r")
sleep 0.2
age2=$(kv age_ns "$(ist 0 "$a")")
within "age moves on (ms)" "$(( (age2 - age1) / 1000000 ))" 150 5000

echo "--- policy 2, weights 1:2, both busy for 5 s"
"$KT" sched -c "$cgA" slice 0 5 500 >"$W/a" 2>&1 &
"$KT" sched -c "$cgB" slice 0 5 500 >"$W/b" 2>&1 &
sleep 3
ra=$(ist 0 "$a") rb=$(ist 0 "$b")
wait
la=$(kv last_second_used_ns "$ra") lb=$(kv last_second_used_ns "$rb")
echo "last second: A $la ns, B $lb ns"
within "A's last second (ns)" "$la" 1 1000000000
within "B's last second (ns)" "$lb" 1 1000000000
within "B/A in the last second" "$(awk -v x="$lb" -v y="$la" 'BEGIN { print x / y }')" 1.3 3.0
within "A + B in the last second (ns)" "$((la + lb))" 500000000 1010000000

echo "--- INST_STAT agrees with SCHED_STAT from inside the container"
for n in A B; do
	if [ $n = A ]; then id=$a cg=$cgA; else id=$b cg=$cgB; fi
	s=$("$KT" sched -c "$cg" stat) r=$(ist 0 "$id")
	for k in sched_id policy weight quantum_ns charged_ns used_ns prio_ns grants takebacks; do
		eq "$n: $k" "$(kv $k "$r")" "$(kv $k "$s")"
	done
	has "$n: used some GPU time" "$(kv used_ns "$r")" '^[1-9]'
done
# Attached to another container makes no difference to the host's view.
r=$("$KT" ops -c "$cgA" open attach inststat 0 "$b")
eq "from a file attached to A, B's figures" "$(kv used_ns "$r")" "$(kv used_ns "$(ist 0 "$b")")"
sleep 2.1
eq "idle for a whole second: 0" "$(kv last_second_used_ns "$(ist 0 "$a")")" 0

echo "--- policy 5 reports no use"
eq "policy 5" "$(wr $P/0/policy 5)" OK
"$KT" sched -c "$cgA" slice 0 3 0 >"$W/a" 2>&1 &
sleep 2.2
r=$(ist 0 "$a")
wait
eq "policy 5: last second" "$(kv last_second_used_ns "$r")" 0
eq "policy 5: policy" "$(kv policy "$r")" 5

echo "--- refusals"
r=$(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$KT" ops open inststat 0 "$a" =EPERM)
eq "without CAP_SYS_ADMIN: EPERM" "$(res "$r")" EPERM
r=$(unshare -U "$KT" ops open inststat 0 "$a" =EPERM)
eq "in a user namespace: EPERM" "$(res "$r")" EPERM
eq "no such instance: ENOENT" "$(res "$(ist 0 000000000000 =ENOENT)")" ENOENT
eq "A is not on GPU 1: ENOENT" "$(res "$(ist 1 "$a" =ENOENT)")" ENOENT
eq "GPU 2 of 2: ENODEV" "$(res "$(ist 2 "$a" =ENODEV)")" ENODEV
eq "GPU 2^32-1: ENODEV" "$(res "$(ist 4294967295 "$a" =ENODEV)")" ENODEV
eq "upper-case id: EINVAL" "$(res "$(ist 0 "${a^^}" =EINVAL)")" EINVAL
eq "11 digits: EINVAL" "$(res "$(ist 0 "${a:0:11}" =EINVAL)")" EINVAL
eq "13 digits: EINVAL" "$(res "$(ist 0 "${A:0:13}" =EINVAL)")" EINVAL
eq "16 digits, no NUL: EINVAL" "$(res "$(ist 0 "${A:0:16}" =EINVAL)")" EINVAL
eq "empty id: EINVAL" "$(res "$(ist 0 "" =EINVAL)")" EINVAL

eq "del A" "$(wr $P/inst_ctl "del 0 $A")" OK
eq "deleted: ENOENT" "$(res "$(ist 0 "$a" =ENOENT)")" ENOENT
eq "del B" "$(wr $P/inst_ctl "del 0 $B")" OK
unload || bad "rmmod"
finish
