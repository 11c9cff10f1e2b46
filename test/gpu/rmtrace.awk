# rmtrace.sh's report (POSIX awk: mawk, busybox and gawk alike). Reads two files: the
# figures ("STEP PROCESS_MIB GPU_MIB" a line, "n/a" for a figure nvidia-smi did not
# give), then librmtrace.so's trace (test/gpu/rmtrace.c); at each "mark STEP" prints
# the rows described atop rmtrace.sh (a step with no figures line: n/a), then "all
# early ..." at the end. Lists are sorted, so the report is the same in every awk.
function kv(   i, p) { delete f; for (i = 3; i <= NF; i++) { p = index($i, "="); f[substr($i, 1, p - 1)] = substr($i, p + 1) } }
function unmap(m) { mapheld -= mlen[m]; delete mlen[m]; delete mdma[m]; delete mmem[m] }
function drop(k,   c, m) {
	if (!(k in cls)) return
	for (c in par) if (c != k && par[c] == k) drop(c)
	if (cls[k] == "0x40") live40 -= size[k]
	if (k in nl) { vanl -= nl[k]; delete nl[k] }
	if (k in sp) { vasp -= sp[k]; delete sp[k] }
	for (m in mlen) if (mdma[m] == k || mmem[m] == k) unmap(m)
	delete cls[k]; delete par[k]; delete size[k]; delete nosub[k]
}
function kind(c) {
	if (c == "0x80") return "devices"
	if (c == "0x2080") return "subdevices"
	if (c == "0xa06c") return "groups"
	if (c == "0x90f1") return "vaspaces"
	if (c ~ /^0x[0-9a-f][0-9a-f]6f$/) return "channels"
	return ""
}
function list(a,   k, n, i, j, t, key, s) {
	n = 0
	for (k in a) key[++n] = k
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && key[j - 1] > key[j]; j--) { t = key[j]; key[j] = key[j - 1]; key[j - 1] = t }
	s = ""
	for (i = 1; i <= n; i++) s = s (i > 1 ? " " : "") key[i] ":" a[key[i]]
	return n ? s : "none"
}
function row(name, value) { printf "%-10s %-8s %s\n", step, name, value }
function mib(x) { return x == "n/a" ? "n/a" : x " MiB" }
function against(x, y) { return x == "n/a" || y == "n/a" ? "n/a" : sprintf("%+.1f", x - y) }
FILENAME == ARGV[1] { smi_proc[FNR] = $2; smi_gpu[FNR] = $3; next }
$1 == "rm" && $2 == "alloc" {
	kv(); forms[f["form"] (f["xfer"] == 1 ? "+xfer" : "")]++
	if (!("status" in f)) next
	if (f["status"] != "0x0") { refused[f["class"] "=" f["status"]]++; next }
	c = f["class"]
	k = (c == "0x0" || c == "0x1" || c == "0x41") ? f["handle"] "/" f["handle"] : f["root"] "/" f["handle"]
	cls[k] = c; par[k] = f["root"] "/" f["parent"]; made[c]++
	if (par[k] in nosub && c != "0x2080") { early++; earlycls[c]++ }
	if (c == "0x80") nosub[k] = 1
	if (c == "0x2080") delete nosub[par[k]]
	if (c == "0x40") { size[k] = f["size"]; live40 += f["size"]; pages[f["page"]]++ }
	if (c == "0x50a0") {
		vaflags[f["flags"]]++
		if (f["lazy"] + 0 == 0 && f["ext"] + 0 == 0) { nl[k] = f["size"]; vanl += f["size"] }
		if (f["sparse"] + 0 == 1) { sp[k] = f["size"]; vasp += f["size"] }
	}
	if (c == "0x90f1") vasflags[f["vasflags"] == "" ? "n/a" : f["vasflags"]]++
	next
}
$1 == "rm" && $2 == "free" { kv(); if (f["status"] == "0x0") { nfree++; drop(f["root"] "/" f["handle"]) }; next }
$1 == "rm" && $2 == "dup" { dups++; next }
$1 == "rm" && $2 == "dmamap" {
	kv(); if (f["status"] != "0x0") { mapfailed++; next }
	m = f["root"] "/" f["dma"] "/" f["offset"]; mdma[m] = f["root"] "/" f["dma"]; mmem[m] = f["root"] "/" f["memory"]
	mlen[m] = f["length"]; mapheld += f["length"]; maps++; mapped += f["length"]; into[mdma[m] in cls ? cls[mdma[m]] : "unknown"]++
	next
}
$1 == "rm" && $2 == "dmaunmap" { kv(); m = f["root"] "/" f["dma"] "/" f["offset"]; if (f["status"] == "0x0" && m in mlen) { unmaps++; unmap(m) }; next }
$1 == "rm" && $2 == "control" { kv(); if ("rc" in f) cfailed++; else if (f["status"] != "0x0") cstatus++; else controls++; next }
$1 == "rm" && $2 == "vidheap" { kv(); vidheap[f["function"]]++; next }
$1 == "rm" && $2 == "esc" { kv(); escs[f["nr"] (f["rc"] != 0 ? "(rc " f["rc"] ")" : "")]++; next }
$1 == "uvm" {
	kv(); nm = f["name"] == "" ? substr($2, 5) : f["name"]; uvm[nm]++
	if (f["rc"] == 0 && f["length"] + 0 > 0) { uvmlen[nm] += f["length"]; spans++ }
	next
}
$1 == "mark" {
	step = $2; n++
	delete live
	for (k in cls) if (kind(cls[k]) != "") live[kind(cls[k])]++
	row("made", list(made) (nfree ? ", " nfree " freed" : ""))
	row("live", "devices " live["devices"] + 0 ", subdevices " live["subdevices"] + 0 ", groups " live["groups"] + 0 ", channels " live["channels"] + 0 ", VA spaces " live["vaspaces"] + 0)
	row("mem40", sprintf("%.1f MiB held; pages of those made: %s", live40 / 1048576, list(pages)))
	row("va", "flags of ranges made: " list(vaflags) sprintf("; held without LAZY or EXTERNALLY_MANAGED (page tables pinned) %.3f GiB, pt %.1f MiB; SPARSE (sparsified) %.3f GiB", vanl / 1073741824, (vanl / 512 + vanl / 8192 + vanl / 262144) / 1048576, vasp / 1073741824) "; flags of VA spaces made: " list(vasflags))
	pm = (n in smi_proc) ? smi_proc[n] : "n/a"; gm = (n in smi_gpu) ? smi_gpu[n] : "n/a"
	row("smi", "process " mib(pm) " (" against(pm, live40 / 1048576) " against mem40), GPU " (gm == "n/a" ? "" : "+") mib(gm) " (" against(gm, pm) " against the process)")
	row("dma", sprintf("RM mappings made %d (%.1f MiB) into ranges of classes %s, %d unmapped, %d failed; %.1f MiB mapped held", maps, mapped / 1048576, list(into), unmaps, mapfailed, mapheld / 1048576))
	row("uvm", list(uvm) (spans ? "; bytes of the spans they make page tables for: " list(uvmlen) : ""))
	row("calls", "forms " list(forms) ", controls " controls + 0 " answered 0x0, " cstatus + 0 " another status, " cfailed + 0 " failed, vidheap " list(vidheap) ", dups " dups + 0 ", refused " list(refused) ", other escapes " list(escs))
	delete made; delete pages; delete vaflags; delete vasflags; delete into; delete uvm; delete uvmlen; delete forms; delete refused; delete escs; delete vidheap
	nfree = spans = controls = cstatus = cfailed = dups = maps = mapped = unmaps = mapfailed = 0
}
END {
	step = "all"
	row("early", early + 0 " objects made under a device before its first subdevice" (early ? ": " list(earlycls) : ""))
}
