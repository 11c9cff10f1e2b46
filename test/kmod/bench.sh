#!/usr/bin/env bash
# Benchmark, not a test: what a CHARGE+UNCHARGE pair costs against an empty ioctl on
# the same file (kt_bench.c), from inside a container. Runs in the test VM; under TCG
# the absolute figures are emulated time, the ratios are what carries over.
source test/kmod/lib.sh
unload
load || { bad "insmod"; finish; exit 1; }
H=$(cid bench)
eq "add" "$(add 0 $H memsize=$GIB)" OK
bash -c "echo 0 >$(docker_cg "$H")/cgroup.procs && exec $KT bench ${BENCH_ROUNDS:-7} ${BENCH_CALLS:-20000}" ||
	bad "bench did not run"
eq "del" "$(wr $P/inst_ctl "del 0 $H")" OK
unload || bad "rmmod after the benchmark"
finish
