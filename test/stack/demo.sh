#!/usr/bin/env bash
# `make demo`, inside the VM (scripts/demo.sh boots it): installs cgpu on a node running
# docker.io, with the simulated GPU (one 15 GiB Tesla T4), runs SPEC's two-container
# example with docker cgpu run and shows what an operator looks at.
set -uo pipefail
source test/stack/lib.sh
T0=$(date +%s)

step() { printf '\n=== %s (%ss)\n' "$*" "$(($(date +%s) - T0))"; }
# show COMMAND...: prints the command as typed at a root prompt, then its output.
show() {
	local a line="#"
	for a in "$@"; do
		case "$a" in
		*[!A-Za-z0-9_./=:,-]*) line+=" '$a'" ;;
		*) line+=" $a" ;;
		esac
	done
	echo "$line"
	"$@" 2>&1 | sed 's/^/  /'
}
die() { echo "demo: $*" >&2; exit 1; }

step "a node with docker.io running and no GPU"
prep_node || die "docker did not start"
show docker version --format '{{.Server.Version}}'
show cat /etc/docker/daemon.json

step "install cgpu (install.sh; DKMS builds the module, which takes a few minutes in this VM)"
# --prebuilt: the Go tools, libcgpu and the simulator were built on the host by make.
echo "# ./install.sh --prebuilt --sim-gpus 1 --restart-docker"
./install.sh --prebuilt --sim-gpus 1 --restart-docker 2>&1 | sed 's/^/  /'
[ "${PIPESTATUS[0]}" = 0 ] || die "install.sh failed"
show nvidia-smi
show docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}'

build_image >/dev/null || die "building the test image failed"

step "SPEC's example: two containers on one 15 GiB GPU, 6 and 8 GiB"
for x in "gpu_test1 6" "gpu_test2 8"; do
	set -- $x
	show docker cgpu run -d -t --gpus all --shm-size=1g --ulimit memlock=-1 --ulimit stack=67108864 \
		--name "$1" -v /mnt:/mnt -e ALIYUN_COM_GPU_MEM_CONTAINER="$2" -e ALIYUN_COM_GPU_MEM_DEV=15 $IMAGE
done
show docker ps --format 'table {{.ID}}\t{{.Names}}\t{{.Status}}'

step "the kernel's view: /proc/cgpu_km"
show ls /proc/cgpu_km /proc/cgpu_km/0
for c in gpu_test1 gpu_test2; do
	id=$(id_of $c)
	show grep . /proc/cgpu_km/0/$id/memsize /proc/cgpu_km/0/$id/weight /proc/cgpu_km/0/$id/meminfo
done
show cat /proc/cgpu_km/0/free_weight

step "inside each container, the GPU is its own budget"
for c in gpu_test1 gpu_test2; do
	show docker exec $c nvidia-smi
	show docker exec $c cudaprobe meminfo
done

step "allocating past the budget is refused inside the container"
show docker exec gpu_test1 cudaprobe alloc $((7 << 30))
show docker exec gpu_test1 cudaprobe alloc-loop -c 512

step "memory in use, per process, seen from the node"
docker exec -d gpu_test1 cudaprobe alloc $((2 << 30)) -k
docker exec -d gpu_test2 cudaprobe alloc $((3 << 30)) -k
for c in gpu_test1 gpu_test2; do
	wait_for 30 grep -q '^PID:' /proc/cgpu_km/0/$(id_of $c)/meminfo
	show cat /proc/cgpu_km/0/$(id_of $c)/meminfo
done
show docker exec gpu_test2 cudaprobe alloc $((6 << 30))
show docker cgpu stat
# The node's driver (the stand-in) holds what the two containers' processes hold.
show nvidia-smi

step "docker stop removes the instance and gives the memory back"
show docker stop -t 1 gpu_test1
show ls /proc/cgpu_km/0
show nvidia-smi --query-gpu=index,memory.used --format=csv
docker rm -f gpu_test1 gpu_test2 >/dev/null

step "done"
echo "The stack was installed by ./install.sh and is removed by ./install.sh --uninstall (docs/install.md)."
