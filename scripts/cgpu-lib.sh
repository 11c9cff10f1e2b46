# Shell functions shared by install.sh and upgrade.sh (sourced, not run). The caller sets
# `me` (the name its messages start with) and runs under `set -Eeuo pipefail`.
#
# Every change a step makes is journalled with `later WHAT COMMAND` (how to undo it);
# `fail` undoes the journal in reverse, so a failed run leaves the node as it found it.

# Paths on a node (docs/contracts.md §5).
PLUGIN=/usr/local/lib/docker/cli-plugins/docker-cgpu
RUNTIME=/usr/local/bin/cgpu-runtime
LIBDIR=/usr/local/lib/cgpu
HOOK=$LIBDIR/libcgpu.so
SIMDIR=$LIBDIR/sim
SMI_LINK=/usr/local/bin/nvidia-smi
LDCONF=/etc/ld.so.conf.d/cgpu-sim.conf
CONFIG=/etc/cgpu/runtime.json
SIM_STATE=/run/cgpu-sim/state
SIM_TREE=/var/lib/cgpu
MODPROBE_CONF=/etc/modprobe.d/cgpu_km.conf
MODLOAD_CONF=/etc/modules-load.d/cgpu_km.conf
DAEMON_JSON=/etc/docker/daemon.json
BACKUP=$DAEMON_JSON.cgpu-backup
PROC=/proc/cgpu_km
MOD=cgpu_km
KVER=$(uname -r)
# The stand-in NVIDIA kernel driver of the simulated node (simdrv/, docs/sim.md): named
# as NVIDIA's modules, so its files say cgpu-sim to be told apart from a real driver's.
# nvidia-uvm.ko (module nvidia_uvm) uses nvidia.ko's exports: loaded after it, unloaded
# before it.
STANDIN=nvidia
STANDIN_UVM=nvidia_uvm
STANDIN_MAJOR=195 # NVIDIA's character major, which the stand-in takes too
STANDIN_PROC=/proc/driver/nvidia-sim
STANDIN_DIR=/lib/modules/$KVER/extra/cgpu-sim
STANDIN_KO=$STANDIN_DIR/$STANDIN.ko
STANDIN_UVM_KO=$STANDIN_DIR/nvidia-uvm.ko
STANDIN_MODPROBE=/etc/modprobe.d/cgpu-sim.conf
STANDIN_MODLOAD=/etc/modules-load.d/cgpu-sim.conf
# The node's own docker daemon, whatever DOCKER_HOST the caller has.
DOCKER=(docker -H unix:///var/run/docker.sock)

say() { echo "$me: $*"; }

undo_what=() undo_cmd=()
# later WHAT COMMAND: COMMAND (a shell line) undoes the change just made.
later() { undo_what+=("$1"); undo_cmd+=("$2"); }
# last WHAT COMMAND: an undo that runs after all the others.
last() { undo_what=("$1" "${undo_what[@]}"); undo_cmd=("$2" "${undo_cmd[@]}"); }
# unlater WHAT: the change journalled as WHAT is settled; it is no longer undone.
unlater() {
	local i
	for ((i = ${#undo_what[@]} - 1; i >= 0; i--)); do
		if [ "${undo_what[i]}" = "$1" ]; then
			undo_what=("${undo_what[@]:0:i}" "${undo_what[@]:i+1}")
			undo_cmd=("${undo_cmd[@]:0:i}" "${undo_cmd[@]:i+1}")
			return
		fi
	done
}

rollback() {
	local i
	if [ ${#undo_cmd[@]} -eq 0 ]; then
		say "${nothing_undone:-nothing was changed}"
		return
	fi
	say "undoing what this run changed:"
	for ((i = ${#undo_cmd[@]} - 1; i >= 0; i--)); do
		say "  undo: ${undo_what[i]}"
		eval "${undo_cmd[i]}" >"$work/undo.out" 2>&1 ||
			{ say "  that failed:"; sed 's/^/    | /' "$work/undo.out"; }
	done
	undo_what=() undo_cmd=()
	say "${after_undo:-the node is as it was before this run}"
}

fail() {
	trap - ERR
	set +e
	echo "$me: FAILED: $*" >&2
	rollback
	exit 1
}

# try WHAT COMMAND...: runs COMMAND; its output is shown only when it fails, with WHAT.
try() {
	local what=$1
	shift
	if ! "$@" >"$work/out" 2>&1; then
		tail -n 40 "$work/out" | sed 's/^/    | /' >&2
		fail "$what"
	fi
}

q() { printf '%q' "$1"; }

# makedirs DIR: creates DIR and its missing parents, each journalled.
makedirs() {
	local d=$1 missing=()
	while [ ! -d "$d" ]; do
		missing=("$d" "${missing[@]}")
		d=$(dirname "$d")
	done
	for d in "${missing[@]}"; do
		try "creating $d" mkdir "$d"
		later "remove directory $d" "rmdir $(q "$d")"
	done
}

kept=0 changed=0
# put SRC DST MODE: installs one file by rename (a running binary is never written in
# place); says whether it was new, replaced or already there, and sets changed=1 when
# it was not there.
put() {
	local src=$1 dst=$2 mode=$3 keep
	if [ -f "$dst" ] && [ ! -L "$dst" ] && cmp -s "$src" "$dst" && [ "$(stat -c %a "$dst")" = "$mode" ]; then
		say "  unchanged  $dst"
		return
	fi
	changed=1
	makedirs "$(dirname "$dst")"
	if [ -e "$dst" ] || [ -L "$dst" ]; then
		kept=$((kept + 1))
		keep=$work/kept.$kept
		try "keeping the old $dst" cp -a "$dst" "$keep"
		later "put back the old $dst" "mv -f $(q "$keep") $(q "$dst")"
		say "  replaced   $dst"
	else
		later "remove $dst" "rm -f $(q "$dst")"
		say "  installed  $dst"
	fi
	try "installing $dst" install -m "$mode" "$src" "$dst.cgpu-new"
	try "installing $dst" mv -f "$dst.cgpu-new" "$dst"
}

# remove PATH...: removes installed files, saying so; absent ones are skipped quietly.
remove() {
	local p
	for p in "$@"; do
		if [ -e "$p" ] || [ -L "$p" ]; then
			try "removing $p" rm -rf "$p"
			say "  removed    $p"
		fi
	done
}

# rmdirs DIR...: removes each directory if it is empty (parents last).
rmdirs() {
	local d
	for d in "$@"; do
		if [ -d "$d" ] && rmdir "$d" 2>/dev/null; then
			say "  removed    $d/"
		fi
	done
}

version_of() { sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$1/dkms.conf"; }

# stage_source KMOD DIR: copies the module's sources, without build outputs, into DIR.
stage_source() {
	local from=$1 to=$2
	mkdir -p "$to"
	(cd "$from" && find . \( -name build -o -name .build -o -name .cache \) -prune -o -type f \
		! -name '*.o' ! -name '*.ko' ! -name '*.mod' ! -name '*.mod.c' ! -name '*.cmd' \
		! -name modules.order ! -name Module.symvers -print0 | cpio -0 -pdm --quiet "$to")
}

# check_source DIR: DIR's dkms.conf names the version, which DKMS files the module under
# and the build stamps into it (kmod/version.mk).
check_source() {
	[ -n "$(version_of "$1")" ] || fail "$1/dkms.conf has no PACKAGE_VERSION"
}

# dkms_make COMMAND VERSION WHAT: runs `dkms COMMAND` (build or install) for the running
# kernel; when it fails, shows the end of its output and of DKMS's make.log, then fails
# with WHAT.
dkms_make() {
	if ! dkms "$1" -m $MOD -v "$2" -k "$KVER" >"$work/out" 2>&1; then
		tail -n 15 "$work/out" | sed 's/^/    | /' >&2
		tail -n 25 "/var/lib/dkms/$MOD/$2/build/make.log" 2>/dev/null | sed 's/^/    make.log| /' >&2
		fail "$3"
	fi
}

# check_ko KO [VERSION]: KO is a cgpu_km module (of VERSION) built for the running kernel.
check_ko() {
	local v k
	v=$(modinfo -F version "$1" 2>/dev/null || true)
	[ -n "$v" ] || fail "$1 is not a kernel module with a version"
	[ -z "${2-}" ] || [ "$v" = "$2" ] || fail "$1 is cgpu_km $v, not the sources' $2"
	k=$(modinfo -F vermagic "$1" | cut -d' ' -f1)
	[ "$k" = "$KVER" ] || fail "$1 is built for kernel $k, not the running $KVER"
}

# dkms_take VERSION KO: DKMS takes KO (`make -C kmod` of the sources registered as
# VERSION) as its build for the running kernel, laid out as its own ldtarball does, so
# that `dkms install` installs it without compiling; other kernels still get DKMS builds.
# Tests use it: compiling under an emulated CPU takes minutes for the same module.
dkms_take() {
	local d
	d=/var/lib/dkms/$MOD/$1/$KVER/$(uname -m)
	check_ko "$2" "$1"
	try "giving DKMS the built $2" dkms_lay "$d" "$2"
}
dkms_lay() {
	mkdir -p "$1/module" "$1/log" && cp "$2" "$1/module/$MOD.ko" &&
		echo "not compiled by DKMS: taken from $2" >"$1/log/make.log"
}

# DKMS's view of cgpu_km, read once before anything changes: dkms takes seconds to start
# on a slow machine. Lines are "cgpu_km/VERSION, KERNEL, ARCH: STATE" (DKMS 3) or
# "cgpu_km, VERSION, KERNEL, ARCH: STATE" (DKMS 2).
dkms_status=
dkms_read() { dkms_status=$(dkms status -m "$MOD" 2>/dev/null || true); }
dkms_versions() { sed -En "s#^$MOD(/|, )([^,:]+)[,:].*#\2#p" <<<"$dkms_status" | sort -u; }
dkms_installed() { grep -Eq "^$MOD(/|, )$1, $KVER, [^:]*: installed" <<<"$dkms_status"; }

# busy: the reasons the loaded module cannot be replaced now (nothing when it can): every
# registered instance, named by its container when docker knows it, and every process
# that holds /dev/cgpu open.
busy() {
	local d i id name
	[ -d "$PROC" ] || return 0
	for d in "$PROC"/[0-9]*/; do
		for i in "$d"*/; do
			[ -f "$i/memsize" ] || continue
			id=$(basename "$i")
			name=$("${DOCKER[@]}" ps -a --no-trunc --filter "id=$id" --format '{{.Names}}' 2>/dev/null | head -1 || true)
			echo "instance $id on GPU $(basename "$d")${name:+ (container $name)}"
		done
	done
	holders
}

# holders: every process that holds /dev/cgpu open, one line each.
holders() {
	local pid
	for pid in /proc/[0-9]*; do
		if ls -l "$pid/fd" 2>/dev/null | grep -q ' -> /dev/cgpu$'; then
			echo "process ${pid#/proc/} ($(cat "$pid/comm" 2>/dev/null)) holds /dev/cgpu open"
		fi
	done
}

# refuse_busy WHAT: stops, having changed nothing, while the module is in use.
refuse_busy() {
	local why
	why=$(busy)
	[ -z "$why" ] && return 0
	echo "$me: refusing to $1 while cgpu_km is in use:" >&2
	echo "$why" | sed 's/^/  /' >&2
	echo "$me: stop those containers (docker stop) and run again" >&2
	exit 1
}

docker_lists_cgpu() {
	"${DOCKER[@]}" info --format '{{json .Runtimes}}' 2>/dev/null | jq -e 'has("cgpu")' >/dev/null 2>&1
}

# restart_docker: restarts the node's docker through its service manager and waits for
# it to answer.
restart_docker() {
	local i
	if [ -d /run/systemd/system ]; then
		systemctl restart docker
	elif [ -x /etc/init.d/docker ]; then
		/etc/init.d/docker restart
	else
		echo "no service manager for docker (systemd or /etc/init.d/docker): restart dockerd yourself" >&2
		return 1
	fi
	for i in $(seq 1 120); do
		"${DOCKER[@]}" version >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	echo "docker did not answer after the restart" >&2
	return 1
}
