#!/usr/bin/env bash
# cgpu_km's files call downward only (docs/kmod.md, "Layers"), so no cycle can come
# back unnoticed. The calls are taken from the module's own objects (make -C kmod):
# an object's undefined symbol that another of them defines. Fails on a call to the
# same or a higher layer, and on an object Kbuild links that the layers do not place.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s modules >/dev/null

layers=$(awk '/^## Layers/ { f = 1 } f && /^```/ { n++; next } f && n == 1 { print } n == 2 { exit }' \
	../docs/kmod.md | sed 's/#.*//')
objs=$(sed -n '/^cgpu_km-y/,/[^\\]$/p' Kbuild | sed 's/^cgpu_km-y *:=//; s/\\//g')
[ -n "$layers" ] && [ -n "$objs" ] || { echo "layers: no layer list in docs/kmod.md or no objects in Kbuild" >&2; exit 1; }

{
	echo "$layers" | awk '{ for (i = 1; i <= NF; i++) print "L", $i, NR }'
	for o in $objs; do
		c=${o%.o}.c
		echo "O $c"
		nm -P --defined-only "$o" | awk -v c="$c" '$2 ~ /^[A-TV-Z]$/ { print "D", $1, c }'
		nm -P --undefined-only "$o" | awk -v c="$c" '{ print "U", $1, c }'
	done
} | awk '
	$1 == "L" { layer[$2] = $3; next }
	$1 == "O" { obj[++n] = $2; next }
	$1 == "D" { def[$2] = $3; next }
	$1 == "U" { use[++m] = $2 " " $3 }
	END {
		for (i = 1; i <= n; i++)
			if (!(obj[i] in layer)) {
				print "layers: " obj[i] " is linked into cgpu_km but has no layer in docs/kmod.md"
				bad = 1
			}
		for (i = 1; i <= m; i++) {
			split(use[i], u, " ")
			if (!(u[1] in def))
				continue
			to = def[u[1]]
			calls++
			if (u[2] in layer && to in layer && layer[to] <= layer[u[2]]) {
				print "layers: " u[2] " uses " u[1] " of " to ", which is not below it"
				bad = 1
			}
		}
		if (bad)
			exit 1
		printf "layers: %d uses across %d files, all downward\n", calls, n
	}'
