#!/usr/bin/env bash
# variants.sh OUT: builds, on the host, the cgpu_km modules the update tests load
# (docs/upgrade.md), each from a copy of kmod/ with the next patch versions:
#   OUT/next/cgpu_km.ko          VER+1, the same module: a compatible update
#   OUT/incompatible/cgpu_km.ko  VER+2, make STATE_FORMAT=6: reads no other format
#   OUT/fault/cgpu_km.ko         VER+3, make FAULT=init: its load fails at the end
# and prints "NAME VERSION" for each. `variants.sh OUT NAME...` builds only those. A
# variant whose sources did not change since its last build is not built again: the
# suites that load them share OUT, and each module is built once per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
me=variants
source scripts/cgpu-lib.sh
ver=$(version_of kmod)
i=0
for v in next: incompatible:STATE_FORMAT=6 fault:FAULT=init; do
	name=${v%%:*} flag=${v#*:} i=$((i + 1))
	[ $# = 0 ] || [[ " $* " == *" $name "* ]] || continue
	nv=$(awk -F. -v n=$i '{print $1 "." $2 "." $3 + n}' <<<"$ver")
	rm -rf "${out:?}/.new"
	stage_source kmod "$out/.new"
	sed -i "s/\"$ver\"/\"$nv\"/" "$out/.new/dkms.conf"
	mkdir -p "$out/.src"
	if [ -f "$out/$name/cgpu_km.ko" ] && [ "$(cat "$out/.src/$name.flag" 2>/dev/null)" = "$flag" ] &&
		diff -r -q "$out/.new" "$out/.src/$name" >/dev/null 2>&1; then
		rm -rf "${out:?}/.new"
	else
		rm -rf "${out:?}/$name" "${out:?}/.src/$name" "$out/.src/$name.flag"
		cp -a "$out/.new" "$out/.src/$name"
		mv "$out/.new" "$out/$name"
		make -s -C "$out/$name" $flag >"$out/$name.log" 2>&1 || { cat "$out/$name.log" >&2; exit 1; }
		echo "$flag" >"$out/.src/$name.flag"
	fi
	echo "$name $nv"
done
