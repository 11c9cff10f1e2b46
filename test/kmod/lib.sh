# Shared helpers of the kernel suite (sourced; runs as root inside the test VM).
KT=$PWD/test/kmod/build/kt
KO=$PWD/kmod/cgpu_km.ko
P=/proc/cgpu_km
CG=/sys/fs/cgroup
T=$(basename "${BASH_SOURCE[1]}" .sh)
fails=0 checks=0

ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL [$T] $*"; }
# eq WHAT GOT WANT
eq() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
# has WHAT TEXT PATTERN (grep -E)
has() { if grep -Eq -- "$3" <<<"$2"; then ok; else bad "$1: '$2' lacks /$3/"; fi; }
lacks() { if grep -Eq -- "$3" <<<"$2"; then bad "$1: '$2' has /$3/"; else ok; fi; }
# within WHAT GOT LOW HIGH (decimals)
within() {
	if awk -v v="$2" -v l="$3" -v h="$4" 'BEGIN { exit !(v >= l && v <= h) }'; then ok
	else bad "$1: $2 not in [$3, $4]"; fi
}
# kv KEY TEXT: KEY's value in a kt answer line of key=value fields.
kv() { sed -n "s/.*\b$1=\([0-9a-f]*\).*/\1/p" <<<"$2" | head -1; }
finish() {
	local f
	for f in "$W"/init-*; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
	echo "[$T] $checks checks, $fails failed"
	[ "$fails" = 0 ]
}

load() { insmod "$KO" "$@"; }
unload() { ! [ -d /sys/module/cgpu_km ] || rmmod cgpu_km; }
# One write() of DATA to PATH: prints OK or the errno name.
wr() { "$KT" write "$1" "$2"; }
# A deterministic 64-hex container id for a name (FNV-1a, four seeds), in bash alone:
# under TCG every process started costs tens of milliseconds.
cid() {
	local s=$1 out= seed i h c
	for seed in 1 2 3 4; do
		h=$((0xcbf29ce484222325 ^ seed))
		for ((i = 0; i < ${#s}; i++)); do
			printf -v c %d "'${s:i:1}"
			h=$(((h ^ c) * 0x100000001b3))
		done
		printf -v out '%s%016x' "$out" "$h"
	done
	echo "$out"
}
short() { echo "${1:0:12}"; }
GIB=$((1 << 30))

# docker_cg ID: the cgroup Docker's systemd driver makes for a container.
docker_cg() {
	local d=$CG/system.slice/docker-$1.scope
	mkdir -p "$d"
	echo "$d"
}

# cinit DIR: the pid of a process standing for a container's init in cgroup DIR, started
# once and kept until finish; a bind names it, and the kernel takes its cgroup.
cinit() {
	local f=$W/init-$(tr / _ <<<"$1") pid i
	if [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
		cat "$f"
		return
	fi
	bash -c "echo 0 >'$1/cgroup.procs' && exec sleep 100000" </dev/null >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 1 200); do
		grep -qx "$pid" "$1/cgroup.procs" 2>/dev/null && break
		sleep 0.01
	done
	echo "$pid" >"$f"
	echo "$pid"
}
# bind GPU ID [DIR]: binds instance ID on GPU to cgroup DIR (default: docker_cg ID).
bind() { wr $P/inst_ctl "bind $1 $2 $(cinit "${3:-$(docker_cg "$2")}")"; }
# add GPU ID [FIELDS...]: adds the instance and binds it to docker_cg ID, as the runtime
# does: OK, or the first errno.
add() {
	local r
	r=$(wr $P/inst_ctl "add $*")
	[ "$r" != OK ] || r=$(bind "$1" "$2")
	echo "$r"
}

# start NAME KT-OPS-ARGS...: runs `kt ops ARGS... ready hold FILE` in the background and
# waits for its ready line; its output is in $W/NAME.out, its pid in $W/NAME.pid.
W=$(mktemp -d /tmp/kt.XXXXXX)
start() {
	local name=$1 i
	shift
	touch "$W/$name.hold"
	"$KT" ops "$@" ready hold "$W/$name.hold" >"$W/$name.out" 2>&1 &
	echo $! >"$W/$name.pid"
	for i in $(seq 1 500); do
		grep -q '^ready OK' "$W/$name.out" && return 0
		kill -0 "$(cat "$W/$name.pid")" 2>/dev/null || break
		sleep 0.02
	done
	bad "$name did not get ready: $(cat "$W/$name.out")"
	return 1
}
# stop NAME: lets it exit (closing its files) and waits for it.
stop() {
	rm -f "$W/$1.hold"
	wait "$(cat "$W/$1.pid")" 2>/dev/null
}
pidof_w() { sed -n '/^ready OK pid=/{s///p;q}' "$W/$1.out"; }
out() { cat "$W/$1.out"; }
