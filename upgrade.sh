#!/usr/bin/env bash
# Replaces the loaded cgpu_km (docs/upgrade.md). Cold (the default): while no container
# uses cgpu, builds the module of this tree (or --source DIR) through DKMS, unloads the
# installed one, loads the new one with the same GPU count and settings, checks its
# version, and makes it the one loaded at boot. Hot (--hot): containers keep running; the
# old module hands its state (settings, instances, every process's charges) over to the
# new one through /proc/cgpu_km/upgrade, refused before anything changes when the new
# module cannot take it. A failed step puts the old module back, with its state.
set -Eeuo pipefail
me=upgrade.sh
repo=$(cd "$(dirname "$0")" && pwd)

usage() {
	cat >&2 <<EOT
usage: upgrade.sh [--check] [--hot [--timeout S]] [--source KMOD_DIR [--built KO] | --ko FILE]
  As root: replaces the loaded cgpu_km by the module in KMOD_DIR (default: this tree's
  kmod/), built through DKMS, which must carry another version.
  cold (default)  every cGPU container must be stopped first; GPU settings (policy,
                  max_inst, prio_ratio, default_memsize) carry over
  --hot           containers keep running: the old module's state (settings, instances,
                  what each process holds) moves to the new one; processes pause for the
                  moment of the switch. Refused, changing nothing, when the new module
                  cannot read the old one's state or does not serve the /dev/cgpu ABI in use
  --timeout S     hot: how long processes get to let go of the old module (default 30)
  --check         check what can be checked while containers still run (the arguments,
                  the new module's version and kernel, the old module to fall back to;
                  hot with --ko: whether the new module can take the state over), say
                  what would be done, and change nothing; a cold update's check that
                  no container uses cgpu is left to the update itself
  --built KO      DKMS takes KO, cgpu_km.ko as \`make\` built it from KMOD_DIR for the
                  running kernel, instead of compiling the same sources
  --ko FILE       load FILE, a cgpu_km.ko built for the running kernel (make -C kmod),
                  instead of building through DKMS; DKMS and the module loaded at boot
                  stay as they are
EOT
	exit 2
}

src=$repo/kmod hot=0 ko= built= timeout=30 check=0
while [ $# -gt 0 ]; do
	case "$1" in
	--source) src=${2-}; shift 2 || usage ;;
	--ko) ko=${2-}; shift 2 || usage ;;
	--built) built=${2-}; shift 2 || usage ;;
	--hot) hot=1; shift ;;
	--check) check=1; shift ;;
	--timeout) timeout=${2-}; shift 2 || usage ;;
	*) usage ;;
	esac
done
[[ "$timeout" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "$me: --timeout $timeout: want 1..9999 seconds" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "$me: must run as root" >&2; exit 1; }
[ -z "$ko" ] || [ -z "$built" ] || usage
if [ -n "$built" ]; then
	[ -f "$built" ] || { echo "$me: --built $built: no such file" >&2; exit 1; }
	built=$(cd "$(dirname "$built")" && pwd)/$(basename "$built")
fi
if [ -n "$ko" ]; then
	[ -f "$ko" ] || { echo "$me: --ko $ko: no such file" >&2; exit 1; }
	ko=$(cd "$(dirname "$ko")" && pwd)/$(basename "$ko")
else
	[ -f "$src/dkms.conf" ] || { echo "$me: $src has no dkms.conf: not cgpu_km's sources" >&2; exit 1; }
	src=$(cd "$src" && pwd)
fi

work=$(mktemp -d /tmp/cgpu-upgrade.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/cgpu-lib.sh
source "$repo/scripts/cgpu-lib.sh"
trap 'fail "unexpected error at line $LINENO: $BASH_COMMAND"' ERR
trap 'fail "interrupted"' INT TERM

# A copy of the module file upgrade.sh --ko loaded last: the one to fall back to.
LOADED_KO=$SIM_TREE/cgpu_km.ko
# Where a hot update keeps the old module's state until it is over.
STATE_FILE=$SIM_TREE/hot-update.state

# The settings an operator may have changed, as "FILE VALUE" lines, to give the new module.
save_settings() {
	local f
	: >"$work/settings"
	[ -d "$PROC" ] || return 0
	for f in "$PROC/default_memsize" "$PROC"/[0-9]*/max_inst "$PROC"/[0-9]*/policy "$PROC"/[0-9]*/prio_ratio; do
		echo "$f $(cat "$f")" >>"$work/settings"
	done
}

restore_settings() {
	local f v
	while read -r f v; do
		[ "$(cat "$f")" = "$v" ] || echo "$v" >"$f"
	done <"$work/settings"
}

status() { sed -n "s/^$1: //p" "$PROC/upgrade"; }

# in_range "A-B" N: A <= N <= B.
in_range() { [ -n "$1" ] && [ "${1%-*}" -le "$2" ] && [ "$2" -le "${1#*-}" ]; }

# loaded_file: the file of the loaded module (same srcversion), to load again if the new
# one fails: the copy upgrade.sh keeps of a --ko module, or the installed one.
loaded_file() {
	local want f
	want=$(cat /sys/module/$MOD/srcversion 2>/dev/null) || return 0
	for f in "$LOADED_KO" "$(modinfo -n $MOD 2>/dev/null || true)"; do
		if [ -f "$f" ] && [ "$(modinfo -F srcversion "$f" 2>/dev/null)" = "$want" ]; then
			echo "$f"
			return
		fi
	done
}

# cur_param P: the loaded module's parameter P, else $MODPROBE_CONF's (install.sh's); "" if neither.
cur_param() {
	if [ -d /sys/module/$MOD ]; then
		cat "/sys/module/$MOD/parameters/$1" 2>/dev/null || true
	else
		sed -n "s/^options $MOD .*\b$1=\([^ ]*\).*$/\1/p" "$MODPROBE_CONF" 2>/dev/null || true
	fi
}

# params KO: the current parameters (cur_param) that KO also has, for loading KO.
params() {
	local p v out="ngpus=$ngpus" known
	known=$(modinfo -F parm "$1" | cut -d: -f1)
	for p in quantum_us grace_ms reclaim_s enforce nv_version max_channels; do
		v=$(cur_param $p)
		if [ -n "$v" ] && [ "$p=$v" != enforce=0 ] && grep -qx "$p" <<<"$known"; then
			out+=" $p=$v"
		fi
	done
	echo "$out"
}

# compatible KO: refuses (nothing changed yet) a module that cannot take the loaded one's
# state over: it must read its state format and serve every /dev/cgpu ABI version in use.
compatible() {
	local reads abi fmt in_use v
	reads=$(modinfo -F cgpu_state_reads "$1")
	abi=$(modinfo -F cgpu_abi "$1")
	fmt=$(status state_format)
	in_use=$(status abi_in_use)
	[ -n "$reads" ] || fail "refusing the hot update: cgpu_km $new cannot take a running module's state over (it has no cgpu_state_reads in modinfo); stop the containers and upgrade cold"
	in_range "$reads" "$fmt" ||
		fail "refusing the hot update: cgpu_km $new reads state formats $reads, cgpu_km $old writes format $fmt; stop the containers and upgrade cold (docs/upgrade.md)"
	for v in ${in_use/none/}; do
		in_range "$abi" "$v" ||
			fail "refusing the hot update: cgpu_km $new serves /dev/cgpu ABI $abi, running processes use ABI $v; stop the containers and upgrade cold (docs/upgrade.md)"
	done
	say "  compatible cgpu_km $new reads state format $fmt (it reads $reads) and serves ABI ${in_use/none/-} (it serves $abi)"
}

# give_state FILE: writes the state, one line per write, into a module loaded with
# handover=1, and commits it.
give_state() {
	local line
	while IFS= read -r line; do
		echo "$line" >"$PROC/upgrade" || { echo "the module refused: $line" >&2; return 1; }
	done <"$1"
	echo commit >"$PROC/upgrade"
}

# reload KO FILE: KO loaded again with the state in FILE (the fall-back of a hot update),
# with the parameters it had.
reload() { insmod "$1" $old_params handover=1 major="$major" && give_state "$2"; }

# count PATTERN FILE: lines matching.
count() { grep -c "$1" "$2" || true; }

# wait_files: until no process holds /dev/cgpu of the frozen module, at most $timeout s.
wait_files() {
	local i n=
	for ((i = 0; i < timeout * 5; i++)); do
		n=$(status files_open)
		[ "$n" = 0 ] && return 0
		[ $((i % 25)) != 0 ] || say "  waiting    for $n file(s) of /dev/cgpu to close"
		sleep 0.2
	done
	say "  still open after ${timeout}s:"
	holders | sed 's/^/    /'
	return 1
}

# Under enforce=1 nothing charges the NVIDIA driver's allocations from the old module's
# unload until the new one has the state (commit), so no task of a container may run in
# between: freeze_containers freezes each cgroup the frozen module has a container bound
# to (its container_cgroup lines: the kernel's own binding, not a name) with cgroup v2's
# freezer, which no task inside can lift, and thaw_containers lets them run once a module
# charges again. A cgroup frozen already (docker pause) is left alone, and stays frozen.
frozen_cgroups=()
enforcing() { [[ "$(sed -n 's/^enforcement: //p' "$PROC/enforcement" 2>/dev/null)" == on* ]]; }
freeze_containers() {
	local kind path dir i root
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	while read -r kind path; do
		[ "$kind" = v2 ] && [ -n "$root" ] ||
			fail "cannot freeze the container in cgroup $path for the switch: enforce=1 needs cgroup v2's freezer for a hot update; stop the containers and upgrade cold"
		dir=$root$path
		# A cgroup removed since (its container gone, its charges not yet) holds no task.
		[[ "$path" != /* || "$path" == *\\* || -d "$dir" ]] || continue
		[[ "$path" == /* && "$path" != *\\* && -f "$dir/cgroup.freeze" ]] ||
			fail "cannot freeze the container in cgroup $path for the switch (no $dir/cgroup.freeze)"
		[ "$(cat "$dir/cgroup.freeze")" = 0 ] || continue
		echo 1 >"$dir/cgroup.freeze"
		frozen_cgroups+=("$dir")
	done < <(sed -n 's/^container_cgroup: //p' "$PROC/upgrade")
	for dir in "${frozen_cgroups[@]}"; do
		for ((i = 0; i < timeout * 10; i++)); do
			grep -qx 'frozen 1' "$dir/cgroup.events" && continue 2
			sleep 0.1
		done
		fail "the container in $dir did not freeze within ${timeout}s"
	done
}
thaw_containers() {
	local dir
	for dir in "${frozen_cgroups[@]}"; do echo 0 >"$dir/cgroup.freeze"; done
	frozen_cgroups=()
}

# rmmod_retry: a process that tries to attach at that moment holds the module briefly.
rmmod_retry() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		rmmod $MOD 2>"$work/rmmod" && return 0
		sleep 0.2
	done
	cat "$work/rmmod" >&2
	return 1
}

# The module being replaced, and the one replacing it.
[ -d /sys/module/$MOD ] || [ "$hot" = 0 ] ||
	fail "cgpu_km is not loaded: there is nothing to update hot (a cold update loads it)"
[ -d /sys/module/$MOD ] || [ -z "$ko" ] || fail "--ko replaces the loaded cgpu_km, and none is loaded"
if [ "$hot" = 1 ]; then
	st=$(status state)
	[ -n "$st" ] || fail "cgpu_km $(cat "$PROC/version") cannot hand its state over (it has no hot update): stop the containers and upgrade cold"
	[ "$st" = running ] || fail "a hot update of cgpu_km is under way already ($PROC/upgrade: state $st)"
elif [ "$check" = 0 ]; then
	refuse_busy "replace cgpu_km"
fi
if [ -n "$ko" ]; then
	old=$(cat "$PROC/version")
	check_ko "$ko"
	new=$(modinfo -F version "$ko")
else
	dkms_read
	old=$(dkms_versions)
	[ -n "$old" ] || fail "cgpu_km is not installed through DKMS: run install.sh"
	[ "$(echo "$old" | wc -l)" = 1 ] || fail "several cgpu_km versions are in DKMS ($(echo $old)): install.sh --uninstall, then install.sh"
	check_source "$src"
	new=$(version_of "$src")
	[ -z "$built" ] || check_ko "$built" "$new"
fi
[ "$new" != "$old" ] || fail "cgpu_km $old is installed already: the new sources need another version (PACKAGE_VERSION in dkms.conf)"
if [ -d /sys/module/$MOD ]; then
	ngpus=$(cat /sys/module/$MOD/parameters/ngpus)
	old_ko=$(loaded_file)
	[ -n "$old_ko" ] || fail "cannot find the file of the loaded cgpu_km $old (srcversion $(cat /sys/module/$MOD/srcversion)) to fall back to; it was loaded by hand: load it again with install.sh or upgrade.sh --ko"
	cp "$old_ko" "$work/old.ko"
	old_ko=$work/old.ko
else
	ngpus=$(sed -n "s/^options $MOD ngpus=\([0-9]*\)\( .*\)\{0,1\}$/\1/p" "$MODPROBE_CONF" 2>/dev/null || true)
	[ -n "$ngpus" ] || fail "cgpu_km is not loaded and $MODPROBE_CONF gives no ngpus: run install.sh"
	old_ko=
fi
if [ "$check" = 1 ]; then
	if [ "$hot" = 1 ] && [ -n "$ko" ]; then
		compatible "$ko"
	elif [ "$hot" = 1 ]; then
		say "  (whether cgpu_km $new can take the state over is checked once DKMS has built it)"
	fi
	say "check passed: cgpu_km $old would be replaced by $new ($ngpus GPU(s), kernel $KVER, $([ "$hot" = 1 ] && echo hot || echo cold)); nothing was changed"
	exit 0
fi
[ "$hot" = 1 ] || save_settings
say "upgrading cgpu_km $old to $new ($ngpus GPU(s), kernel $KVER, $([ "$hot" = 1 ] && echo hot || echo cold))"

if [ -z "$ko" ]; then
	say "building cgpu_km $new through DKMS$([ -n "$built" ] || echo ' (this takes a while)'):"
	stage_source "$src" "$work/src"
	try "copying the sources to /usr/src/$MOD-$new" cp -a "$work/src" "/usr/src/$MOD-$new"
	later "remove /usr/src/$MOD-$new" "rm -rf $(q "/usr/src/$MOD-$new")"
	try "registering cgpu_km $new with DKMS" dkms add -m $MOD -v "$new"
	later "remove cgpu_km $new from DKMS" "dkms remove -m $MOD -v $new --all"
	if [ -n "$built" ]; then
		dkms_take "$new" "$built"
	else
		dkms_make build "$new" "building cgpu_km $new; cgpu_km $old stays"
	fi
	ko=$(find "/var/lib/dkms/$MOD/$new/$KVER" -name "$MOD.ko*" | head -1)
	[ -n "$ko" ] || fail "DKMS built no $MOD.ko for $new"
	say "  built      $ko"
	from_dkms=1
else
	from_dkms=0
fi

# enforce=1 carries over (params): a module without it is refused rather than loaded
# without the enforcement the node was set up with.
if [ "$(cur_param enforce)" = 1 ] && ! modinfo -F parm "$ko" | grep -q '^enforce:'; then
	fail "cgpu_km $new has no enforce parameter, and cgpu_km runs with enforce=1 (install.sh --enforce)"
fi

if [ "$hot" = 1 ]; then
	say "checking that cgpu_km $new can take the state over:"
	compatible "$ko"
	major=$(status major)
	old_params=$(params "$old_ko") new_params=$(params "$ko")
	say "handing the state of cgpu_km $old over:"
	try "freezing cgpu_km $old" sh -c "echo freeze to=$new >$PROC/upgrade"
	later "let cgpu_km $old run on (thaw)" "echo thaw >$PROC/upgrade"
	say "  frozen     cgpu_km $old: processes hand their charges over and close /dev/cgpu"
	wait_files || fail "processes did not let go of cgpu_km $old within ${timeout}s (stopped? not using libcgpu?)"
	mkdir -p "$SIM_TREE"
	sed -n '/^format /,$p' "$PROC/upgrade" >"$STATE_FILE"
	later "remove $STATE_FILE" "rm -f $(q "$STATE_FILE")"
	say "  saved      the state: $(count '^add ' "$STATE_FILE") instance(s), $(count '^charge ' "$STATE_FILE") process charge(s) ($STATE_FILE)"
	if enforcing; then
		later "thaw the containers' cgroups" thaw_containers
		freeze_containers
		say "  froze      ${#frozen_cgroups[@]} container cgroup(s) until cgpu_km $new charges the driver's allocations"
	fi
	try "unloading cgpu_km $old" rmmod_retry
	unlater "let cgpu_km $old run on (thaw)"
	later "load cgpu_km $old again, with the state" "reload $(q "$old_ko") $(q "$STATE_FILE")"
	say "  unloaded   cgpu_km $old"
	try "loading cgpu_km $new ($ko) for the hot update" insmod "$ko" $new_params handover=1 major="$major"
	later "unload cgpu_km $new" "rmmod $MOD"
	got=$(cat "$PROC/version")
	[ "$got" = "$new" ] || fail "the new module says version $got, not $new"
	try "giving cgpu_km $new the state" give_state "$STATE_FILE"
	unlater "unload cgpu_km $new"
	unlater "load cgpu_km $old again, with the state"
	if [ ${#frozen_cgroups[@]} -gt 0 ]; then
		say "  thawed     ${#frozen_cgroups[@]} container cgroup(s)"
		thaw_containers
	fi
	unlater "thaw the containers' cgroups"
	say "  loaded     cgpu_km $got ($PROC/version) with the state; processes attach again"
	# Under enforcement a reservation is what the process holds at the driver: kept while
	# it (or a child) holds a driver file, never taken back, so there is nothing to wait
	# for (docs/upgrade.md, "Reclaim").
	if enforcing; then
		say "  kept       $(status reservations) reservation(s) of $(status reserved_bytes) bytes and $(status reserved_channels) channel(s), while their processes hold driver files"
	else
		for i in $(seq 1 50); do
			[ "$(status reservations)" = 0 ] && break
			sleep 0.2
		done
		say "  attached   $(status reservations) reservation(s) not taken back yet (released after $(status reclaim_s)s unless their process attaches)"
	fi
	rm -f "$STATE_FILE"
	unlater "remove $STATE_FILE"
	# From here the new module runs with everyone's state: a later failure leaves it so.
	after_undo="cgpu_km $new runs with every container's state; DKMS is as it was"
else
	say "replacing the loaded module:"
	new_params=$(params "$ko")
	if [ -d /sys/module/$MOD ]; then
		old_params=$(params "$old_ko")
		try "unloading cgpu_km $old" rmmod $MOD
		later "load cgpu_km $old again, with its settings" "insmod $(q "$old_ko") $old_params && restore_settings"
		say "  unloaded   cgpu_km $old"
	fi
	try "loading cgpu_km $new ($new_params)" insmod "$ko" $new_params
	later "unload cgpu_km $new" "rmmod $MOD"
	got=$(cat "$PROC/version")
	[ "$got" = "$new" ] || fail "the new module says version $got, not $new"
	try "giving cgpu_km $new the old settings" restore_settings
	say "  loaded     cgpu_km $got ($PROC/version), settings carried over"
fi

if [ "$from_dkms" = 1 ]; then
	say "making cgpu_km $new the one loaded at boot:"
	try "removing cgpu_km $old from DKMS" dkms remove -m $MOD -v "$old" --all
	later "install cgpu_km $old again" "dkms add -m $MOD -v $old && dkms install -m $MOD -v $old -k $KVER"
	try "installing cgpu_km $new" dkms install -m $MOD -v "$new" -k "$KVER"
	remove "/usr/src/$MOD-$old"
	rm -f "$LOADED_KO"
	say "done: cgpu_km $new is loaded and installed"
else
	mkdir -p "$SIM_TREE"
	cp "$ko" "$LOADED_KO"
	say "done: cgpu_km $new is loaded from $ko; the module loaded at boot (DKMS) is unchanged"
fi
