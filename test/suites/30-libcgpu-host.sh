#!/usr/bin/env bash
# The simulated GPU and libcgpu on the host, without the kernel module
# (libcgpu in process-local mode), then the benchmark figures.
# Runs from the repo root; exits non-zero on the first failed check.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s -C sim
make -s -C libcgpu

SIM=$PWD/sim/build
HOOK=$PWD/libcgpu/build
REF=$(sim/fetch-nvidia-ref.sh)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export LD_LIBRARY_PATH=$SIM CGPU_TEST_SMI=$SIM/nvidia-smi
# No budget variable leaks in from the caller's environment.
unset CGPU_DISABLE CGPU_MEM_LIMIT_BYTES ALIYUN_COM_GPU_MEM_CONTAINER \
      ALIYUN_COM_GPU_MEM_DEV CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES \
      CGPU_SIM_GPUS CGPU_SIM_MEM_MIB

n=0
fresh() { n=$((n + 1)); export CGPU_SIM_STATE=$TMP/state-$n; }
say() { echo "--- $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

say "exported names exist in NVIDIA's libcuda.so.1 / libnvidia-ml.so.1 (535)"
# hooks-vs-real also names the entry points newer than that driver (hooks.def's
# CUDA version above 12.2, e.g. cuGraphAddNode_v2 of 12.3): libcgpu hooks them
# for newer drivers, and the simulator exports them for its hooks to reach.
"$HOOK/hooks-vs-real" "$REF/libcuda.so.1" "$REF/libnvidia-ml.so.1" | tee "$TMP/hvr"
exports() { nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" { print $3 }' | sort -u; }
exports "$REF/libcuda.so.1" >"$TMP/real"
exports "$REF/libnvidia-ml.so.1" >>"$TMP/real"
sed -n 's/^newer than this driver: \([^ ]*\) .*/\1/p' "$TMP/hvr" >"$TMP/newer"
cat "$TMP/newer" >>"$TMP/real"
sort -u -o "$TMP/real" "$TMP/real"
for lib in "$SIM/libcuda.so.1" "$SIM/libnvidia-ml.so.1" "$HOOK/libcgpu.so"; do
	extra=$(exports "$lib" | grep -vx dlsym | comm -23 - "$TMP/real")
	[ -z "$extra" ] || fail "$(basename "$lib") exports names NVIDIA's libraries lack: $extra"
	newer=$(exports "$lib" | grep -cxFf "$TMP/newer" || true)
	echo "$(basename "$lib"): $(exports "$lib" | wc -l) exports, all real names ($newer of newer drivers)"
done

say "libcgpu.so loads with glibc 2.17 and later (containers' glibc varies)"
newest=$(objdump -T "$HOOK/libcgpu.so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
[ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -1)" = GLIBC_2.17 ] ||
	fail "libcgpu.so needs $newest"
echo "newest glibc symbol version needed: $newest"

say "NVML declarations match nvml.h"
cc -Ilibcgpu/include -o "$TMP/nl-ours" libcgpu/tests/nvml-layout.c
cc -DREAL_NVML -I"$REF" -o "$TMP/nl-real" libcgpu/tests/nvml-layout.c
diff <("$TMP/nl-ours") <("$TMP/nl-real") || fail "NVML layout differs from nvml.h"
echo "nvml layout: $("$TMP/nl-ours" | wc -l) sizes, offsets and values identical"

say "simulator"
for g in basics memory pools vmm arrays timeline graphmem capture reap fork nvml; do
	fresh
	"$SIM/sim-test" "$g"
done
fresh
exports "$SIM/libcuda.so.1" | "$SIM/sim-test" procaddr "$REF/libcuda.so.1"
# Two processes that are both PID 1 in their own PID namespaces (as in two
# containers) churn allocations together: no update of the node may be lost.
fresh
for i in 1 2; do unshare --pid --fork "$SIM/sim-test" churn & done
wait %1 && wait %2 || fail "churn in two PID namespaces"
[ "$("$SIM/nvidia-smi" --query-gpu=memory.used --format=csv,noheader,nounits | head -1)" = 0 ] ||
	fail "churn in two PID namespaces left memory used"
# Device enumeration: physical GPUs CUDA sees, "/", those NVML sees.
visible() { fresh; env "$@" "$SIM/sim-test" visible "${args[@]}"; }
args=(0 1 2 3 / 0 1 2 3); visible
args=(2 0 / 0 1 2 3); visible CUDA_VISIBLE_DEVICES=2,0
args=(1 3 / 1 3); visible NVIDIA_VISIBLE_DEVICES=3,1
args=(3 / 1 3); visible NVIDIA_VISIBLE_DEVICES=3,1 CUDA_VISIBLE_DEVICES=1
args=(3 / 1 3); visible NVIDIA_VISIBLE_DEVICES=GPU-c6a1d000-0000-4000-8000-000000000003,1 \
	CUDA_VISIBLE_DEVICES=GPU-c6a1d000-0000-4000-8000-000000000003
args=(0 1 / 0 1 2 3); visible CUDA_VISIBLE_DEVICES=0,1,7,2
args=(/); visible NVIDIA_VISIBLE_DEVICES=none
args=(/ 0 1 2 3); visible CUDA_VISIBLE_DEVICES=
args=(0 / 0); visible CGPU_SIM_GPUS=1
fresh
CGPU_SIM_GPUS=2 CGPU_SIM_MEM_MIB=1000 "$SIM/nvidia-smi" -L >"$TMP/L"
diff "$TMP/L" - <<'EOF' || fail "nvidia-smi -L"
GPU 0: Tesla T4 (UUID: GPU-c6a1d000-0000-4000-8000-000000000000)
GPU 1: Tesla T4 (UUID: GPU-c6a1d000-0000-4000-8000-000000000001)
EOF
grep -q '0MiB / 1000MiB' <("$SIM/nvidia-smi") || fail "nvidia-smi table"
echo "nvidia-smi: ok"

say "cudaprobe, the application-like probe, on the simulator and under the hook"
fresh
probe() { "$SIM/cudaprobe" "$@" >"$TMP/p" 2>&1 || true; }
want() { grep -Eq "^$1( |\$)" "$TMP/p" || fail "cudaprobe: want $1 in: $(cat "$TMP/p")"; }
probe launch 20 5000
awk -F= '$1 == "gpu_ms" { exit !($2 >= 99.9 && $2 <= 100.1) }' "$TMP/p" || fail "20 x 5 ms kernels: $(cat "$TMP/p")"
probe pool 3000000; want pool.reserved=4194304; want pool.used=3000000; want pool.reserved_after_sync=0
probe vmm 5000000; want vmm.size=6291456; want vmm.readback=90
probe array 4096 4096; want array=created
probe managed 1000; want managed=allocated
probe procaddr cuMemAllocAsync 12020 2; want symbol=cuMemAllocAsync_ptsz
probe -d 3 alloc-loop -c 4096; want allocated=$((12 << 30)); want stop=CUDA_ERROR_OUT_OF_MEMORY
fresh
export LD_PRELOAD=$HOOK/libcgpu.so CGPU_MEM_LIMIT_BYTES=$((1 << 30))
probe managed 1000; want error=CUDA_ERROR_NOT_SUPPORTED
probe procaddr cuMemAllocAsync 12020 2; want "object=$HOOK/libcgpu.so"
probe alloc-loop -c 100; want allocated=$((1000 << 20))
unset LD_PRELOAD CGPU_MEM_LIMIT_BYTES
echo "cudaprobe: ok"

say "libcgpu, process-local mode"
"$HOOK/config-test" pkg/alloc/testdata/parse-cases.txt
LD_PRELOAD=$HOOK/libcgpu.so "$HOOK/rtld-next-test"
hook() { fresh; env LD_PRELOAD="$HOOK/libcgpu.so" "$@" 2>>"$TMP/stderr"; }
B=$((1 << 30))
for g in paths pools handles ctx fork; do
	hook CGPU_MEM_LIMIT_BYTES=$B "$HOOK/hook-test" $g $B
done
# 2 MiB + 1 and 1 MiB allocations in a loop stop at the budget of pages the
# simulated GPU really holds (cutil/memsize.h).
G2=$((2 << 30))
hook CGPU_MEM_LIMIT_BYTES=$G2 "$HOOK/hook-test" pages $G2
# VMM memory released while still mapped stays charged.
hook CGPU_MEM_LIMIT_BYTES=$G2 "$HOOK/hook-test" vmm $G2
# Graph memory: executable graphs mapping their allocations stop at the budget.
hook CGPU_MEM_LIMIT_BYTES=$G2 "$HOOK/hook-test" graph $G2
# The same through cuGraphAddNode and its _v2 (the CUDA runtime's cudaGraphAddNode).
hook CGPU_MEM_LIMIT_BYTES=$G2 "$HOOK/hook-test" graph-node $G2
# The same for graphs made by capturing cudaMallocAsync (cuMemAllocAsync) in a
# stream, whose allocation nodes libcgpu never sees added.
hook CGPU_MEM_LIMIT_BYTES=$G2 "$HOOK/hook-test" graph-capture $G2
# More pools than a fixed table would hold: all charged.
hook CGPU_MEM_LIMIT_BYTES=$G2 "$HOOK/hook-test" many-pools $G2
# The entry points before CUDA 3.2 / 11.0 (32-bit pointers: the simulator
# has about 1 GiB of address space for them).
hook CGPU_MEM_LIMIT_BYTES=$((512 << 20)) "$HOOK/hook-test" v1 $((512 << 20))
# To the page, with a budget and sizes that are no multiple of a page.
E=$(((1 << 30) + 4097))
hook CGPU_MEM_LIMIT_BYTES=$E "$HOOK/hook-test" edge $E
hook CGPU_MEM_LIMIT_BYTES=$((48 << 20)) "$HOOK/hook-test" threads $((48 << 20))
# The bytes the runtime writes for GiB of a 15 GiB T4 (docs/contracts.md section 1).
T=$((15109 << 20))
b() { echo $(($1 * T / 15)); }
hook CGPU_MEM_LIMIT_BYTES="$(b 1),$(b 2),$(b 3),$(b 4)" \
	CUDA_VISIBLE_DEVICES=2,0,3 "$HOOK/hook-test" multi "$(b 3)" "$(b 1)" "$(b 4)"
hook CGPU_MEM_LIMIT_BYTES="$(b 4),$(b 3)" NVIDIA_VISIBLE_DEVICES=3,1 \
	CUDA_VISIBLE_DEVICES=1,0 "$HOOK/hook-test" multi "$(b 3)" "$(b 4)"
hook CGPU_MEM_LIMIT_BYTES="$(b 1),$(b 2),$(b 3),$(b 4)" \
	"$HOOK/hook-test" nvml "$(b 1)" "$(b 2)" "$(b 3)" "$(b 4)"
hook "$HOOK/hook-test" unlimited
hook CGPU_DISABLE=true CGPU_MEM_LIMIT_BYTES=4096 "$HOOK/hook-test" unlimited
hook CGPU_MEM_LIMIT_BYTES=$B,0 "$HOOK/hook-test" unlimited
# The GiB variables are the runtime's to scale: alone they set no budget here.
hook ALIYUN_COM_GPU_MEM_CONTAINER=1 ALIYUN_COM_GPU_MEM_DEV=15 "$HOOK/hook-test" unlimited
hook CGPU_MEM_LIMIT_BYTES=6GiB "$HOOK/hook-test" refuse-all
grep -q 'CGPU_MEM_LIMIT_BYTES="6GiB": item 1: not a whole number' "$TMP/stderr" || fail "malformed budget not reported"
# A typo in the switch is not "off".
hook CGPU_DISABLE=yes CGPU_MEM_LIMIT_BYTES=$B "$HOOK/hook-test" refuse-all
grep -q 'CGPU_DISABLE="yes": not a boolean' "$TMP/stderr" || fail "malformed CGPU_DISABLE not reported"
# SPEC: 6 of a 15 GiB T4 shows as about 6043 MiB in the container's nvidia-smi.
hook CGPU_MEM_LIMIT_BYTES="$(b 6)" "$SIM/nvidia-smi" >"$TMP/smi"
[ "$(grep -c '0MiB / 6043MiB' "$TMP/smi")" = 4 ] || fail "nvidia-smi under the hook: $(cat "$TMP/smi")"
hook CGPU_MEM_LIMIT_BYTES="$(b 6)" "$SIM/cudaprobe" meminfo >"$TMP/probe"
for k in cuda.total cuda.devtotal nvml.total nvml2.total; do
	grep -qx "$k=$(b 6)" "$TMP/probe" || fail "$k: $(cat "$TMP/probe")"
done
echo "views: 6 of 15 GiB = $(b 6) bytes ($(( $(b 6) >> 20 )) MiB) in CUDA, NVML and nvidia-smi"
# Said once per process, and only in a limited mode (paths refuses managed
# memory five times in one process: one line).
[ "$(grep -c 'enforcing the GPU memory budget from the environment' "$TMP/stderr")" -ge 10 ] || fail "local mode not announced"
[ "$(grep -c 'managed memory' "$TMP/stderr")" = 1 ] || fail "managed refusal lines: $(grep -c 'managed memory' "$TMP/stderr")"
echo "stderr lines: ok"

say "benchmarks (figures, not checks)"
fresh
CGPU_MEM_LIMIT_BYTES=$((8 << 30)) "$HOOK/bench" "$HOOK/libcgpu.so" 2>/dev/null
echo "suite 30-libcgpu-host: all checks passed"
