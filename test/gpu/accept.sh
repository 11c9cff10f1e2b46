#!/usr/bin/env bash
# The real-GPU acceptance of libcgpu in process-local mode (issue 17 point 7), for a
# machine with an NVIDIA GPU and its driver, PyTorch and nvcc; no kernel headers, no
# cgpu_km, no Docker. Builds libcgpu, then with a 2 GiB budget (CGPU_MEM_LIMIT_BYTES):
#   - PyTorch with expandable segments: mem_get_info shows 2 GiB; allocating past it
#     raises torch's OOM; NVML's figure for the process stays <= budget + the context
#     memory the same process takes without the hook (measured first, side by side);
#   - cudaMallocAsync captured into a CUDA graph (libcudart through ctypes): a graph
#     that would allocate 3 GiB fails, one of 1 GiB runs;
#   - CuPy and JAX, each if importable: allocating past 2 GiB fails with their OOM;
#   - nvidia-smi under the hook shows 2048MiB as the GPU's total;
#   - the time a kernel launch takes with and without the hook, alternated in one run.
# Prints one table (check, want, got, verdict) and exits 1 on any failure; about 3
# minutes on an H200. Run from anywhere: bash test/gpu/accept.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$(mktemp -d)}
B=$((2 << 30))
HOOK=$ROOT/libcgpu/build/libcgpu.so
rows=()
failed=0
row() { rows+=("$1|$2|$3|$4"); [ "$4" = ok ] || [ "$4" = skip ] || failed=1; }

make -s -C libcgpu build/libcgpu.so >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
nvidia-smi -L | head -1 | sed 's/^/gpu: /'
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
hooked() { env LD_PRELOAD="$HOOK" CGPU_MEM_LIMIT_BYTES=$B "$@"; }

# A python check prints "name|want|got|verdict" lines; anything else goes to the log.
py() {
	local name=$1
	shift
	"$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	local rc=$?
	grep '|' "$OUT/$name.out" >"$OUT/$name.rows"
	while IFS= read -r l; do
		IFS='|' read -r a b c d <<<"$l"
		row "$a" "$b" "$c" "$d"
	done <"$OUT/$name.rows"
	[ -s "$OUT/$name.rows" ] || row "$name" "runs" "exit $rc, no result: $(tail -1 "$OUT/$name.err")" FAIL
}

cat >"$OUT/torch_check.py" <<'EOF'
import os, subprocess, sys, torch
B = int(sys.argv[1]); mode = sys.argv[2]
def nvml_used():
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        pid, mib = [x.strip() for x in line.split(",")]
        if int(pid) == os.getpid():
            return int(mib) << 20
    return 0
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
if mode == "context":
    print(f"context|measured|{nvml_used() >> 20} MiB|ok")
    sys.exit(0)
ctx = int(sys.argv[3]) << 20
free, total = torch.cuda.mem_get_info()
print(f"torch mem_get_info total|{B}|{total}|{'ok' if total == B else 'FAIL'}")
held, chunk, oom = [], 64 << 20, False
try:
    while len(held) * chunk < 2 * B:
        held.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
except torch.cuda.OutOfMemoryError:
    oom = True
got = len(held) * chunk
print(f"torch allocation past the budget|OutOfMemoryError at <= {B >> 20} MiB|"
      f"{'OOM' if oom else 'no OOM'} after {got >> 20} MiB|{'ok' if oom and got <= B else 'FAIL'}")
used = nvml_used()
print(f"NVML used by the process|<= budget + context ({(B + ctx) >> 20} MiB)|{used >> 20} MiB|"
      f"{'ok' if used <= B + ctx else 'FAIL'}")
EOF

cat >"$OUT/graph_check.py" <<'EOF'
# cudaMallocAsync captured into a graph, through the CUDA runtime PyTorch ships.
import ctypes, glob, os, sys, torch
B = int(sys.argv[1])
libs = glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libcudart.so*")) + \
       glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cuda_runtime", "lib", "libcudart.so*"))
rt = ctypes.CDLL(libs[0] if libs else "libcudart.so")
torch.zeros(1, device="cuda")
def graph_alloc(size):
    s, g, e = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    p = ctypes.c_void_p()
    assert rt.cudaStreamCreate(ctypes.byref(s)) == 0
    assert rt.cudaStreamBeginCapture(s, 0) == 0
    r1 = rt.cudaMallocAsync(ctypes.byref(p), ctypes.c_size_t(size), s)
    r2 = rt.cudaFreeAsync(p, s)
    assert rt.cudaStreamEndCapture(s, ctypes.byref(g)) == 0
    r = rt.cudaGraphInstantiate(ctypes.byref(e), g, ctypes.c_ulonglong(0))
    if r == 0:
        r = rt.cudaGraphLaunch(e, s)
    if r == 0:
        r = rt.cudaStreamSynchronize(s)
    rt.cudaGetLastError()
    return r1, r2, r
