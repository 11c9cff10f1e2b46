#!/usr/bin/env bash
# Every /proc/cgpu_km node: name, mode, read format, range edges, garbage, split writes,
# read-only nodes and writers without CAP_SYS_ADMIN in the initial user namespace.
source test/kmod/lib.sh
unload
load ngpus=2 || { bad "insmod"; finish; exit 1; }
A=$(cid procfs-a)
a=$(short "$A")
eq "add an instance" "$(wr $P/inst_ctl "add 0 $A memsize=$GIB")" OK

# Names and modes, exactly SPEC.md's table.
modes() {
	local got
	got=$(cd $P && stat -c '%A %n' -- * 0/* "0/$a"/* | sort -k2)
	eq "tree and modes" "$got" "$(sort -k2 <<EOT
dr-xr-xr-x 0
-r--r--r-- 0/$a/id
-r--r--r-- 0/$a/meminfo
-r--r--r-- 0/free_weight
-r--r--r-- 0/major
-rw-r--r-- 0/$a/highprio
-rw-r--r-- 0/$a/memsize
-rw-r--r-- 0/$a/weight
-rw-r--r-- 0/max_inst
-rw-r--r-- 0/policy
-rw-r--r-- 0/prio_ratio
dr-xr-xr-x 0/$a
dr-xr-xr-x 1
-rw-r--r-- default_memsize
-rw-r--r-- inst_ctl
-rw------- upgrade
-r--r--r-- version
EOT
)"
	eq "GPU 1 nodes" "$(ls $P/1 | tr '\n' ' ')" "free_weight major max_inst policy prio_ratio "
}

formats() {
	local major
	major=$(awk '$2 == "cgpu" { print $1 }' /proc/devices)
	has "version" "$(cat $P/version)" '^[0-9]+\.[0-9]+\.[0-9]+$'
	eq "version is one line" "$(wc -l <$P/version)" 1
	eq "default_memsize default" "$(cat $P/default_memsize)" 0
	eq "upgrade default: running, unload refused with instances" \
		"$(grep -E '^(state|unload_deletes):' $P/upgrade | tr '\n' ' ')" "state: running unload_deletes: 0 "
	eq "max_inst default" "$(cat $P/1/max_inst)" 16
	eq "policy default" "$(cat $P/1/policy)" 1
	eq "prio_ratio default" "$(cat $P/1/prio_ratio)" 30
	eq "free_weight = max_inst - weights" "$(cat $P/0/free_weight) $(cat $P/1/free_weight)" "15 16"
	eq "major is /dev/cgpu's" "$(cat $P/0/major)" "$major"
	eq "/dev/cgpu node" "$(stat -c '%F %a %t' /dev/cgpu)" "character special file 666 $(printf %x "$major")"
	eq "id" "$(cat $P/0/$a/id)" "$a"
	eq "memsize" "$(cat $P/0/$a/memsize)" "$GIB"
	eq "weight default" "$(cat $P/0/$a/weight)" 1
	eq "highprio default" "$(cat $P/0/$a/highprio)" 0
	eq "meminfo of an idle instance" "$(cat $P/0/$a/meminfo)" "Free: $GIB"
	has "inst_ctl prints its usage" "$(cat $P/inst_ctl)" '^  add <gpu> <id> \[memsize=<bytes>\]'
	has "inst_ctl usage has del" "$(cat $P/inst_ctl)" '^  del <gpu> <id>$'
	# Every value file is one number and a newline: exactly what `od` shows.
	eq "raw bytes of max_inst" "$(od -An -c $P/0/max_inst | tr -s ' ')" " 1 6 \n"
}

# edges NODE AFTER VALUE:WANT...: each write's outcome, then the value it must leave.
edges() {
	local node=$1 v want before
	shift
	for pair in "$@"; do
		v=${pair%%:*} want=${pair#*:}
		before=$(cat "$node")
		eq "$node <- '$v'" "$(wr "$node" "$v")" "$want"
		if [ "$want" = OK ]; then
			eq "$node after '$v'" "$(cat "$node")" "$v"
		else
			eq "$node unchanged after '$v'" "$(cat "$node")" "$before"
		fi
	done
}

ranges() {
	edges $P/0/max_inst 0:EINVAL 1:OK 25:OK 26:EINVAL 16:OK
	edges $P/0/prio_ratio 19:EINVAL 20:OK 99:OK 100:EINVAL 30:OK
	edges $P/0/policy -1:EINVAL 0:OK 5:OK 6:EINVAL 1:OK
	edges $P/default_memsize 9223372036854775807:OK 9223372036854775808:EINVAL \
		18446744073709551616:EINVAL 0:OK
	local u
	for u in 2:EINVAL:0 1:OK:1 0:OK:0; do
		eq "$P/upgrade <- '${u%%:*}'" "$(wr $P/upgrade "${u%%:*}")" "$(cut -d: -f2 <<<"$u")"
		eq "unload_deletes after '${u%%:*}'" "$(sed -n 's/^unload_deletes: //p' $P/upgrade)" "${u##*:}"
	done
	edges $P/0/$a/memsize 0:EINVAL 9223372036854775807:OK 9223372036854775808:EINVAL 1:OK "$GIB:OK"
	edges $P/0/$a/highprio 2:EINVAL 1:OK 0:OK
	edges $P/0/$a/weight 17:EINVAL 16:OK 0:OK 1:OK
	eq "free_weight follows weight" "$(cat $P/0/free_weight)" 15
}

garbage() {
	local node v before
	for node in $P/default_memsize $P/upgrade $P/0/max_inst $P/0/policy $P/0/prio_ratio \
		$P/0/$a/memsize $P/0/$a/weight $P/0/$a/highprio; do
		before=$(cat "$node")
		for v in "" $'\n' " " abc 0x1 +1 1.0 1e1 "1 1" $'1\n1' $'1\n\n' $'\n1' '1;' \
			"$(printf '%0300d' 1)"; do
			eq "$node <- $(printf %q "$v")" "$(wr "$node" "$v")" EINVAL
		done
		eq "$node unchanged by garbage" "$(cat "$node")" "$before"
	done
	# Blanks around the number and one newline are fine.
	eq "blanks and newline" "$(wr $P/0/policy $' \t2 \t\n')" OK
	eq "policy now" "$(cat $P/0/policy)" 2
	eq "leading zeros" "$(wr $P/0/policy 003)" OK
	eq "policy after 003" "$(cat $P/0/policy)" 3
}

# A value must come whole in one write() at offset 0; a continuation is refused.
split_writes() {
	eq "'2' then '5' on one file" "$("$KT" write $P/0/max_inst 2 5)" "OK EINVAL"
	eq "max_inst after the split write" "$(cat $P/0/max_inst)" 2
	eq "'1' then a newline" "$("$KT" write $P/0/policy 1 $'\n')" "OK EINVAL"
	eq "a torn number: '4' is out of range, '0' too" "$("$KT" write $P/0/prio_ratio 4 0)" \
		"EINVAL EINVAL"
	eq "prio_ratio untouched by the torn 40" "$(cat $P/0/prio_ratio)" 30
	eq "reset max_inst" "$(wr $P/0/max_inst 16)" OK
	eq "a long inst_ctl command across two writes" \
		"$("$KT" write $P/inst_ctl "add 1 $A" " memsize=5")" "EINVAL EINVAL"
	eq "nothing added by it" "$(ls $P/1 | grep -c "$a")" 0
}

read_only() {
	local node before
	for node in $P/version $P/0/free_weight $P/0/major $P/0/$a/id $P/0/$a/meminfo; do
		before=$(cat "$node")
		eq "root writing read-only $node" "$(wr "$node" 1)" EACCES
		eq "$node unchanged" "$(cat "$node")" "$before"
	done
}

# Without CAP_SYS_ADMIN in the initial user namespace nothing may change.
no_cap() {
	local node before nocap want
	nocap=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin --)
	local capeff
	capeff=$("${nocap[@]}" awk '/^CapEff/ { print $2 }' /proc/self/status)
	eq "setpriv drops CAP_SYS_ADMIN (bit 21)" "$(( (0x$capeff >> 21) & 1 ))" 0
	for node in $P/default_memsize $P/upgrade $P/0/max_inst $P/0/policy $P/0/prio_ratio \
		$P/0/$a/memsize $P/0/$a/weight $P/0/$a/highprio; do
		before=$(cat "$node")
		# The update's state and the instances' files do not even open for them.
		want=EPERM
		case $node in $P/upgrade | $P/0/$a/*) want=open:EACCES ;; esac
		eq "no CAP_SYS_ADMIN: $node" "$("${nocap[@]}" "$KT" write "$node" 3)" $want
		eq "uid 65534: $node" "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$KT" write "$node" 3)" open:EACCES
		eq "root of a user namespace: $node" "$(unshare -U -r "$KT" write "$node" 3)" $want
		eq "$node unchanged by the unprivileged" "$(cat "$node")" "$before"
	done
	eq "no CAP_SYS_ADMIN: inst_ctl add" "$("${nocap[@]}" "$KT" write $P/inst_ctl "add 1 $A memsize=1")" EPERM
	eq "no CAP_SYS_ADMIN: inst_ctl del" "$("${nocap[@]}" "$KT" write $P/inst_ctl "del 0 $a")" EPERM
	eq "the instance survived" "$(ls -d $P/*/$a)" "$P/0/$a"
	# A descriptor opened by root and written by a process that lost the capability.
	before=$(cat $P/0/policy)
	exec 7>$P/0/policy
	eq "write through a privileged fd without the capability" \
		"$("${nocap[@]}" bash -c 'echo 4 >&7' 2>&1 | grep -c 'Operation not permitted')" 1
	exec 7>&-
	eq "policy unchanged through the passed fd" "$(cat $P/0/policy)" "$before"
	# Reading stays open to everyone, but for the update's state and other containers'
	# ledgers: the host's administrator's alone.
	eq "uid 65534 reads max_inst" "$(setpriv --reuid=65534 --regid=65534 --clear-groups cat $P/0/max_inst)" 16
	eq "uid 65534 reads upgrade" "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$KT" write $P/upgrade 0 2>&1; setpriv --reuid=65534 --regid=65534 --clear-groups cat $P/upgrade 2>&1 | grep -c 'Permission denied')" "open:EACCES
1"
	eq "root without CAP_SYS_ADMIN reads upgrade" "$("${nocap[@]}" cat $P/upgrade 2>&1 | grep -c 'Permission denied')" 1
	eq "uid 65534 reads an instance's meminfo" "$(setpriv --reuid=65534 --regid=65534 --clear-groups cat $P/0/$a/meminfo 2>&1 | grep -c 'Permission denied')" 1
	eq "root reads upgrade" "$(head -1 $P/upgrade)" "state: running"
}

modes
formats
ranges
garbage
split_writes
read_only
no_cap
eq "del" "$(wr $P/inst_ctl "del 0 $a")" OK
unload || bad "rmmod after the procfs tests"
finish
