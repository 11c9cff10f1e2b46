#!/usr/bin/env bash
# NVIDIA's CUDA runtime as a client of libcgpu: Debian's libcudart 11.8 and
# 12.4 (downloaded, never committed) under libcgpu in process-local mode. Each
# runtime's every cuGetProcAddress lookup is recorded (libcgpu/tests/cudart-trace.c)
# on NVIDIA's real libcuda 535 and 550, which resolve all of them without a GPU,
# and on the simulated libcuda; an allocation, free, copy, memset, launch, context or
# reset entry point that comes back unhooked fails, unless listed with its reason.
# Runs from the repo root; exits non-zero on the first failed check.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s -C sim
make -s -C libcgpu

SIM=$PWD/sim/build
HOOK=$PWD/libcgpu/build/libcgpu.so
REF=$(sim/fetch-nvidia-ref.sh)
RT=$(sim/fetch-cudart.sh)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
unset CGPU_DISABLE CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES CGPU_SIM_GPUS CGPU_SIM_MEM_MIB
fail() { echo "FAIL: $*" >&2; exit 1; }
# NVIDIA's libcuda alone in its folder: its libnvidia-ml must not shadow the simulator's.
mkdir "$TMP/535"
ln -s "$REF/libcuda.so.1" "$TMP/535/libcuda.so.1"
# 550 (CUDA 12.4) has variants 535 lacks (cuGraphAddNode_v2, 12.3): libcgpu hooks
# each of them, and each resolves as hooks.def says.
libcgpu/build/hooks-vs-real "$RT/driver-550/libcuda.so.1" "$REF/libnvidia-ml.so.1"

for v in 11.0 12; do
	cc -O2 -Wall -Wextra -Werror -o "$TMP/trace-$v" libcgpu/tests/cudart-trace.c \
		-L"$RT" -l:"libcudart.so.$v" -Wl,-rpath,"$RT" -ldl -pthread
	for drv in 535 550 sim; do
		lib=$SIM
		[ $drv != 535 ] || lib=$TMP/535
		[ $drv != 550 ] || lib=$RT/driver-550
		out=$TMP/$drv-$v
		echo "--- libcudart.so.$v on the $drv libcuda, libcgpu preloaded"
		rc=0
		env LD_LIBRARY_PATH="$lib" CGPU_SIM_STATE="$TMP/state" CGPU_MEM_LIMIT_BYTES=$((1 << 30)) \
			LD_PRELOAD="$HOOK" "$TMP/trace-$v" "$HOOK" >"$out" 2>"$out.err" || rc=$?
		grep -E '^# libcudart|FAIL' "$out" || true
		[ $rc = 0 ] || fail "libcudart.so.$v on the $drv libcuda: $(grep '^#' "$out") $(cat "$out.err")"
		# Where cudart stops: no GPU on NVIDIA's driver; the simulator's missing tables.
		want=cudaErrorNoDevice
		[ $drv != sim ] || want=cudaErrorInvalidValue
		grep -qx "# cudaMalloc: $want" "$out" || fail "cudaMalloc: want $want: $(grep '^#' "$out")"
		echo "left to the driver, as listed: $(sed -n 's/.* -> [^:]*:\([^ ]*\) # left to the driver: .*/\1/p' "$out" | sort -u | tr '\n' ' ')"
	done
	# 12.4 asks for cuGraphAddNode at 12030: the hook of the variant each driver
	# answers with (535 has no _v2, whose hook would misread the v1's arguments).
	[ $v = 12 ] || continue
	for want in 535:cuGraphAddNode 550:cuGraphAddNode_v2 sim:cuGraphAddNode; do
		drv=${want%%:*} fn=${want#*:}
		grep -qx "cuGraphAddNode 12030 0 -> libcgpu.so:$fn" "$TMP/$drv-$v" ||
			fail "cuGraphAddNode at 12030 on the $drv libcuda: want libcgpu.so:$fn: $(grep '^cuGraphAddNode ' "$TMP/$drv-$v")"
		echo "cuGraphAddNode at 12030 on the $drv libcuda: libcgpu.so:$fn"
	done
done
# Without libcgpu the same lookups fail: the recorder sees what cudart gets.
LD_LIBRARY_PATH="$TMP/535" "$TMP/trace-12" >"$TMP/bare" 2>&1 && fail "no hook, no failure"
echo "without libcgpu: $(grep -c 'FAIL: not hooked' "$TMP/bare") entry points not hooked, as expected"
echo "suite 31-cudart-host: all checks passed"
