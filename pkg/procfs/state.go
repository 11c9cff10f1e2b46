// Package procfs reads and writes the /proc/cgpu_km control tree (SPEC.md, docs/contracts.md
// §2) through one interface with two backends: the kernel module's tree, which validates
// every write itself, and a plain directory with the same layout (the simulated node),
// whose writes apply the kernel's rules here.
package procfs

import "github.com/cgpu-project/cgpu/pkg/uapi"

// State is one consistent reading of the tree.
type State struct {
	DefaultMemsize uint64
	GPUs           []GPUState // in index order
}

// GPUState is one per-GPU directory.
type GPUState struct {
	Index      int
	MaxInst    int
	Policy     int
	PrioRatio  int
	FreeWeight int
	Major      int
	Instances  []Instance
}

// Instance is one container's directory on a GPU.
type Instance struct {
	ID       string // the 12-character name
	Memsize  uint64
	Weight   int
	HighPrio bool
}

// GPU returns the directory of GPU index, or nil when the tree has none.
func (s *State) GPU(index int) *GPUState {
	for i := range s.GPUs {
		if s.GPUs[i].Index == index {
			return &s.GPUs[i]
		}
	}
	return nil
}

// MemUsed is the memory promised to the GPU's instances.
func (g *GPUState) MemUsed() uint64 {
	var sum uint64
	for _, in := range g.Instances {
		sum += in.Memsize
	}
	return sum
}

// WeightUsed is the sum of the GPU's instance weights.
func (g *GPUState) WeightUsed() int {
	sum := 0
	for _, in := range g.Instances {
		sum += in.Weight
	}
	return sum
}

// Instance returns the instance named by id (a full id or its first 12 characters).
func (g *GPUState) Instance(id string) *Instance {
	name := ShortID(id)
	for i := range g.Instances {
		if g.Instances[i].ID == name {
			return &g.Instances[i]
		}
	}
	return nil
}

// ShortID is the instance name of a container id: its first 12 characters, as docker ps shows.
func ShortID(id string) string {
	if len(id) > uapi.IDLen {
		return id[:uapi.IDLen]
	}
	return id
}

// NewGPUState is a GPU directory as the kernel creates it.
func NewGPUState(index int) GPUState {
	return GPUState{Index: index, MaxInst: uapi.MaxInstDefault, Policy: uapi.PolicyDefault,
		PrioRatio: uapi.PrioRatioDefault, FreeWeight: uapi.MaxInstDefault}
}

// NewState is a fresh tree with n GPUs.
func NewState(n int) *State {
	s := &State{GPUs: make([]GPUState, n)}
	for i := range s.GPUs {
		s.GPUs[i] = NewGPUState(i)
	}
	return s
}
