#!/usr/bin/env bash
# Cold update of cgpu_km (docs/install.md, "Upgrade"): while no container uses cgpu,
# builds the module of this tree (or --source DIR) through DKMS, unloads the installed
# one, loads the new one with the same GPU count and settings, checks its version, and
# makes it the one loaded at boot. A failed step puts the old module back.
set -Eeuo pipefail
me=upgrade.sh
repo=$(cd "$(dirname "$0")" && pwd)

usage() {
	cat >&2 <<EOT
usage: upgrade.sh [--source KMOD_DIR]
  As root, with every cGPU container stopped: replaces the installed cgpu_km by the
  module in KMOD_DIR (default: this tree's kmod/), which must carry another version.
  GPU settings (policy, max_inst, prio_ratio, default_memsize) carry over.
EOT
	exit 2
}

src=$repo/kmod
while [ $# -gt 0 ]; do
	case "$1" in
	--source) src=${2-}; shift 2 || usage ;;
	*) usage ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "$me: must run as root" >&2; exit 1; }
[ -f "$src/dkms.conf" ] || { echo "$me: $src has no dkms.conf: not cgpu_km's sources" >&2; exit 1; }
src=$(cd "$src" && pwd)

work=$(mktemp -d /tmp/cgpu-upgrade.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/cgpu-lib.sh
source "$repo/scripts/cgpu-lib.sh"
trap 'fail "unexpected error at line $LINENO: $BASH_COMMAND"' ERR

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

refuse_busy "replace cgpu_km"
dkms_read
old=$(dkms_versions)
[ -n "$old" ] || fail "cgpu_km is not installed through DKMS: run install.sh"
[ "$(echo "$old" | wc -l)" = 1 ] || fail "several cgpu_km versions are in DKMS ($(echo $old)): install.sh --uninstall, then install.sh"
check_source "$src"
new=$(version_of "$src")
[ "$new" != "$old" ] || fail "cgpu_km $old is installed already: the new sources need another version (PACKAGE_VERSION in dkms.conf and CGPU_KM_VERSION in cgpu.h)"
if [ -d /sys/module/$MOD ]; then
	ngpus=$(cat /sys/module/$MOD/parameters/ngpus)
else
	ngpus=$(sed -n "s/^options $MOD ngpus=\([0-9]*\)$/\1/p" "$MODPROBE_CONF" 2>/dev/null || true)
	[ -n "$ngpus" ] || fail "cgpu_km is not loaded and $MODPROBE_CONF gives no ngpus: run install.sh"
fi
save_settings
say "upgrading cgpu_km $old to $new ($ngpus GPU(s), kernel $KVER)"

say "building cgpu_km $new through DKMS (this takes a while):"
stage_source "$src" "$work/src"
try "copying the sources to /usr/src/$MOD-$new" cp -a "$work/src" "/usr/src/$MOD-$new"
later "remove /usr/src/$MOD-$new" "rm -rf $(q "/usr/src/$MOD-$new")"
try "registering cgpu_km $new with DKMS" dkms add -m $MOD -v "$new"
later "remove cgpu_km $new from DKMS" "dkms remove -m $MOD -v $new --all"
dkms_make build "$new" "building cgpu_km $new; cgpu_km $old stays"
ko=$(find "/var/lib/dkms/$MOD/$new/$KVER" -name "$MOD.ko*" | head -1)
[ -n "$ko" ] || fail "DKMS built no $MOD.ko for $new"
say "  built      $ko"

say "replacing the loaded module:"
if [ -d /sys/module/$MOD ]; then
	try "unloading cgpu_km $old" rmmod $MOD
	later "load cgpu_km $old again, with its settings" "modprobe $MOD ngpus=$ngpus && restore_settings"
	say "  unloaded   cgpu_km $old"
fi
try "loading cgpu_km $new" insmod "$ko" ngpus="$ngpus"
later "unload cgpu_km $new" "rmmod $MOD"
got=$(cat "$PROC/version")
[ "$got" = "$new" ] || fail "the new module says version $got, not $new"
try "giving cgpu_km $new the old settings" restore_settings
say "  loaded     cgpu_km $got ($PROC/version), settings carried over"

say "making cgpu_km $new the one loaded at boot:"
try "removing cgpu_km $old from DKMS" dkms remove -m $MOD -v "$old" --all
later "install cgpu_km $old again" "dkms add -m $MOD -v $old && dkms install -m $MOD -v $old -k $KVER"
try "installing cgpu_km $new" dkms install -m $MOD -v "$new" -k "$KVER"
remove "/usr/src/$MOD-$old"
say "done: cgpu_km $new is loaded and installed"
