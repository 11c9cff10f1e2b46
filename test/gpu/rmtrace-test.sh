#!/usr/bin/env bash
# test/gpu/rmtrace.sh's parts without a GPU: the tracer and the probe build with
# -Werror, and the report of a trace that has every kind of line (testdata/: a client, a
# device with memory made before its subdevice, a group with its channel freed by the
# group's free, VA ranges plain, LAZY, EXTERNALLY_MANAGED and SPARSE with LAZY, VA
# spaces nvidia-uvm's and RM's, RM mappings into ranges and into an unknown handle, one
# failed, one unmapped, one gone with its range and one with its client's free, 4 KiB
# pages, a refusal, a failed control and one answered with another status, RM's older
# heap call, a duplicate, an allocation of an unknown size, nvidia-uvm commands (with
# the spans of semaphore pools and a sparse mapping), n/a
# figures, then the client freed with all under it, and a client that names itself its
# parent freed) is testdata/rmtrace.report, and with no figures at all (the context
# failed) testdata/rmtrace-nofigures.report, in every awk installed of mawk, gawk and
# busybox's. (On the stand-in driver, suite 57's vm-guest.sh runs the whole of
# rmtrace.sh.)
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s B="$tmp" CFLAGS="-O2 -Wall -Wextra -Werror"
n=0
for a in mawk gawk "busybox awk"; do
	command -v "${a%% *}" >/dev/null || continue
	$a -f rmtrace.awk testdata/rmtrace.figures testdata/rmtrace.trace >"$tmp/report"
	diff -u testdata/rmtrace.report "$tmp/report" || { echo "rmtrace.awk under $a: the report differs" >&2; exit 1; }
	$a -f rmtrace.awk /dev/null testdata/rmtrace.trace >"$tmp/report"
	diff -u testdata/rmtrace-nofigures.report "$tmp/report" ||
		{ echo "rmtrace.awk under $a, no figures: the report differs" >&2; exit 1; }
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no awk to run rmtrace.awk" >&2; exit 1; }
echo "rmtrace: tracer and probe build; the report of testdata's trace is as expected in $n awk(s)"
