#!/usr/bin/env bash
# The hot update's kernel half (docs/upgrade.md): the upgrade node's status and commands,
# a freeze that stops every change, processes handing their charges over and taking them
# back (on the old module after a thaw, on a new one after the state was moved across),
# reservations of processes that never come back released after reclaim_s, and every
# refused write changing nothing.
source test/kmod/lib.sh
unload
load ngpus=2 reclaim_s=3 || { bad "insmod"; finish; exit 1; }
A=$(cid upgrade-a) a=$(short "$A")
B=$(cid upgrade-b) b=$(short "$B")
UUID=GPU-c6a1d000-0000-4000-8000-000000000001
MIB=$((1 << 20))
field() { sed -n "s/^$1: //p" $P/upgrade; }
dump() { sed -n '/^format /,$p' $P/upgrade; }
# The whole observable state: settings, instances, ledgers.
tree() { (cd $P && grep -r . default_memsize [0-9]*/max_inst [0-9]*/policy [0-9]*/prio_ratio \
	[0-9]*/free_weight [0-9]*/*/memsize [0-9]*/*/weight [0-9]*/*/highprio [0-9]*/*/meminfo); }
# wait_field KEY VALUE: up to 10 s for the upgrade node's KEY to read VALUE.
wait_field() {
	local i
	for i in $(seq 1 200); do
		[ "$(field "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	return 1
}
# handing NAME CGROUP OPS...: a process that runs OPS (holding memory) and, once the
# module is frozen, is refused a charge and an uncharge, hands over and closes each file
# it opened; then waits for $W/NAME.back to be removed and attaches again.
handing() {
	local name=$1 cg=$2 o after=()
	shift 2
	for o in "$@"; do
		[ "$o" != open ] || after+=(handover close)
	done
	touch "$W/$name.back"
	start "$name" -c "$cg" open attach "$@" ready pollpri 600000 charge 0 1M =EAGAIN \
		uncharge 0 1M =EAGAIN handover close "${after[@]}" hold "$W/$name.back" \
		open attach query 0
}
# wait_out NAME PATTERN: up to 10 s for the process's output to match.
wait_out() {
	local i
	for i in $(seq 1 200); do
		grep -Eq -- "$2" "$W/$1.out" && return 0
		sleep 0.05
	done
	return 1
}

setup() {
	eq "add A" "$(add 0 $A memsize=$((6 << 30)) weight=2 highprio=1 uuid=$UUID)" OK
	eq "add B on 0" "$(add 0 $B memsize=$GIB)" OK
	eq "add B on 1" "$(add 1 $B memsize=$GIB)" OK
	eq "policy 2" "$(wr $P/0/policy 2)" OK
	eq "max_inst 8" "$(wr $P/0/max_inst 8)" OK
	eq "prio_ratio 40" "$(wr $P/0/prio_ratio 40)" OK
	eq "default_memsize" "$(wr $P/default_memsize $GIB)" OK
}

status() {
	local s
	s=$(cat $P/upgrade)
	eq "status lines" "$(cut -d: -f1 <<<"$s" | tr '\n' ' ')" \
		"state version update last_update state_format reads_formats abi abi_in_use files_open files_attached reservations reserved_bytes reserved_channels reclaim_s major unload_deletes "
	eq "running" "$(field state)" running
	eq "version" "$(field version)" "$(cat $P/version)"
	eq "no update" "$(field update) $(field last_update)" "none none"
	eq "formats" "$(field state_format) $(field reads_formats) $(field abi)" "5 2-5 1-1"
	eq "modinfo says the same" "$(modinfo -F cgpu_state_format "$KO") $(modinfo -F cgpu_state_reads "$KO") $(modinfo -F cgpu_abi "$KO")" "5 2-5 1-1"
	eq "no file, no ABI in use" "$(field files_open) $(field abi_in_use)" "0 none"
	eq "reclaim_s as loaded" "$(field reclaim_s)" 3
	eq "major" "$(field major)" "$(cat $P/0/major)"
	eq "no dump while running" "$(dump)" ""
}

# Commands for another state, and garbage: refused, nothing changes.
refusals() {
	local before v
	before=$(cat $P/upgrade; tree)
	for v in thaw commit "format 2" "default_memsize 5" "gpu 0 max_inst=2 policy=0 prio_ratio=20" \
		"add 1 $A memsize=1" "charge 0 $a 1 1" "from 0.1.0"; do
		eq "running: '$v'" "$(wr $P/upgrade "$v")" EBUSY
	done
	for v in "" freez "freeze now" "freeze"$'\n'"thaw" "format 0" "charge 0 $a 0 1" "charge 0 $a 1 0" \
		"gpu 0 max_inst=8 policy=2" "add 0 $a memsize=0" "del 0 $a" 3 "freeze to=" \
		"freeze to=1/2" "freeze to=1 now" "from" "from 1 2"; do
		eq "garbage '$v'" "$(wr $P/upgrade "$v")" EINVAL
	done
	eq "nothing changed by them" "$(cat $P/upgrade; tree)" "$before"
}

frozen_checks() {
	local before v
	before=$(tree)
	eq "freeze again" "$(wr $P/upgrade freeze)" EBUSY
	eq "commit while frozen" "$(wr $P/upgrade commit)" EBUSY
	eq "import while frozen" "$(wr $P/upgrade "format 2")" EBUSY
	for v in "$P/0/policy 3" "$P/0/max_inst 9" "$P/0/prio_ratio 50" "$P/default_memsize 1" \
		"$P/0/$a/weight 1" "$P/0/$a/memsize $((7 << 30))" "$P/0/$a/highprio 0" \
		"$P/inst_ctl del 0 $b" "$P/inst_ctl add 1 $A memsize=1"; do
		eq "frozen: ${v#$P/}" "$(wr "${v%% *}" "${v#* }")" EBUSY
	done
	eq "the tree did not change" "$(tree)" "$before"
	eq "open refused" "$("$KT" ops -c "$(docker_cg "$A")" open =EAGAIN | head -1)" "open EAGAIN"
	eq "state" "$(field state)" frozen
}

# The old module goes on after a thaw: what was handed over is taken back.
thaw_path() {
	local pid freeA
	handing h1 "$(docker_cg "$A")" charge 0 1G open attach charge 0 512M || return
	start stubborn -c "$(docker_cg "$B")" open attach charge 0 100M charge 1 200M || return
	handing gone "$(docker_cg "$A")" charge 0 256M || return
	eq "files open" "$(field files_open) $(field files_attached) $(field abi_in_use)" "4 4 1"
	freeA=$(head -1 $P/0/$a/meminfo)
	eq "A's ledger" "$freeA" "Free: $(((6 << 30) - GIB - 512 * MIB - 256 * MIB))"
	eq "freeze (no version named)" "$(wr $P/upgrade freeze)" OK
	eq "the update, to a version not named" "$(field update)" "$(cat $P/version) -> ?"
	frozen_checks
	wait_field files_open 1 || bad "handing processes did not close: $(field files_open) open"
	has "h1 was told, refused, handed over" "$(out h1 | tr "\n" " ")" 'pollpri OK.*charge EAGAIN.*uncharge EAGAIN.*handover OK.*close OK'
	eq "reservations of h1 (2 files) and gone" "$(field reservations) $(field reserved_bytes)" \
		"2 $((GIB + 512 * MIB + 256 * MIB))"
	eq "A's ledger as before the freeze" "$(head -1 $P/0/$a/meminfo)" "$freeA"
	pid=$(pidof_w h1)
	eq "the dump charges h1's pid once, both files merged" \
		"$(dump | grep -cE "^charge 0 $a $pid $((GIB + 512 * MIB)) start=[0-9]+$")" 1
	eq "the stubborn process's charges are in the dump too" \
		"$(dump | grep -cE "^charge 1 $b $(pidof_w stubborn) $((200 * MIB)) start=[0-9]+$")" 1
	eq "the dump binds each instance to its container's init" \
		"$(dump | grep -E '^bind ' | tr '\n' ' ')" \
		"bind 0 $a $(cinit "$(docker_cg "$A")") bind 0 $b $(cinit "$(docker_cg "$B")") bind 1 $b $(cinit "$(docker_cg "$B")") "
	eq "dump: settings and instances" "$(dump | grep -E '^(format|from|default_memsize|gpu|add)')" \
		"format 5
from $(cat $P/version)
default_memsize $GIB
gpu 0 max_inst=8 policy=2 prio_ratio=40
add 0 $a memsize=$((6 << 30)) weight=2 highprio=1 uuid=$UUID
add 0 $b memsize=$GIB weight=1 highprio=0
gpu 1 max_inst=16 policy=1 prio_ratio=30
add 1 $b memsize=$GIB weight=1 highprio=0"
	# The stubborn process keeps its file: the update is called off.
	eq "thaw" "$(wr $P/upgrade thaw)" OK
	eq "running again" "$(field state)" running
	eq "the update called off" "$(field update) / $(field last_update)" "none / to ? called off"
	eq "thaw again" "$(wr $P/upgrade thaw)" EBUSY
	kill -9 "$(pidof_w gone)"
	rm -f "$W/h1.back"
	wait_out h1 '^query OK' || bad "h1 did not attach again: $(out h1)"
	has "h1 attached again, its charges taken back" "$(out h1)" \
		"query OK gpu=0 memsize=$((6 << 30)) used=$((GIB + 512 * MIB + 256 * MIB))"
	eq "A's ledger unchanged by the round trip" "$(head -1 $P/0/$a/meminfo)" "$freeA"
	eq "h1 charged once in meminfo" "$(grep -c "^PID: $pid Mem: $((GIB + 512 * MIB))$" $P/0/$a/meminfo)" 1
	wait_field reservations 0 || bad "gone's reservation was not released"
	eq "gone's 256M released after reclaim_s" "$(head -1 $P/0/$a/meminfo)" "Free: $(((6 << 30) - GIB - 512 * MIB))"
	has "logged" "$(dmesg | grep cgpu_km | tail -3)" 'released 1 reservation\(s\)'
	stop stubborn
	eq "B's ledger back to empty" "$(cat $P/1/$b/meminfo)" "Free: $GIB"
}

# The state moves across an unload and a load: h1 attaches to the new module.
handover_path() {
	local pid old_major before s line
	pid=$(pidof_w h1)
	stop h1
	handing h2 "$(docker_cg "$A")" charge 0 2G || return
	start plain -c "$(docker_cg "$B")" open attach charge 1 300M || return
	eq "freeze to 9.9.9" "$(wr $P/upgrade "freeze to=9.9.9")" OK
	eq "the versions involved" "$(field update)" "$(cat $P/version) -> 9.9.9"
	wait_field files_open 1 || bad "h2 did not close"
	stop plain
	wait_field files_open 0 || bad "files still open"
	eq "plain exited while frozen: its charges went with it" "$(cat $P/1/$b/meminfo)" "Free: $GIB"
	before=$(tree)
	s=$(dump)
	old_major=$(cat $P/0/major)
	unload || { bad "rmmod of the frozen module"; return; }
	has "unload logged" "$(dmesg | grep cgpu_km | tail -3)" 'deleted 3 instance\(s\) \(a hot update was under way\)'
	load ngpus=2 handover=1 major="$old_major" reclaim_s=20 || { bad "insmod handover=1"; return; }
	eq "importing" "$(field state)" importing
	eq "from a version not named yet" "$(field update)" "? -> $(cat $P/version)"
	eq "same major" "$(cat $P/0/major)" "$old_major"
	eq "open refused while importing" "$("$KT" ops open =EAGAIN | head -1)" "open EAGAIN"
	eq "inst_ctl refused while importing" "$(wr $P/inst_ctl "add 0 $A memsize=1")" EBUSY
	eq "a line before format" "$(wr $P/upgrade "default_memsize 1")" EPROTO
	eq "format 1 (not read: no container bound)" "$(wr $P/upgrade "format 1")" EPROTO
	eq "format 6 (not read)" "$(wr $P/upgrade "format 6")" EPROTO
	eq "thaw while importing" "$(wr $P/upgrade thaw)" EBUSY
	eq "freeze while importing" "$(wr $P/upgrade freeze)" EBUSY
	while IFS= read -r line; do
		[ "$(wr $P/upgrade "$line")" = OK ] || bad "import of '$line' refused: $(wr $P/upgrade "$line")"
	done <<<"$s"
	# Channels only (a format 3 line): a process that never comes back, its start time
	# no live process's.
	eq "a charge of channels alone" "$(wr $P/upgrade "charge 1 $b 99999 0 start=1 channels=5")" OK
	eq "a charge for an unknown instance" "$(wr $P/upgrade "charge 1 $a 5 1")" ENOENT
	# An object of a charge (format 4): its process's charge line first, holding its bytes.
	eq "an object past its charge" "$(wr $P/upgrade "obj 1 $b 99999 1 client=9 handle=8 parent=7 start=1")" EINVAL
	eq "an object of no charge" "$(wr $P/upgrade "obj 0 $a 77777 1 client=9 handle=8 parent=7")" EINVAL
	eq "an object of an unknown instance" "$(wr $P/upgrade "obj 1 $a 5 1 client=9 handle=8 parent=7")" ENOENT
	eq "an object that is its client" "$(wr $P/upgrade "obj 1 $b 99999 1 client=9 handle=9 parent=7 start=1")" EINVAL
	eq "a charge past memsize" "$(wr $P/upgrade "charge 1 $b 5 $((GIB + 1))")" ENOMEM
	eq "an instance twice" "$(wr $P/upgrade "$(grep "^add 0 $a" <<<"$s")")" EEXIST
	eq "the versions involved, from the state" "$(field update)" "$(cat $P/version) -> $(cat $P/version)"
	eq "commit" "$(wr $P/upgrade commit)" OK
	eq "running" "$(field state)" running
	eq "the update committed" "$(field update) / $(field last_update)" "none / from $(cat $P/version) committed"
	eq "settings, instances and ledgers as on the old module" "$(tree)" "$before"
	eq "h2's reservation and the channels wait" \
		"$(field reservations) $(field reserved_bytes) $(field reserved_channels)" "2 $((2 << 30)) 5"
	rm -f "$W/h2.back"
	wait_out h2 '^query OK' || bad "h2 did not attach to the new module: $(out h2)"
	has "h2 took its charges back" "$(out h2)" "query OK gpu=0 memsize=$((6 << 30)) used=$((2 << 30)) weight=2 highprio=1"
	eq "no double count" "$(head -1 $P/0/$a/meminfo)" "Free: $(((6 << 30) - (2 << 30)))"
	eq "the channels' reservation left" \
		"$(field reservations) $(field reserved_bytes) $(field reserved_channels)" "1 0 5"
	eq "limits refuse at the same point" \
		"$("$KT" ops -c "$(docker_cg "$A")" open attach fill 0 1G | sed -n 's/^fill OK //p')" \
		"charged=$((4 << 30)) stop=ENOMEM"
	stop h2
	eq "h2's exit returns everything" "$(cat $P/0/$a/meminfo)" "Free: $((6 << 30))"
}

setup
status
refusals
thaw_path
handover_path
eq "del" "$(wr $P/inst_ctl "del 0 $A")$(wr $P/inst_ctl "del 0 $B")$(wr $P/inst_ctl "del 1 $B")" OKOKOK
unload || bad "rmmod after the upgrade tests"
finish
