#!/usr/bin/env bash
# variants.sh OUT: builds, on the host, the cgpu_km modules the update tests load
# (docs/upgrade.md), each from a copy of kmod/ with the next patch versions:
#   OUT/next/cgpu_km.ko          VER+1, the same module: a compatible update
#   OUT/incompatible/cgpu_km.ko  VER+2, make STATE_FORMAT=3: reads no other format
#   OUT/fault/cgpu_km.ko         VER+3, make FAULT=init: its load fails at the end
# and prints "NAME VERSION" for each.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p "$1"
out=$(cd "$1" && pwd)
me=variants
source scripts/cgpu-lib.sh
ver=$(version_of kmod)
i=0
for v in next: incompatible:STATE_FORMAT=3 fault:FAULT=init; do
	name=${v%%:*} flag=${v#*:} i=$((i + 1))
	nv=$(awk -F. -v n=$i '{print $1 "." $2 "." $3 + n}' <<<"$ver")
	rm -rf "${out:?}/$name"
	stage_source kmod "$out/$name"
	sed -i "s/\"$ver\"/\"$nv\"/" "$out/$name/dkms.conf" "$out/$name/cgpu.h"
	make -s -C "$out/$name" $flag >"$out/$name.log" 2>&1 || { cat "$out/$name.log" >&2; exit 1; }
	echo "$name $nv"
done