r = graph_alloc(3 * B // 2)
print(f"captured cudaMallocAsync of {3 * B // 2 >> 20} MiB|a failed instantiate or launch|status {r}|{'ok' if r[2] != 0 else 'FAIL'}")
r = graph_alloc(B // 2)
print(f"captured cudaMallocAsync of {B // 2 >> 20} MiB|runs|status {r}|{'ok' if r == (0, 0, 0) else 'FAIL'}")
EOF

cat >"$OUT/other_check.py" <<'EOF'
import sys
B = int(sys.argv[1]); which = sys.argv[2]
chunk = 64 << 20
if which == "cupy":
    try:
        import cupy
    except ImportError:
        print("cupy past the budget|OutOfMemoryError|not installed|skip"); sys.exit(0)
    held = []
    try:
        while len(held) * chunk < 2 * B:
            held.append(cupy.empty(chunk, dtype=cupy.uint8))
        oom = False
    except cupy.cuda.memory.OutOfMemoryError:
        oom = True
else:
    try:
        import jax, jax.numpy as jnp
    except ImportError:
        print("jax past the budget|RESOURCE_EXHAUSTED|not installed|skip"); sys.exit(0)
    held = []
    try:
        while len(held) * chunk < 2 * B:
            held.append(jax.device_put(jnp.zeros(chunk, dtype=jnp.uint8)).block_until_ready())
        oom = False
    except Exception as e:
        oom = "RESOURCE_EXHAUSTED" in str(e) or "out of memory" in str(e).lower()
got = len(held) * chunk
print(f"{which} past the budget|OOM at <= {B >> 20} MiB|{'OOM' if oom else 'no OOM'} after {got >> 20} MiB|"
      f"{'ok' if oom and got <= B else 'FAIL'}")
EOF

cat >"$OUT/launch.cu" <<'EOF'
#include <chrono>
#include <cstdio>
#include <cstdlib>
__global__ void empty() {}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	empty<<<1, 1>>>();
	cudaDeviceSynchronize();
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < n; i++)
		empty<<<1, 1>>>();
	auto t1 = std::chrono::steady_clock::now();
	cudaDeviceSynchronize();
	printf("%.1f\n", std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
	return cudaGetLastError() != cudaSuccess;
}
EOF

ctx=$(python3 "$OUT/torch_check.py" $B context 2>"$OUT/ctx.err" | awk -F'|' '{print $3+0}')
row "context memory of a PyTorch process, no hook" "measured" "${ctx:-?} MiB" "$([ -n "$ctx" ] && echo ok || echo FAIL)"
py torch hooked python3 "$OUT/torch_check.py" $B torch "${ctx:-0}"
py graph hooked python3 "$OUT/graph_check.py" $B
py cupy hooked python3 "$OUT/other_check.py" $B cupy
XLA_PYTHON_CLIENT_PREALLOCATE=false py jax hooked python3 "$OUT/other_check.py" $B jax

smi=$(hooked nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
row "nvidia-smi under the hook: total" "2048 MiB" "${smi:-?} MiB" "$([ "${smi:-0}" = 2048 ] && echo ok || echo FAIL)"

if nvcc -O2 -o "$OUT/launch" "$OUT/launch.cu" >"$OUT/nvcc.log" 2>&1; then
	d=() h=()
	for _ in 1 2 3 4 5; do
		d+=("$("$OUT/launch")")
		h+=("$(hooked "$OUT/launch")")
	done
	med() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
	dm=$(med "${d[@]}") hm=$(med "${h[@]}")
	row "kernel launch, median of 5 alternated runs" "recorded" \
		"$dm ns direct, $hm ns hooked, added $(awk -v a="$hm" -v b="$dm" 'BEGIN { printf "%+.1f", a - b }') ns" ok
else
	row "kernel launch timing" "nvcc builds it" "$(tail -1 "$OUT/nvcc.log")" FAIL
fi

printf '%s\n' "check|want|got|verdict" "${rows[@]}" | column -t -s '|'
echo "logs: $OUT"
exit "$failed"
