#!/usr/bin/env bash
# inst_ctl: the add/del protocol, every refusal (which must change nothing), and how
# weights, free_weight and max_inst hold together.
source test/kmod/lib.sh
unload
load ngpus=2 || { bad "insmod"; finish; exit 1; }
A=$(cid ic-a) B=$(cid ic-b) C=$(cid ic-c)
a=$(short "$A") b=$(short "$B") c=$(short "$C")

state() { echo "$(ls $P/0 $P/1 | tr '\n' ' ')| $(cat $P/0/free_weight) $(cat $P/1/free_weight)"; }

# refuse WANT CMD: the command fails with WANT and the tree is as before.
refuse() {
	local before
	before=$(state)
	eq "inst_ctl '$2'" "$(wr $P/inst_ctl "$2")" "$1"
	eq "nothing changed by '$2'" "$(state)" "$before"
}

adds() {
	eq "add by full id" "$(wr $P/inst_ctl "add 0 $A memsize=1000 weight=3 highprio=1 uuid=GPU-c6a1d000-0000-4000-8000-000000000000")" OK
	eq "named by 12 chars" "$(cat $P/0/$a/id)" "$a"
	eq "fields" "$(cat $P/0/$a/memsize $P/0/$a/weight $P/0/$a/highprio | tr '\n' ' ')" "1000 3 1 "
	eq "free_weight" "$(cat $P/0/free_weight)" 13
	eq "add by short id, trailing newline" "$(wr $P/inst_ctl "add 0 $b memsize=2000"$'\n')" OK
	eq "default weight and highprio" "$(cat $P/0/$b/weight $P/0/$b/highprio | tr '\n' ' ')" "1 0 "
	eq "same id on another GPU" "$(wr $P/inst_ctl "add 1 $A memsize=5")" OK
	eq "GPU 1's free_weight untouched by GPU 0" "$(cat $P/1/free_weight)" 15
}

refusals() {
	refuse EEXIST "add 0 $A memsize=1"
	refuse EEXIST "add 0 $a memsize=1"
	refuse ENODEV "add 2 $C memsize=1"
	refuse ENODEV "add 4294967296 $C memsize=1"
	refuse EINVAL "add 99999999999999999999 $C memsize=1"
	refuse ENOENT "del 0 $c"
	refuse ENOENT "del 1 $b"
	refuse ENODEV "del 2 $a"
	refuse EINVAL "add 0 $C"			# no memsize, default_memsize 0
	refuse EINVAL "add 0 $C memsize=0"
	refuse EINVAL "add 0 $C memsize=9223372036854775808"
	refuse EINVAL "add 0 $C memsize=1 weight=17"	# past max_inst
	refuse ENOSPC "add 0 $C memsize=1 weight=13"	# past free_weight (12)
	refuse EINVAL "add 0 $C memsize=1 highprio=2"
	refuse EINVAL "add 0 $C memsize=1 color=red"
	refuse EINVAL "add 0 $C memsize=1 memsize=2"
	refuse EINVAL "add 0 $C memsize=1 uuid=GPU-xyz"
	refuse EINVAL "add 0 ${C^^} memsize=1"
	refuse EINVAL "add 0 ${c:0:11} memsize=1"
	refuse EINVAL "add 0 ${C}0 memsize=1"
	refuse EINVAL "add 0 $c memsize=1 extra"
	refuse EINVAL "del 0 $a now"
	refuse EINVAL "remove 0 $a"
	refuse EINVAL ""
	refuse EINVAL "add 0 $c memsize=1"$'\n'"add 1 $c memsize=1"
	refuse EINVAL "$(printf 'add 0 %s memsize=1%300s' "$c" '')"
}

weights() {
	eq "weight to fill GPU 0" "$(wr $P/0/$b/weight 13)" OK
	eq "free_weight 0" "$(cat $P/0/free_weight)" 0
	refuse ENOSPC "add 0 $C memsize=1 weight=1"
	eq "no weight free: default weight 0" "$(wr $P/inst_ctl "add 0 $C memsize=1")" OK
	eq "weight of it" "$(cat $P/0/$c/weight)" 0
	eq "weight past free" "$(wr $P/0/$c/weight 1)" ENOSPC
	eq "max_inst below the weight in use" "$(wr $P/0/max_inst 15)" EBUSY
	eq "max_inst unchanged" "$(cat $P/0/max_inst)" 16
	eq "lower b's weight" "$(wr $P/0/$b/weight 1)" OK
	eq "free_weight back" "$(cat $P/0/free_weight)" 12
	eq "max_inst at the weight in use" "$(wr $P/0/max_inst 4)" OK
	eq "free_weight at max_inst 4" "$(cat $P/0/free_weight)" 0
	eq "max_inst below the instance count" "$(wr $P/0/max_inst 2)" EBUSY
	eq "b's weight past the new max_inst" "$(wr $P/0/$b/weight 5)" EINVAL
	eq "max_inst 3 with weight 4 in use" "$(wr $P/0/max_inst 3)" EBUSY
	eq "a's weight to 1" "$(wr $P/0/$a/weight 1)" OK
	eq "max_inst 3 now fits" "$(wr $P/0/max_inst 3)" OK
	refuse ENOSPC "add 0 $(cid ic-d) memsize=1 weight=0"	# 3 instances: max_inst reached
	eq "del frees count and weight" "$(wr $P/inst_ctl "del 0 $a")" OK
	eq "free_weight after del" "$(cat $P/0/free_weight)" 2
	eq "dir gone" "$(ls -d $P/0/$a 2>&1 | grep -c 'No such file')" 1
	eq "GPU 1's instance stays" "$(cat $P/1/$a/memsize)" 5
	eq "max_inst 16 again" "$(wr $P/0/max_inst 16)" OK
}

defaults() {
	eq "default_memsize" "$(wr $P/default_memsize 12345)" OK
	eq "add without memsize" "$(wr $P/inst_ctl "add 1 $B")" OK
	eq "it got default_memsize" "$(cat $P/1/$b/memsize)" 12345
	eq "re-add a deleted id" "$(wr $P/inst_ctl "del 1 $b")" OK
	eq "re-added" "$(wr $P/inst_ctl "add 1 $B memsize=7")" OK
	eq "the new one's memsize" "$(cat $P/1/$b/memsize)" 7
}

# Add and delete from several writers at once: the registry must stay consistent.
concurrent() {
	local i pids=()
	for i in $(seq 1 8); do
		( for j in $(seq 1 10); do
			id=$(cid "c$i-$j")
			wr $P/inst_ctl "add 1 $id memsize=1" >/dev/null
			read -r _ <$P/1/free_weight
			wr $P/inst_ctl "del 1 $id" >/dev/null
		done ) &
		pids+=($!)
	done
	wait "${pids[@]}"
	eq "after concurrent add/del" "$(ls $P/1 | sort | tr '\n' ' ')" \
		"$(printf '%s\n' "$a" "$b" free_weight major max_inst policy prio_ratio | sort | tr '\n' ' ')"
	eq "free_weight after concurrent add/del" "$(cat $P/1/free_weight)" 14
}

adds
refusals
weights
defaults
concurrent
for id in "0 $b" "0 $c" "1 $a" "1 $b"; do
	eq "del $id" "$(wr $P/inst_ctl "del $id")" OK
done
eq "empty tree" "$(ls $P/0 $P/1 | grep -c '^[0-9a-f]\{12\}$')" 0
unload || bad "rmmod after the inst_ctl tests"
finish
