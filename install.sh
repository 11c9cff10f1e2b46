#!/usr/bin/env bash
# Installs cgpu on this node, or removes it (--uninstall). docs/install.md describes every
# step. Each step prints what it does; running it again changes nothing; a failed step
# undoes what the run changed and stops with the reason.
set -Eeuo pipefail
me=install.sh
repo=$(cd "$(dirname "$0")" && pwd)
export PATH=$PATH:/usr/local/go/bin

usage() {
	cat >&2 <<EOT
usage: install.sh [--restart-docker] [--prebuilt] [--built KO] [--enforce [--max-channels N]]
                  [--sim-gpus N] [--sim-mem-mib MIB]
       install.sh --uninstall [--restart-docker]
  As root: builds and installs docker cgpu, cgpu-runtime and libcgpu, builds cgpu_km through
  DKMS and loads it (now and at every boot) with the node's GPU count, and adds the cgpu
  runtime to /etc/docker/daemon.json. With no NVIDIA GPU it installs the simulated GPU:
  its libraries and the stand-in kernel driver (simdrv/, loaded now and at every boot).
  --restart-docker   restart docker so that it knows the cgpu runtime (default: say how)
  --prebuilt         install what \`make\` already built in this tree instead of building
                     (the stand-in driver too: simdrv/nvidia.ko and nvidia-uvm.ko for the
                     running kernel)
  --built KO         DKMS takes KO, cgpu_km.ko as \`make kmod\` built it from this tree's
                     kmod/ for the running kernel, instead of compiling the same sources
  --enforce          load cgpu_km with enforce=1: budgets charged at the NVIDIA driver's
                     ioctl entry (docs/kmod.md; off by default); says whether it is on
  --max-channels N   with --enforce: channel groups, channels and GPU VA spaces a limited
                     container may hold per GPU, 0..16384 (0: no cap; default 256), now
                     and at boot
  --sim-gpus N       simulated GPUs on a node without NVIDIA GPU (1..16, default 4);
                     refused on a node with NVIDIA's driver
  --sim-mem-mib MIB  memory of each simulated GPU (default 15109, a Tesla T4's)
  --uninstall        remove everything install.sh installs (refused while cgpu is in use)
EOT
	exit 2
}

action=install restart=0 prebuilt=0 built= enforce=0 max_channels= sim_gpus=4 sim_mem=15109 sim_asked=
while [ $# -gt 0 ]; do
	case "$1" in
	--uninstall) action=uninstall; shift ;;
	--restart-docker) restart=1; shift ;;
	--prebuilt) prebuilt=1; shift ;;
	--built) built=${2-}; shift 2 || usage ;;
	--enforce) enforce=1; shift ;;
	--max-channels) max_channels=${2-}; shift 2 || usage ;;
	--sim-gpus) sim_gpus=${2-} sim_asked=$1; shift 2 || usage ;;
	--sim-mem-mib) sim_mem=${2-} sim_asked=$1; shift 2 || usage ;;
	*) usage ;;
	esac
done
[[ "$sim_gpus" =~ ^[1-9][0-9]*$ ]] && [ "$sim_gpus" -le 16 ] ||
	{ echo "$me: --sim-gpus $sim_gpus: want 1..16" >&2; exit 2; }
[[ "$sim_mem" =~ ^[1-9][0-9]{0,6}$ ]] || { echo "$me: --sim-mem-mib $sim_mem: want a number of MiB" >&2; exit 2; }
[ -z "$built" ] && [ "$enforce" = 0 ] || [ "$action" = install ] || usage
if [ -n "$max_channels" ]; then
	[ "$enforce" = 1 ] || { echo "$me: --max-channels needs --enforce (it caps what enforce=1 counts)" >&2; exit 2; }
	[[ "$max_channels" =~ ^(0|[1-9][0-9]{0,4})$ ]] && [ "$max_channels" -le 16384 ] ||
		{ echo "$me: --max-channels $max_channels: want 0..16384 (0: no cap)" >&2; exit 2; }
fi
if [ -n "$built" ]; then
	[ -f "$built" ] || { echo "$me: --built $built: no such file" >&2; exit 1; }
	built=$(cd "$(dirname "$built")" && pwd)/$(basename "$built")
fi
[ "$(id -u)" -eq 0 ] || { echo "$me: must run as root" >&2; exit 1; }

work=$(mktemp -d /tmp/cgpu-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/cgpu-lib.sh
source "$repo/scripts/cgpu-lib.sh"
trap 'fail "unexpected error at line $LINENO: $BASH_COMMAND"' ERR

# daemon_json_ok: the file is a JSON object whose runtimes (if any) cgpu can add to.
daemon_json_ok() {
	[ ! -e "$DAEMON_JSON" ] && return 0
	jq -e '(type == "object") and ((.runtimes // {}) | type == "object")
		and ((.runtimes.cgpu // {}) | type == "object")' "$DAEMON_JSON" >/dev/null 2>&1 ||
		fail "$DAEMON_JSON is not a JSON object with an object \"runtimes\" (malformed?); it is left as it is: fix it and run again"
}

# The node's GPUs: NVIDIA's when its driver is loaded, else the simulated ones.
detect_gpus() {
	local smi
	smi=$(command -v nvidia-smi || true)
	if [ -e /proc/driver/nvidia/version ] && [ -n "$smi" ] && [ "$(readlink -f "$smi")" != "$SIMDIR/nvidia-smi" ]; then
		[ -z "$sim_asked" ] || fail "$sim_asked is for a node without NVIDIA's driver; this one has it loaded (/proc/driver/nvidia)"
		ngpus=$(nvidia-smi -L | grep -c '^GPU ') || fail "nvidia-smi -L lists no GPU"
		sim=0
		say "node: $ngpus NVIDIA GPU(s) (nvidia-smi -L)"
		[ "$ngpus" -le 16 ] || fail "cgpu_km handles 16 GPUs at most; this node has $ngpus"
	else
		ngpus=$sim_gpus sim=1
		say "node: no NVIDIA driver loaded (/proc/driver/nvidia): installing the simulated GPU, $ngpus x Tesla T4 of $sim_mem MiB"
		standin_can_load
	fi
}

# standin_can_load: nothing here keeps the stand-in driver from loading: it refuses a
# machine with an NVIDIA GPU, and the kernel a second module named nvidia.
standin_can_load() {
	local d
	for d in /sys/bus/pci/devices/*; do
		[ -f "$d/vendor" ] || continue
		if [ "$(cat "$d/vendor")" = 0x10de ] && [[ "$(cat "$d/class")" == 0x03* ]]; then
			fail "an NVIDIA GPU is in this machine (PCI $(basename "$d")) but NVIDIA's driver is not loaded: install NVIDIA's driver; the simulated GPU is for nodes without one"
		fi
	done
	[ ! -d /sys/module/$STANDIN ] || [ -d $STANDIN_PROC ] ||
		fail "a module named $STANDIN is loaded that is not the stand-in driver ($STANDIN_PROC is missing): NVIDIA's driver without nvidia-smi? Install nvidia-smi, or unload it"
}

# The loaded stand-in's options that install.sh sets, as it writes them.
standin_opts() {
	echo "gpus=$(cat /sys/module/$STANDIN/parameters/gpus) mem_mib=$(cat /sys/module/$STANDIN/parameters/mem_mib)"
}

# The files open on the loaded stand-in's nodes: both modules' counts, less nvidia_uvm's
# own hold on nvidia (it uses nvidia's exports).
standin_users() {
	local n
	n=$(cat /sys/module/$STANDIN/refcnt)
	[ ! -d /sys/module/$STANDIN_UVM ] || n=$((n - 1 + $(cat /sys/module/$STANDIN_UVM/refcnt)))
	echo "$n"
}

standin_unload() { { [ ! -d /sys/module/$STANDIN_UVM ] || rmmod $STANDIN_UVM; } && rmmod $STANDIN; }

preflight() {
	local t missing=() other
	for t in jq dkms modprobe depmod make cc cpio; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	[ "$prebuilt" = 1 ] || command -v go >/dev/null || missing+=(go)
	[ ${#missing[@]} -eq 0 ] || fail "missing tools: ${missing[*]} (Debian: scripts/deps.sh installs them)"
	[ -d "/lib/modules/$KVER/build" ] || fail "no kernel headers for the running kernel $KVER: apt-get install linux-headers-$KVER"
	check_source "$repo/kmod"
	version=$(version_of "$repo/kmod")
	[ -z "$built" ] || check_ko "$built" "$version"
	dkms_read
	other=$(dkms_versions | grep -vx "$version" || true)
	[ -z "$other" ] || fail "cgpu_km $(echo $other) is installed: upgrade.sh replaces it (or install.sh --uninstall first)"
	daemon_json_ok
	detect_gpus
	modopts="ngpus=$ngpus$([ "$enforce" = 0 ] || echo " enforce=1")"
	if [ -d /sys/module/$MOD ] && [ "$(loaded_opts)" != "$modopts" ]; then
		refuse_busy "reload cgpu_km with $modopts"
	fi
}

# The loaded cgpu_km's options that install.sh sets, as it writes them.
loaded_opts() {
	local e=/sys/module/$MOD/parameters/enforce
	echo "ngpus=$(cat /sys/module/$MOD/parameters/ngpus)$([ ! -f $e ] || [ "$(cat $e)" = 0 ] || echo " enforce=1")"
}

# --max-channels on a loaded cgpu_km: a run-time setting, no reload (a fresh load takes
# it from the boot options).
set_max_channels() {
	local p=/sys/module/$MOD/parameters/max_channels
	[ -n "$max_channels" ] || return 0
	[ -f $p ] || fail "the loaded cgpu_km has no max_channels parameter"
	if [ "$(cat $p)" = "$max_channels" ]; then
		say "  unchanged  max_channels=$max_channels"
	else
		echo "$max_channels" >$p || fail "cannot set max_channels=$max_channels"
		say "  set        max_channels=$max_channels"
	fi
}

# With --enforce: whether cgpu_km enforces at the NVIDIA driver's boundary, and if not, why.
say_enforcement() {
	local st
	[ "$enforce" = 1 ] || return 0
	st=$(sed -n 's/^enforcement: //p' $PROC/enforcement)
	case "$st" in
	on*) say "  enforcing  at the NVIDIA driver's boundary: $st" ;;
	*) say "  warning    enforcement at the NVIDIA driver is ${st:-unknown}: budgets hold only in processes that run libcgpu (docs/kmod.md)" ;;
	esac
}

build() {
	local f
	if [ "$prebuilt" = 1 ]; then
		for f in bin/docker-cgpu bin/cgpu-runtime libcgpu/build/libcgpu.so sim/build/libcuda.so.1 \
			sim/build/libnvidia-ml.so.1 sim/build/nvidia-smi $([ "$sim" = 0 ] || echo simdrv/$STANDIN.ko simdrv/nvidia-uvm.ko); do
			[ -f "$repo/$f" ] || fail "--prebuilt: $repo/$f is missing: run make first"
		done
		say "using what make built in $repo"
	else
		say "building: make -C $repo go sim libcgpu"
		try "building cgpu (make)" make -C "$repo" go sim libcgpu
		if [ "$sim" = 1 ]; then
			say "building: make -C $repo/simdrv modules (the stand-in driver, for kernel $KVER)"
			try "building the stand-in driver (make -C simdrv)" make -C "$repo/simdrv" modules KDIR="/lib/modules/$KVER/build"
		fi
	fi
	[ "$sim" = 0 ] || { check_standin "$repo/simdrv/$STANDIN.ko" && check_standin "$repo/simdrv/nvidia-uvm.ko"; }
}

# check_standin KO: KO is the stand-in driver, built for the running kernel.
check_standin() {
	local k
	[[ "$(modinfo -F description "$1" 2>/dev/null)" == "cgpu: a stand-in for NVIDIA"* ]] ||
		fail "$1 is not cgpu's stand-in NVIDIA driver (simdrv/)"
	k=$(modinfo -F vermagic "$1" | cut -d' ' -f1)
	[ "$k" = "$KVER" ] || fail "$1 is built for kernel $k, not the running $KVER: make -C simdrv KDIR=/lib/modules/$KVER/build"
}

install_tools() {
	say "installing the tools:"
	put "$repo/bin/docker-cgpu" "$PLUGIN" 755
	put "$repo/bin/cgpu-runtime" "$RUNTIME" 755
	put "$repo/libcgpu/build/libcgpu.so" "$HOOK" 644
}

# The simulated driver stands in for NVIDIA's on the node (in the loader's path and as
# nvidia-smi), and cgpu-runtime binds it into containers.
install_sim() {
	local f smi
	[ "$sim" = 1 ] || return 0
	say "installing the simulated GPU:"
	later "refresh the loader's cache" ldconfig
	changed=0
	put "$repo/sim/build/libcuda.so.1" "$SIMDIR/libcuda.so.1" 644
	put "$repo/sim/build/libnvidia-ml.so.1" "$SIMDIR/libnvidia-ml.so.1" 644
	put "$repo/sim/build/nvidia-smi" "$SIMDIR/nvidia-smi" 755
	echo "$SIMDIR" >"$work/ldconf"
	put "$work/ldconf" "$LDCONF" 644
	[ "$changed" = 0 ] || try "refreshing the loader's cache (ldconfig)" ldconfig
	smi=$(command -v nvidia-smi || true)
	if [ "$(readlink "$SMI_LINK" || true)" = "$SIMDIR/nvidia-smi" ]; then
		say "  unchanged  $SMI_LINK -> $SIMDIR/nvidia-smi"
	elif [ -z "$smi" ]; then
		try "linking $SMI_LINK" ln -s "$SIMDIR/nvidia-smi" "$SMI_LINK"
		later "remove $SMI_LINK" "rm -f $(q "$SMI_LINK")"
		say "  installed  $SMI_LINK -> $SIMDIR/nvidia-smi"
	else
		say "  kept       $smi (another nvidia-smi): the simulated one is $SIMDIR/nvidia-smi"
	fi
	jq -n --argjson n "$ngpus" --argjson mib "$sim_mem" \
		'{sim: true, sim_gpus: $n, sim_mem_mib: $mib, procfs_root: "/proc/cgpu_km"}' >"$work/runtime.json"
	put "$work/runtime.json" "$CONFIG" 644
	install_standin
}

# The stand-in kernel driver, so that containers (cgpu-runtime gives them its nodes) and
# cgpu_km (enforce=1) meet the device nodes and ioctls of NVIDIA's driver. Loaded before
# cgpu_km, now and at boot (modules-load.d reads cgpu-sim.conf before cgpu_km.conf).
install_standin() {
	local opts="gpus=$ngpus mem_mib=$sim_mem" cur i n m uvm again
	say "installing the stand-in NVIDIA driver (simdrv/, modules $STANDIN and $STANDIN_UVM) with $opts:"
	later "refresh the kernel's module index" "depmod -a $KVER"
	changed=0
	put "$repo/simdrv/$STANDIN.ko" "$STANDIN_KO" 644
	put "$repo/simdrv/nvidia-uvm.ko" "$STANDIN_UVM_KO" 644
	[ "$changed" = 0 ] || try "refreshing the kernel's module index (depmod)" depmod -a "$KVER"
	echo "options $STANDIN $opts" >"$work/standin-modprobe.conf"
	put "$work/standin-modprobe.conf" "$STANDIN_MODPROBE" 644
	printf '%s\n' $STANDIN $STANDIN_UVM >"$work/standin-modules-load.conf"
	put "$work/standin-modules-load.conf" "$STANDIN_MODLOAD" 644
	if [ -d $STANDIN_PROC ]; then
		cur=$(standin_opts)
		if [ "$cur" = "$opts" ] && [ "$(cat /sys/module/$STANDIN/srcversion)" = "$(modinfo -F srcversion "$STANDIN_KO")" ] &&
			[ -d /sys/module/$STANDIN_UVM ] &&
			[ "$(cat /sys/module/$STANDIN_UVM/srcversion)" = "$(modinfo -F srcversion "$STANDIN_UVM_KO")" ]; then
			say "  unchanged  $STANDIN and $STANDIN_UVM (the stand-in) are loaded with $opts"
			return
		fi
		n=$(standin_users)
		[ "$n" = 0 ] || fail "the stand-in driver ($cur) is in use ($n open file(s) of /dev/nvidia*): stop the programs that hold them and run again"
		again="modprobe $STANDIN $cur"
		# Only what was loaded is loaded again (a stand-in installed before 2026-12-04 is
		# one module, with no nvidia_uvm).
		[ ! -d /sys/module/$STANDIN_UVM ] || again+=" && modprobe $STANDIN_UVM"
		try "unloading the stand-in driver ($cur)" standin_unload
		later "load the stand-in driver with $cur again" "$again"
	fi
	try "loading the stand-in driver (modprobe $STANDIN $STANDIN_UVM)" modprobe -a $STANDIN $STANDIN_UVM
	later "unload the stand-in driver" "standin_unload"
	[ -d $STANDIN_PROC ] || fail "modprobe $STANDIN loaded another module of that name (NVIDIA's?), not the stand-in in $STANDIN_KO"
	for i in $(seq 1 50); do
		[ -c /dev/nvidiactl ] && [ -c "/dev/nvidia$((ngpus - 1))" ] && break
		sleep 0.1
	done
	uvm=$(awk '$2 == "nvidia-uvm" { print $1; exit }' /proc/devices)
	for i in $(seq 1 50); do [ -c /dev/nvidia-uvm-tools ] && break; sleep 0.1; done
	for n in nvidiactl $(seq -f 'nvidia%g' 0 $((ngpus - 1))) nvidia-uvm nvidia-uvm-tools; do
		m=$STANDIN_MAJOR
		[ "${n#nvidia-uvm}" = "$n" ] || m=$uvm
		[ -n "$m" ] && [ "$(stat -c %F:%t "/dev/$n" 2>/dev/null)" = "character special file:$(printf %x "$m")" ] ||
			fail "the stand-in driver loaded but /dev/$n is not its character device (major ${m:-of nvidia-uvm: none in /proc/devices})"
	done
	say "  loaded     $STANDIN and $STANDIN_UVM (the stand-in) $(cat $STANDIN_PROC/version): /dev/nvidiactl, /dev/nvidia0$([ "$ngpus" = 1 ] || echo "..$((ngpus - 1))") (major $STANDIN_MAJOR), /dev/nvidia-uvm and -tools (major $uvm)"
}

daemon_changed=0
docker_config() {
	local mode=644
	say "registering the cgpu runtime with docker ($DAEMON_JSON):"
	if [ -e "$DAEMON_JSON" ]; then
		if jq -e --arg p "$RUNTIME" '.runtimes.cgpu.path == $p' "$DAEMON_JSON" >/dev/null; then
			say "  unchanged  $DAEMON_JSON (runtimes.cgpu.path is $RUNTIME)"
			return
		fi
		mode=$(stat -c %a "$DAEMON_JSON")
		if [ ! -e "$BACKUP" ]; then
			try "backing up $DAEMON_JSON" cp -a "$DAEMON_JSON" "$BACKUP"
			later "remove $BACKUP" "rm -f $(q "$BACKUP")"
			say "  backup     $BACKUP"
		fi
		jq --arg p "$RUNTIME" '.runtimes.cgpu.path = $p' "$DAEMON_JSON" >"$work/daemon.json"
	else
		jq -n --arg p "$RUNTIME" '{runtimes: {cgpu: {path: $p}}}' >"$work/daemon.json"
	fi
	put "$work/daemon.json" "$DAEMON_JSON" "$mode"
	daemon_changed=1
}

install_module() {
	local src=/usr/src/$MOD-$version
	say "building cgpu_km $version through DKMS for kernel $KVER:"
	stage_source "$repo/kmod" "$work/src"
	if dkms_versions | grep -qx "$version"; then
		diff -r -q "$work/src" "$src" >/dev/null 2>&1 ||
			fail "cgpu_km $version is installed from other sources than $repo/kmod: give the new sources a new version and run upgrade.sh, or install.sh --uninstall first"
		if dkms_installed "$version"; then
			say "  unchanged  $src (built and installed for $KVER)"
		else
			later "uninstall cgpu_km $version from $KVER" "dkms uninstall -m $MOD -v $version -k $KVER"
			[ -z "$built" ] || dkms_take "$version" "$built"
			dkms_make install "$version" "building cgpu_km $version through DKMS for kernel $KVER"
			say "  installed  cgpu_km $version for $KVER"
		fi
		return
	fi
	try "copying the sources to $src" cp -a "$work/src" "$src"
	later "remove $src" "rm -rf $(q "$src")"
	say "  installed  $src"
	try "registering cgpu_km $version with DKMS" dkms add -m $MOD -v "$version"
	later "remove cgpu_km $version from DKMS" "dkms remove -m $MOD -v $version --all"
	if [ -n "$built" ]; then
		dkms_take "$version" "$built"
	else
		say "  building   (this takes a while)"
	fi
	dkms_make install "$version" "building cgpu_km $version through DKMS for kernel $KVER"
	say "  installed  /lib/modules/$KVER/updates/dkms/$MOD.ko"
}

boot_config() {
	local opts="$modopts${max_channels:+ max_channels=$max_channels}"
	say "loading cgpu_km at boot with $opts:"
	echo "options $MOD $opts" >"$work/modprobe.conf"
	put "$work/modprobe.conf" "$MODPROBE_CONF" 644
	echo "$MOD" >"$work/modules-load.conf"
	put "$work/modules-load.conf" "$MODLOAD_CONF" 644
}

load_module() {
	local cur i
	say "loading cgpu_km:"
	if [ -d /sys/module/$MOD ]; then
		cur=$(loaded_opts)
		if [ "$cur" = "$modopts" ]; then
			say "  unchanged  cgpu_km $(cat $PROC/version) is loaded with $modopts"
			[ "$(cat /sys/module/$MOD/srcversion)" = "$(modinfo -F srcversion $MOD)" ] ||
				say "  note: the loaded cgpu_km is not the one DKMS installed; upgrade.sh replaces it"
			set_max_channels
			say_enforcement
			return
		fi
		try "unloading cgpu_km ($cur)" rmmod $MOD
		later "load cgpu_km with $cur again" "modprobe $MOD $cur"
	fi
	try "loading cgpu_km (modprobe $MOD)" modprobe $MOD
	later "unload cgpu_km" "rmmod $MOD"
	for i in $(seq 1 50); do
		[ -c /dev/cgpu ] && break
		sleep 0.1
	done
	[ -c /dev/cgpu ] || fail "cgpu_km loaded but /dev/cgpu did not appear"
	[ "$(cat $PROC/version)" = "$version" ] || fail "the loaded cgpu_km says version $(cat $PROC/version), not $version"
	say "  loaded     cgpu_km $version: $(ls -d $PROC/[0-9]* | wc -l) GPU(s) in $PROC, /dev/cgpu major $(cat $PROC/0/major)"
	say_enforcement
}

docker_reload() {
	say "docker:"
	if [ "$restart" = 1 ]; then
		if [ "$daemon_changed" = 0 ] && docker_lists_cgpu; then
			say "  unchanged  docker lists the cgpu runtime"
			return
		fi
		last "restart docker with its old configuration" restart_docker
		say "  restarting docker"
		try "restarting docker" restart_docker
		docker_lists_cgpu || fail "docker restarted but does not list the cgpu runtime (see its log)"
		say "  restarted  docker lists the cgpu runtime"
	elif docker_lists_cgpu; then
		say "  docker lists the cgpu runtime"
	elif "${DOCKER[@]}" version >/dev/null 2>&1; then
		say "  reload docker so that it knows the cgpu runtime (running containers keep running):"
		say "    systemctl reload docker    (or: kill -HUP \$(pidof dockerd); or install.sh --restart-docker)"
	else
		say "  docker is not running; it will know the cgpu runtime when it starts"
	fi
}

do_install() {
	preflight
	build
	install_tools
	install_sim
	docker_config
	install_module
	boot_config
	load_module
	docker_reload
	say "done: cgpu $version on $ngpus $([ "$sim" = 1 ] && echo simulated) GPU(s)"
	say "try:  docker cgpu run --rm --gpu-mem 1 IMAGE nvidia-smi    (docs/install.md)"
}

do_uninstall() {
	local v new n
	nothing_undone="what is removed stays removed: fix the cause and run install.sh --uninstall again"
	refuse_busy "uninstall cgpu"
	if [ -d $STANDIN_PROC ]; then
		n=$(standin_users)
		[ "$n" = 0 ] || { echo "$me: refusing to uninstall cgpu while the stand-in driver is in use ($n open file(s) of /dev/nvidia*): stop the programs that hold them" >&2; exit 1; }
	fi
	daemon_json_ok
	dkms_read
	say "removing cgpu from this node:"
	if [ -d /sys/module/$MOD ]; then
		try "unloading cgpu_km" rmmod $MOD
		say "  unloaded   cgpu_km (and /dev/cgpu)"
	fi
	for v in $(dkms_versions); do
		try "removing cgpu_km $v from DKMS" dkms remove -m $MOD -v "$v" --all
		say "  removed    cgpu_km $v from DKMS"
		remove "/usr/src/$MOD-$v"
	done
	rmdirs "/lib/modules/$KVER/updates/dkms" "/lib/modules/$KVER/updates"
	remove "$MODPROBE_CONF" "$MODLOAD_CONF"
	if [ -d $STANDIN_PROC ]; then
		try "unloading the stand-in driver" standin_unload
		say "  unloaded   $STANDIN and $STANDIN_UVM (the stand-in driver, and /dev/nvidia*)"
	fi
	if [ -e "$STANDIN_KO" ] || [ -e "$STANDIN_UVM_KO" ]; then
		remove "$STANDIN_KO" "$STANDIN_UVM_KO"
		rmdirs "$STANDIN_DIR" "$(dirname "$STANDIN_DIR")"
		try "refreshing the kernel's module index (depmod)" depmod -a "$KVER"
	fi
	remove "$STANDIN_MODPROBE" "$STANDIN_MODLOAD"
	if [ -e "$DAEMON_JSON" ] && jq -e '.runtimes | has("cgpu")' "$DAEMON_JSON" >/dev/null 2>&1; then
		new=$(jq 'del(.runtimes.cgpu) | if .runtimes == {} then del(.runtimes) else . end' "$DAEMON_JSON")
		if [ "$new" = "{}" ] && [ ! -e "$BACKUP" ]; then
			remove "$DAEMON_JSON"
		else
			echo "$new" >"$DAEMON_JSON.cgpu-new"
			chmod --reference="$DAEMON_JSON" "$DAEMON_JSON.cgpu-new"
			try "writing $DAEMON_JSON" mv -f "$DAEMON_JSON.cgpu-new" "$DAEMON_JSON"
			say "  removed    runtimes.cgpu from $DAEMON_JSON (its other settings kept)"
		fi
		daemon_changed=1
	fi
	remove "$BACKUP"
	remove "$PLUGIN" "$RUNTIME" "$HOOK" "$SIMDIR" "$CONFIG" "$(dirname "$SIM_STATE")" "$SIM_TREE"
	if [ -e "$LDCONF" ]; then
		remove "$LDCONF"
		try "refreshing the loader's cache (ldconfig)" ldconfig
	fi
	[ "$(readlink "$SMI_LINK" || true)" != "$SIMDIR/nvidia-smi" ] || remove "$SMI_LINK"
	rmdirs "$LIBDIR" /usr/local/lib/docker/cli-plugins /usr/local/lib/docker /etc/cgpu
	if [ "$daemon_changed" = 1 ] && [ "$restart" = 1 ]; then
		try "restarting docker" restart_docker
		say "  restarted  docker"
	elif [ "$daemon_changed" = 1 ] && "${DOCKER[@]}" version >/dev/null 2>&1; then
		say "  reload docker so that it forgets the cgpu runtime: systemctl reload docker"
	fi
	say "done: cgpu is removed"
}

"do_$action"
