package alloc

import (
	"fmt"
	"math/bits"

	"github.com/cgpu-project/cgpu/pkg/gpu"
)

// GiB is one gibibyte.
const GiB = 1 << 30

// MemDevOf is the ALIYUN_COM_GPU_MEM_DEV a user reads off nvidia-smi for a GPU:
// round(total MiB / 1024), at least 1 (docs/contracts.md §1; 15109 MiB -> 15).
func MemDevOf(totalBytes uint64) uint64 {
	d := (totalBytes/gpu.MiB + 512) / 1024
	if d < 1 {
		return 1
	}
	return d
}

// MemBytes scales GiB as the user counts them to the GPU's real size, as the original
// does: floor(memGiB * totalBytes / memDevGiB). Callers keep memGiB <= memDevGiB, so the
// 128-bit quotient always fits 64 bits.
func MemBytes(memGiB, memDevGiB, totalBytes uint64) uint64 {
	hi, lo := bits.Mul64(memGiB, totalBytes)
	q, _ := bits.Div64(hi, lo, memDevGiB)
	return q
}

// human prints bytes with their GiB for messages.
func human(b uint64) string {
	return fmt.Sprintf("%d bytes (%.2f GiB)", b, float64(b)/GiB)
}
