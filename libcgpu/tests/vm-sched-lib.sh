# Shared by the compute-slice scripts in the test VM (vm-sched.sh, vm-share.sh; sourced
# after vm-lib.sh): two containers A and B (cgroups named as Docker's systemd driver
# names them), the module with both, and the figures' helpers.
KT=$PWD/test/kmod/build/kt
LOAD=$HOOK/sched-load
within() {
	if awk -v v="$2" -v l="$3" -v h="$4" 'BEGIN { exit !(v >= l && v <= h) }'; then ok
	else bad "$1: $2 not in [$3, $4]"; fi
}
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.3f", y ? x / y : 0 }'; }
kv() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$2" | tail -1; }

A=$(printf sched-a | sha256sum | cut -c1-64)
B=$(printf sched-b | sha256sum | cut -c1-64)
cgA=$CG/system.slice/docker-$A.scope cgB=$CG/system.slice/docker-$B.scope
mkdir -p "$cgA" "$cgB"
stat_of() { "$KT" sched -c "$1" stat; }
# up [PARAM=VALUE...]: the module with both containers, A at weight 1, B at weight WB
# (default 2).
up() {
	insmod kmod/cgpu_km.ko ngpus=1 "$@" || { bad "insmod $*"; return 1; }
	echo "add 0 $A memsize=$((1 << 30)) weight=1" >$P/inst_ctl || bad "add A"
	echo "add 0 $B memsize=$((1 << 30)) weight=${WB:-2}" >$P/inst_ctl || bad "add B"
	bind_ctr 0 "$A" || bad "bind A"
	bind_ctr 0 "$B" || bad "bind B"
}
down() {
	echo "del 0 $A" >$P/inst_ctl || bad "del A"
	echo "del 0 $B" >$P/inst_ctl || bad "del B"
	rmmod cgpu_km || bad "rmmod"
}
# work_between FILE T1 T2: the share of the GPU the run in FILE had between two times
# (from its progress lines "p T_NS WORK_US").
work_between() {
	awk -v a="$2" -v b="$3" '$1 == "p" && $2 >= a && !t1 { t1 = $2; w1 = $3 }
		$1 == "p" && $2 <= b { t2 = $2; w2 = $3 }
		END { printf "%.3f", (t2 > t1) ? (w2 - w1) * 1000 / (t2 - t1) : 0 }' "$1"
}
