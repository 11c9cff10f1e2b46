#!/usr/bin/env bash
# In the test VM, as root from the repo root (test/vm/run.sh -- bash test/kmod/docker-forge.sh;
# needs bin/ and the libcgpu and sim builds): a real dockerd whose cgpu runtime registers
# each container and binds it to its init. A process of one container in a child cgroup
# named like another container's scope stays in its own container (its budget, its
# meminfo), never the victim's and never unlimited; a host process in a cgroup of that
# name made directly in the hierarchy is in no container.
source test/kmod/lib.sh
source test/lib/dockerd.sh
unload
load ngpus=1 || { bad "insmod"; finish; exit 1; }
state=$(mktemp -d /tmp/df.XXXXXX)
trap 'dockerd_stop "$state"; unload' EXIT
chmod 755 "$state"
dockerd_sim_node "$state" /proc/cgpu_km 1 || { bad "dockerd"; finish; exit 1; }
dockerd_import_busybox cgpu-forge || { bad "image"; finish; exit 1; }
ctr() {
	docker run -d --runtime cgpu -e ALIYUN_COM_GPU_MEM_CONTAINER="$1" -e ALIYUN_COM_GPU_MEM_DEV=15 \
		cgpu-forge sleep 100000
}
# cg ID: the container's cgroup, from its init's own /proc entry.
cg() { echo "$CG$(sed -n 's/^0:://p' "/proc/$(docker inspect -f '{{.State.Pid}}' "$1")/cgroup")"; }
V=$(ctr 1) X=$(ctr 2)
v=${V:0:12} x=${X:0:12}
eq "both registered" "$(ls $P/0 | grep -cE "^($v|$x)$")" 2
cgv=$(cg "$V") cgx=$(cg "$X")
memv=$(cat $P/0/$v/memsize) memx=$(cat $P/0/$x/memsize)
start own -c "$cgx" open attach
has "the attacker's own cgroup is the attacker" "$(out own)" "^attach OK id=$x ngpus=1"
stop own
start vic -c "$cgv" open attach
has "the victim's cgroup is the victim" "$(out vic)" "^attach OK id=$v ngpus=1"
stop vic
for d in "$cgx/docker-$V.scope" "$cgx/system.slice/docker-$V.scope"; do
	mkdir -p "$d"
	start f -c "$d" open attach fill 0 64M
	has "${d#$cgx}: still the attacker" "$(out f)" "^attach OK id=$x ngpus=1"
	has "${d#$cgx}: the attacker's budget, then ENOMEM" "$(out f)" \
		"^fill OK charged=$((memx / (64 << 20) * (64 << 20))) stop=ENOMEM"
	eq "${d#$cgx}: the victim untouched" "$(cat $P/0/$v/meminfo)" "Free: $memv"
	eq "${d#$cgx}: the victim's meminfo refused" \
		"$(bash -c "echo 0 >$d/cgroup.procs; cat $P/0/$v/meminfo" 2>&1 | grep -c 'Permission denied')" 1
	stop f
done
for d in "$CG/docker-$V.scope" "$CG/user.slice/docker-$V.scope"; do
	mkdir -p "$d"
	start h -c "$d" open attach =ENOENT
	stop h
done
has "a process inside the victim's own cgroup tree is the victim" \
	"$(mkdir -p "$cgv/inner"; "$KT" ops -c "$cgv/inner" open attach)" "^attach OK id=$v ngpus=1"
# runc removes a container's cgroup only once the cgroups made in it are gone.
rmdir "$cgx/docker-$V.scope" "$cgx/system.slice/docker-$V.scope" "$cgx/system.slice" "$cgv/inner"
docker rm -f "$V" "$X" >/dev/null
eq "the runtime unregistered both" "$(ls $P/0 | grep -cE "^($v|$x)$")" 0
finish
