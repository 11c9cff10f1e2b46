package gpu

import "fmt"

// Defaults of the simulated node (docs/contracts.md §4): four T4s as nvidia-smi shows them.
const (
	SimDefaultCount  = 4
	SimDefaultMemMiB = 15109
	SimName          = "Tesla T4"
)

// SimUUID is the UUID the simulated driver gives GPU i; libcgpu and the simulated
// libnvidia-ml.so.1 use the same numbering, so containers and tools agree on identities.
func SimUUID(i int) string {
	return fmt.Sprintf("GPU-c6a1d000-0000-4000-8000-%012d", i)
}

// Sim is the simulated node used where there is no GPU.
type Sim struct {
	Count  int
	MemMiB uint64
}

// GPUs lists Count identical simulated GPUs.
func (s Sim) GPUs() ([]GPU, error) {
	if s.Count < 1 || s.MemMiB < 1 {
		return nil, fmt.Errorf("simulated node needs at least 1 GPU of at least 1 MiB (got %d GPUs of %d MiB)", s.Count, s.MemMiB)
	}
	gpus := make([]GPU, s.Count)
	for i := range gpus {
		gpus[i] = GPU{Index: i, UUID: SimUUID(i), Name: SimName, MemoryBytes: s.MemMiB * MiB}
	}
	return gpus, nil
}
