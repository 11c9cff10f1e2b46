#!/usr/bin/env bash
# make bench's compute shares in real time (bench/vm.sh starts it in the test VM, as root
# from the repo root): cgpu_km's scheduler at its defaults (4 ms slices, policy 2), two
# containers at weights 1:2 and 1:3, both busy with batches of 1..128 kernels of 20 us,
# 1 ms, 4 ms and 50 ms and a sync after each batch (libcgpu/tests/sched-load.c, work
# counted kernel by kernel on the simulated device). Prints one line per run:
#   share weight=W kernel_us=K batch=N ratio=R charged=C
# R is B's GPU work over A's in the window both ran, C the scheduler's charged ratio.
set -uo pipefail
source libcgpu/tests/vm-lib.sh
source libcgpu/tests/vm-sched-lib.sh
T=${CGPU_SHARE_SECONDS:-8}
for w in 2 3; do
	WB=$w up || exit 1
	echo 2 >$P/0/policy
	for k in 20 1000 4000 50000; do
		# Long enough for A, at 1/(w+1) of the GPU, to finish 60 kernels in the window.
		t=$(awk -v t="$T" -v k="$k" -v w="$w" 'BEGIN { s = 60 * k * (w + 1) / 1e6 + 2; print (s > t) ? s : t }')
		for b in 1 2 4 8 16 32 64 128; do
			sa=$(stat_of "$cgA") sb=$(stat_of "$cgB")
			in_ctr "$cgA" "$LOAD" run "$t" "$k" "$b" fine >"$W/a" 2>&1 &
			in_ctr "$cgB" "$LOAD" run "$t" "$k" "$b" fine >"$W/b" 2>&1 &
			wait
			# The window both ran in: a second after the later start, to the earlier end.
			t0=$(awk '$1 == "p" { print $2; exit }' "$W/a" "$W/b" | sort -n | tail -1)
			t1=$(for f in "$W/a" "$W/b"; do awk '$1 == "p" { t = $2 } END { print t }' "$f"; done | sort -n | head -1)
			r=$(ratio "$(work_between "$W/b" $((t0 + 1000000000)) "$t1")" \
				"$(work_between "$W/a" $((t0 + 1000000000)) "$t1")")
			ca=$(($(kv charged_ns "$(stat_of "$cgA")") - $(kv charged_ns "$sa")))
			cb=$(($(kv charged_ns "$(stat_of "$cgB")") - $(kv charged_ns "$sb")))
			echo "share weight=$w kernel_us=$k batch=$b ratio=$r charged=$(ratio "$cb" "$ca")"
		done
	done
	down
done
echo "vm-share: $checks checks, $fails failed"
[ "$fails" = 0 ]
