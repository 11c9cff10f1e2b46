#!/usr/bin/env bash
# What libcuda asks of NVIDIA's driver, step by step, for a machine with an NVIDIA GPU and
# its driver (no kernel headers, no cgpu_km, no Docker): the questions docs/kmod.md leaves
# open because no machine here has a GPU. rmprobe (test/gpu/rmprobe.c) makes a context and
# then one kind of memory after another, all kept; librmtrace.so (test/gpu/rmtrace.c),
# preloaded, logs each RM and nvidia-uvm ioctl; after each step nvidia-smi gives the
# process's figure and the GPU's used memory. Prints, for each step:
#   made        objects made in the step, class:count (0x40 video memory, 0x50a0 a VA
#               range, 0x80 device, 0x2080 subdevice, 0xa06c channel group, 0x..6f
#               channel, 0x90f1 VA space)
#   live        devices, subdevices, channel groups, channels and VA spaces held: what
#               max_channels must allow a process
#   mem40       bytes of 0x40 objects held and their page sizes (cgpu_km charges 4k pages
#               at 64 KiB)
#   va          VA ranges made, the flags they carried, and the bytes held by those
#               without LAZY or EXTERNALLY_MANAGED, for which RM reserves page tables
#               (pt4k: their leaf level at 8 bytes per 4 KiB, RM's worst case
#               gpu_vaspace.c reserves for)
#   smi         nvidia-smi: the process's MiB, the GPU's used MiB above the start, and
#               each against the 0x40 bytes held (what cgpu_km charges)
#   uvm         nvidia-uvm commands, by name where the stand-in serves them
#               (REGISTER_CHANNEL, REGISTER_GPU_VASPACE...), else by number
# and at the end the objects made under a device before its first subdevice (cgpu_km
# refuses them in a limited container: docs/kmod.md). A measurement, not a pass/fail:
# exits 1 only when the probe failed or no RM allocation was seen (the interposition did
# not work). About a minute. Run from anywhere: bash test/gpu/rmtrace.sh. NVIDIA_SMI,
# RMTRACE_STEPS and OUT override the tool, the steps (rmprobe's) and the output folder.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$(mktemp -d)}
SMI=${NVIDIA_SMI:-nvidia-smi}
read -r -a STEPS <<<"${RMTRACE_STEPS:-ctx alloc:1073741824 reserve:17179869184 vmm:67108864 pool:67108864 managed:67108864 ctx2 drop2}"
T=$OUT/trace

cc -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -I"$ROOT/simdrv/lib" \
	-o "$OUT/librmtrace.so" "$ROOT/test/gpu/rmtrace.c" -ldl -pthread &&
	cc -O2 -Wall -Wextra -Werror -I"$ROOT/libcgpu/include" -o "$OUT/rmprobe" \
		"$ROOT/test/gpu/rmprobe.c" -ldl || exit 1

# The first GPU's used MiB (rmprobe uses CUDA's device 0).
gpu_used() { "$SMI" --query-gpu=memory.used --format=csv,noheader,nounits | head -1 | tr -d ' '; }
proc_used() {
	"$SMI" --query-compute-apps=pid,used_memory --format=csv,noheader,nounits |
		awk -F', *' -v p="$1" '$1 == p { s += $2 } END { print s + 0 }'
}

"$SMI" -L | head -1 | sed 's/^/gpu: /'
base=$(gpu_used)
: >"$T"
: >"$OUT/figures"
coproc PROBE { exec env RMTRACE_OUT="$T" LD_PRELOAD="$OUT/librmtrace.so" "$OUT/rmprobe" "${STEPS[@]}" 2>"$OUT/probe.err"; }
while IFS= read -r line <&"${PROBE[0]}"; do
	case $line in
	"at "*)
		read -r _ step pid <<<"$line"
		echo "$step $(proc_used "${pid#pid=}") $(($(gpu_used) - base))" >>"$OUT/figures"
		echo >&"${PROBE[1]}"
		;;
	*) echo "$line" | tee -a "$OUT/probe.out" ;;
	esac
done
wait "$PROBE_PID"
rc=$?

