# Helpers for the whole-stack scripts that run inside the test VM (test/vm/run.sh) as
# root from the repository root: test/stack/e2e.sh and test/stack/demo.sh. Source it.

# Debian's own client (docker.io), whatever other docker is first in PATH.
docker() { /usr/bin/docker "$@"; }

KVER=$(uname -r)
P=/proc/cgpu_km
IMAGE=cgpu-cuda

# prep_node makes the VM a node as an operator would have it before installing cgpu:
# docker.io running from its init script with the user's /etc/docker/daemon.json.
prep_node() {
	# DKMS ends with depmod over every module of the kernel, which under TCG reads the
	# whole in-tree module set through 9p for minutes. The VM needs none of them (its
	# virtio/9p/overlay modules are loaded), so an empty directory stands in for them.
	mount -t tmpfs -o mode=0755 modules "/lib/modules/$KVER/kernel"
	# The init script mounts cgroup v1 hierarchies unless fstab names a cgroup file system.
	echo "cgroup2 /sys/fs/cgroup cgroup2 defaults 0 0" >>/etc/fstab
	# The VM's docker starts empty, whatever the machine's own docker keeps.
	mount -t tmpfs -o mode=0711 docker /var/lib/docker 2>/dev/null ||
		{ mkdir -p /var/lib/docker && mount -t tmpfs -o mode=0711 docker /var/lib/docker; }
	mkdir -p /etc/docker
	cat >/etc/docker/daemon.json <<'EOT'
{
  "storage-driver": "vfs",
  "iptables": false,
  "ip-masq": false,
  "bridge": "none",
  "live-restore": true,
  "log-level": "warn",
  "default-ulimits": {"nofile": {"Name": "nofile", "Hard": 65536, "Soft": 65536}}
}
EOT
	/etc/init.d/docker start >/dev/null
	wait_for 120 docker version || { echo "docker did not start:"; tail -20 /var/log/docker.log; return 1; }
}

# wait_for SECONDS COMMAND...: retries COMMAND every half second.
wait_for() {
	local n=$(($1 * 2)) i
	shift
	for ((i = 0; i < n; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}

# build_image [PROGRAM...]: a local image (no registry): busybox, glibc and cudaprobe, the
# simulated GPU's test program, and any other PROGRAM, with the libraries they load; the
# CUDA driver comes from the runtime.
build_image() {
	local ctx bin lib
	ctx=$(mktemp -d)
	mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/usr/lib/x86_64-linux-gnu" "$ctx/rootfs/lib64"
	source test/lib/dockerd.sh
	DOCKER_BIN=/usr/bin/docker dockerd_import_busybox cgpu-busybox || return 1
	cp sim/build/cudaprobe "$@" "$ctx/rootfs/usr/local/bin/"
	for bin in sim/build/cudaprobe sim/build/nvidia-smi libcgpu/build/libcgpu.so "$@"; do
		ldd "$bin" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p'
	done | sort -u | while read -r lib; do
		cp -L "$lib" "$ctx/rootfs/usr/lib/x86_64-linux-gnu/"
	done
	cp -L /lib64/ld-linux-x86-64.so.2 "$ctx/rootfs/lib64/"
	printf 'FROM cgpu-busybox\nCOPY rootfs/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\n' >"$ctx/Dockerfile"
	docker build -q -t "$IMAGE" "$ctx" >/dev/null
	local rc=$?
	rm -rf "$ctx"
	return $rc
}

# Checks: each prints one line; the script ends with summary.
checks=0 fails=0
ok() { checks=$((checks + 1)); echo "  ok    $*"; }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "  FAIL  $*"; }
# eq WHAT GOT WANT
eq() { if [ "$2" = "$3" ]; then ok "$1: $2"; else bad "$1: got '$2', want '$3'"; fi; }
# is WHAT COMMAND...: the command succeeds.
is() {
	local what=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi
}
summary() {
	echo "$1: $checks checks, $fails failed"
	[ "$fails" = 0 ]
}

# val KEY TEXT: a key=value line of cudaprobe's output.
val() { sed -n "s/^$1=//p" <<<"$2" | head -1; }

id_of() { docker inspect -f '{{.Id}}' "$1" 2>/dev/null | cut -c1-12; }
# instances: every instance in the kernel's tree, "GPU/ID".
instances() { (cd $P 2>/dev/null && ls -d [0-9]*/*/ 2>/dev/null | sed 's|/$||') || true; }
memsize() { cat "$P/0/$(id_of "$1")/memsize" 2>/dev/null; }
meminfo_free() { sed -n 's/^Free: //p' "$P/0/$(id_of "$1")/meminfo" 2>/dev/null; }

# agree: the kernel's instances are exactly the running containers the tests started
# with cGPU on (label cgpu.test=on), and every instance is a container docker knows.
agree() {
	local tree running
	tree=$(instances | cut -d/ -f2 | sort | tr '\n' ' ')
	running=$(docker ps -q --filter label=cgpu.test=on | sort | tr '\n' ' ')
	eq "$1: /proc/cgpu_km and docker ps agree" "$tree" "$running"
}
