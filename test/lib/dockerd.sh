#!/usr/bin/env bash
# Shell helpers for tests that need a real Docker daemon of their own. Source this file.
# Everything lives under one directory given by the caller, so a test never touches the
# machine's own daemon, ~/.docker or /var/lib/docker, and the same helpers run on a
# developer machine, in CI, or inside the project's QEMU VM.
#
#   dockerd_start DIR [RUNTIME_PATH RUNTIME_CONFIG]
#       Starts dockerd with its data, exec root, socket, pid file and log under DIR
#       (vfs storage, no iptables, no bridge). With RUNTIME_PATH, registers it as the
#       "cgpu" runtime, passing "--cgpu-config RUNTIME_CONFIG". Exports DOCKER_HOST and
#       DOCKER_CONFIG (DIR/config, where plugins go). Waits until the daemon answers.
#   dockerd_install_plugin DIR PLUGIN_PATH
#       Makes PLUGIN_PATH the CLI plugin DIR/config/cli-plugins/<its name>.
#   dockerd_import_busybox IMAGE
#       Builds IMAGE from busybox-static (no registry needed).
#   dockerd_sim_node DIR PROCFS_ROOT [SIM_GPUS]
#       From the repository root: dockerd_start with this checkout's cgpu runtime, whose
#       config (DIR/runtime.json, exported as CGPU_RUNTIME_CONFIG) puts containers on a
#       simulated node of its own (tree PROCFS_ROOT, driver state in DIR) with libcgpu
#       and the simulated driver injected; the plugin installed. Nothing from the
#       caller's environment (CGPU_SIM*, CGPU_PROCFS_ROOT, DOCKER_CONTEXT) picks another
#       node; DOCKER_BIN defaults to Debian's client.
#   dockerd_stop DIR
#       Stops the daemon and everything it started, and removes DIR.
#
# DOCKER_BIN selects the client (default: docker in PATH). Needs root.

dockerd_log() { echo "dockerd.sh: $*" >&2; }

dockerd_start() {
	local dir=$1 runtime=${2:-} runtime_cfg=${3:-}
	local i
	# Unix socket paths are limited to 108 bytes: containerd's lives under the exec root.
	if [ ${#dir} -gt 60 ]; then
		dockerd_log "state dir $dir is too long for unix sockets (keep it under 60 chars)"
		return 1
	fi
	mkdir -p "$dir/data" "$dir/exec" "$dir/config/cli-plugins" || return 1
	if [ -n "$runtime" ]; then
		jq -n --arg path "$runtime" --arg cfg "$runtime_cfg" \
			'{runtimes: {cgpu: {path: $path, runtimeArgs: (if $cfg == "" then [] else ["--cgpu-config", $cfg] end)}}}' \
			>"$dir/daemon.json"
	else
		echo '{}' >"$dir/daemon.json"
	fi
	dockerd --data-root "$dir/data" --exec-root "$dir/exec" -H "unix://$dir/docker.sock" \
		--pidfile "$dir/dockerd.pid" --config-file "$dir/daemon.json" \
		--iptables=false --ip-masq=false --bridge=none --storage-driver=vfs \
		>"$dir/dockerd.log" 2>&1 &
	echo $! >"$dir/dockerd.launcher.pid"
	export DOCKER_HOST="unix://$dir/docker.sock"
	export DOCKER_CONFIG="$dir/config"
	for i in $(seq 1 120); do
		if "${DOCKER_BIN:-docker}" version >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$(cat "$dir/dockerd.launcher.pid")" 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	dockerd_log "dockerd did not come up; its log:"
	tail -n 30 "$dir/dockerd.log" >&2
	return 1
}

dockerd_sim_node() {
	local dir=$1 root=$2 gpus=${3:-}
	unset CGPU_SIM CGPU_SIM_GPUS CGPU_SIM_MEM_MIB CGPU_PROCFS_ROOT DOCKER_CONTEXT
	DOCKER_BIN=${DOCKER_BIN:-$(command -v /usr/bin/docker docker | head -n 1)}
	export DOCKER_BIN
	jq -n --arg root "$root" --arg repo "$PWD" --arg simstate "$dir/sim-state" --arg gpus "$gpus" \
		'{sim: true, procfs_root: $root, next_runtime: "runc", hook: "\($repo)/libcgpu/build/libcgpu.so",
		  sim_driver: "\($repo)/sim/build", sim_state: $simstate}
		 + (if $gpus == "" then {} else {sim_gpus: ($gpus | tonumber)} end)' >"$dir/runtime.json" || return 1
	export CGPU_RUNTIME_CONFIG=$dir/runtime.json
	dockerd_start "$dir" "$PWD/bin/cgpu-runtime" "$CGPU_RUNTIME_CONFIG" || return 1
	dockerd_install_plugin "$dir" bin/docker-cgpu
}

dockerd_install_plugin() {
	local dir=$1 plugin=$2
	ln -sf "$(realpath "$plugin")" "$dir/config/cli-plugins/$(basename "$plugin")"
}

dockerd_import_busybox() {
	local image=$1 bb rootfs applet
	bb=$(command -v busybox) || { dockerd_log "busybox (busybox-static) is not installed"; return 1; }
	rootfs=$(mktemp -d)
	mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/etc" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev"
	cp "$bb" "$rootfs/bin/busybox"
	for applet in $("$bb" --list); do
		[ "$applet" = busybox ] || ln -s busybox "$rootfs/bin/$applet"
	done
	echo 'root:x:0:0:root:/root:/bin/sh' >"$rootfs/etc/passwd"
	echo 'root:x:0:' >"$rootfs/etc/group"
	tar -C "$rootfs" -c . | "${DOCKER_BIN:-docker}" import -c 'ENV PATH=/bin' -c 'CMD ["sh"]' - "$image" >/dev/null
	local rc=$?
	rm -rf "$rootfs"
	return $rc
}

dockerd_stop() {
	local dir=$1 pid i
	[ -d "$dir" ] || return 0
	# Callers may run under set -e: a step that finds nothing to do must not end the cleanup.
	if [ -f "$dir/dockerd.pid" ]; then
		pid=$(cat "$dir/dockerd.pid")
		# Containers first, so their runtime deletes run while the daemon still can.
		"${DOCKER_BIN:-docker}" -H "unix://$dir/docker.sock" ps -aq 2>/dev/null |
			xargs -r "${DOCKER_BIN:-docker}" -H "unix://$dir/docker.sock" rm -f >/dev/null 2>&1 || true
		kill "$pid" 2>/dev/null || true
		for i in $(seq 1 60); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	# Whatever is still mounted under the state dir (container shm, netns) goes first.
	{ grep -o " $dir/[^ ]*" /proc/self/mounts || true; } | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	rm -rf "$dir"
}