awk '
function kv(   i, p) { delete f; for (i = 3; i <= NF; i++) { p = index($i, "="); f[substr($i, 1, p - 1)] = substr($i, p + 1) } }
function drop(k,   c) {
	if (!(k in cls)) return
	for (c in par) if (par[c] == k) drop(c)
	if (cls[k] == "0x40") live40 -= size[k]
	if (k in nl) { vanl -= nl[k]; delete nl[k] }
	delete cls[k]; delete par[k]; delete size[k]; delete nosub[k]
}
function kind(c) {
	if (c == "0x80") return "devices"; if (c == "0x2080") return "subdevices"
	if (c == "0xa06c") return "groups"; if (c == "0x90f1") return "vaspaces"
	if (c ~ /^0x[0-9a-f][0-9a-f]6f$/) return "channels"; return ""
}
function list(a,   k, s) { s = ""; for (k in a) s = s (s == "" ? "" : " ") k ":" a[k]; return s == "" ? "none" : s }
function row(name, value) { printf "%-10s %-8s %s\n", step, name, value }
NR == FNR { smi_proc[FNR] = $2; smi_gpu[FNR] = $3; next }
$1 == "rm" && $2 == "alloc" {
	kv(); forms[f["form"] (f["xfer"] == 1 ? "+xfer" : "")]++
	if (f["status"] != "0x0") { refused[f["class"] ":" f["status"]]++; next }
	c = f["class"]; k = (c == "0x0" || c == "0x1" || c == "0x41") ? f["handle"] "/" f["handle"] : f["root"] "/" f["handle"]
	cls[k] = c; par[k] = f["root"] "/" f["parent"]; made[c]++
	if (par[k] in nosub && c != "0x2080") { early++; earlycls[c]++ }
	if (c == "0x80") nosub[k] = 1
	if (c == "0x2080") delete nosub[par[k]]
	if (c == "0x40") { size[k] = f["size"]; live40 += f["size"]; pages[f["page"]]++ }
	if (c == "0x50a0") {
		vaflags[f["flags"]]++
		if (!f["lazy"] && !f["ext"]) { nl[k] = f["size"]; vanl += f["size"] }
	}
	next
}
$1 == "rm" && $2 == "free" { kv(); if (f["status"] == "0x0") { nfree++; drop(f["root"] "/" f["handle"]) } ; next }
$1 == "rm" && $2 == "dup" { kv(); dups++; next }
$1 == "rm" && $2 == "control" { controls++; next }
$1 == "rm" && $2 == "esc" { kv(); escs["0x" substr(f["nr"], 3) (f["rc"] != 0 ? "(rc " f["rc"] ")" : "")]++; next }
$1 == "uvm" { kv(); uvm[f["name"] == "" ? substr($2, 5) : f["name"]]++; next }
$1 == "mark" {
	step = $2; n++
	delete live; for (k in cls) if (kind(cls[k]) != "") live[kind(cls[k])]++
	row("made", list(made) (nfree ? ", " nfree " freed" : ""))
	row("live", "devices " live["devices"] + 0 ", subdevices " live["subdevices"] + 0 ", groups " live["groups"] + 0 ", channels " live["channels"] + 0 ", VA spaces " live["vaspaces"] + 0)
	row("mem40", sprintf("%.1f MiB held, pages %s", live40 / 1048576, list(pages)))
	row("va", "flags " list(vaflags) sprintf(", without LAZY %.1f GiB held, pt4k %.1f MiB", vanl / 1073741824, vanl / 512 / 1048576))
	row("smi", sprintf("process %d MiB (%+.1f against mem40), GPU +%d MiB (%+.1f against the process)", smi_proc[n], smi_proc[n] - live40 / 1048576, smi_gpu[n], smi_gpu[n] - smi_proc[n]))
	row("uvm", list(uvm))
	row("calls", "forms " list(forms) ", controls " controls + 0 ", dups " dups + 0 ", refused " list(refused) ", other escapes " list(escs))
	delete made; delete pages; delete vaflags; delete uvm; delete forms; delete refused; delete escs; nfree = controls = dups = 0
}
END {
	step = "all"
	row("early", early + 0 " objects made under a device before its first subdevice" (early ? ": " list(earlycls) : ""))
}' "$OUT/figures" "$T" | tee "$OUT/report"

grep -q '^rm alloc' "$T" || { echo "no RM allocation in the trace ($T): the interposition did not work" >&2; exit 1; }
[ "$rc" = 0 ] || { echo "rmprobe failed (exit $rc): $(cat "$OUT/probe.out" "$OUT/probe.err" 2>/dev/null | tail -3)" >&2; exit 1; }
echo "trace: $T, report: $OUT/report"
