#!/usr/bin/env bash
# Malformed /dev/cgpu calls from inside a container (the checks are kt_badioctl.c's).
source test/kmod/lib.sh
unload
load ngpus=2 || { bad "insmod"; finish; exit 1; }
F=$(cid ioctl) f=$(short "$F")
eq "add" "$(add 0 $F memsize=$((64 << 20)))" OK
res=$(bash -c "echo 0 >$(docker_cg "$F")/cgroup.procs && exec $KT badioctl 64M" 2>&1)
echo "$res" | grep -v '^ok ' || true
has "every malformed call refused" "$res" '^badioctl: 0 check\(s\) failed$'
eq "ledger untouched" "$(cat $P/0/$f/meminfo)" "Free: $((64 << 20))"
eq "del" "$(wr $P/inst_ctl "del 0 $F")" OK
unload || bad "rmmod after the ioctl tests"
finish
