// Package gpu is the node's GPU inventory: index, UUID, name and total memory of each GPU,
// read from NVML on a real node or made up for the simulated node.
package gpu

import "fmt"

// MiB is one mebibyte, the unit nvidia-smi prints memory in.
const MiB = 1 << 20

// GPU is one device as nvidia-smi lists it.
type GPU struct {
	Index       int    `json:"index"`
	UUID        string `json:"uuid"`
	Name        string `json:"name"`
	MemoryBytes uint64 `json:"memory_bytes"`
}

// String names the GPU the way error messages do: by index, model and UUID.
func (g GPU) String() string {
	return fmt.Sprintf("GPU %d (%s %s)", g.Index, g.Name, g.UUID)
}

// Inventory lists the node's GPUs in index order.
type Inventory interface {
	GPUs() ([]GPU, error)
}
