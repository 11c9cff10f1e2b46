package procfs

import (
	"fmt"
	"syscall"

	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// The rules below are the kernel module's (docs/contracts.md §2), applied to a State so
// the directory backend refuses exactly what the kernel refuses, with the same errno.

// AddRequest is one inst_ctl "add" command.
type AddRequest struct {
	GPU      int
	ID       string // 12 to 64 lowercase hex characters
	Memsize  uint64 // 0: the tree's default_memsize
	Weight   int
	HighPrio bool
	UUID     string // the GPU's UUID, recorded for libcgpu; optional
}

// GPUKey names a writable per-GPU value file.
type GPUKey string

// InstanceKey names a writable per-instance value file.
type InstanceKey string

// Writable value files.
const (
	KeyMaxInst   GPUKey      = "max_inst"
	KeyPolicy    GPUKey      = "policy"
	KeyPrioRatio GPUKey      = "prio_ratio"
	KeyMemsize   InstanceKey = "memsize"
	KeyWeight    InstanceKey = "weight"
	KeyHighPrio  InstanceKey = "highprio"
)

func errf(errno syscall.Errno, format string, a ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, a...), errno)
}

// ValidID reports whether id is a container id the kernel accepts.
func ValidID(id string) bool {
	if len(id) < uapi.IDLen || len(id) > uapi.FullIDLen {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Add registers an instance, as "add" on inst_ctl does.
func (s *State) Add(r AddRequest) (Instance, error) {
	if !ValidID(r.ID) {
		return Instance{}, errf(syscall.EINVAL, "add: id %q is not 12 to 64 lowercase hex characters", r.ID)
	}
	g := s.GPU(r.GPU)
	if g == nil {
		return Instance{}, errf(syscall.ENODEV, "add: no GPU %d", r.GPU)
	}
	if g.Instance(r.ID) != nil {
		return Instance{}, errf(syscall.EEXIST, "add: GPU %d already has instance %s", r.GPU, ShortID(r.ID))
	}
	mem := r.Memsize
	if mem == 0 {
		if s.DefaultMemsize == 0 {
			return Instance{}, errf(syscall.EINVAL, "add: no memsize given and default_memsize is 0")
		}
		mem = s.DefaultMemsize
	}
	if mem > uapi.MaxBytes {
		return Instance{}, errf(syscall.EINVAL, "add: memsize %d is outside 1..%d", mem, uint64(uapi.MaxBytes))
	}
	if r.Weight < 0 || r.Weight > g.MaxInst {
		return Instance{}, errf(syscall.EINVAL, "add: weight %d is outside 0..max_inst (%d) on GPU %d", r.Weight, g.MaxInst, r.GPU)
	}
	if len(g.Instances) >= g.MaxInst {
		return Instance{}, errf(syscall.ENOSPC, "add: GPU %d already has max_inst (%d) instances", r.GPU, g.MaxInst)
	}
	if g.WeightUsed()+r.Weight > g.MaxInst {
		return Instance{}, errf(syscall.ENOSPC, "add: weight %d is above free_weight %d on GPU %d", r.Weight, g.FreeWeight, r.GPU)
	}
	in := Instance{ID: ShortID(r.ID), Memsize: mem, Weight: r.Weight, HighPrio: r.HighPrio}
	g.Instances = append(g.Instances, in)
	g.FreeWeight = g.MaxInst - g.WeightUsed()
	return in, nil
}

// Del removes an instance, as "del" on inst_ctl does.
func (s *State) Del(gpu int, id string) error {
	g := s.GPU(gpu)
	if g == nil {
		return errf(syscall.ENODEV, "del: no GPU %d", gpu)
	}
	name := ShortID(id)
	for i, in := range g.Instances {
		if in.ID == name {
			g.Instances = append(g.Instances[:i], g.Instances[i+1:]...)
			g.FreeWeight = g.MaxInst - g.WeightUsed()
			return nil
		}
	}
	return errf(syscall.ENOENT, "del: GPU %d has no instance %s", gpu, name)
}

// SetDefaultMemsize writes default_memsize.
func (s *State) SetDefaultMemsize(v int64) error {
	if v < 0 {
		return errf(syscall.EINVAL, "default_memsize %d is outside 0..%d", v, int64(uapi.MaxBytes))
	}
	s.DefaultMemsize = uint64(v)
	return nil
}

// SetGPU writes one of a GPU's value files.
func (s *State) SetGPU(gpu int, key GPUKey, v int64) error {
	g := s.GPU(gpu)
	if g == nil {
		return errf(syscall.ENODEV, "no GPU %d", gpu)
	}
	switch key {
	case KeyMaxInst:
		if v < uapi.MaxInstMin || v > uapi.MaxInstMax {
			return errf(syscall.EINVAL, "GPU %d: max_inst %d is outside %d..%d", gpu, v, uapi.MaxInstMin, uapi.MaxInstMax)
		}
		if int(v) < len(g.Instances) || int(v) < g.WeightUsed() {
			return errf(syscall.EBUSY, "GPU %d: max_inst %d is below the %d instances or the weight %d in use", gpu, v, len(g.Instances), g.WeightUsed())
		}
		g.MaxInst = int(v)
		g.FreeWeight = g.MaxInst - g.WeightUsed()
	case KeyPolicy:
		if v < 0 || v > uapi.PolicyMax {
			return errf(syscall.EINVAL, "GPU %d: policy %d is outside 0..%d", gpu, v, uapi.PolicyMax)
		}
		g.Policy = int(v)
	case KeyPrioRatio:
		if v < uapi.PrioRatioMin || v > uapi.PrioRatioMax {
			return errf(syscall.EINVAL, "GPU %d: prio_ratio %d is outside %d..%d", gpu, v, uapi.PrioRatioMin, uapi.PrioRatioMax)
		}
		g.PrioRatio = int(v)
	default:
		return errf(syscall.EINVAL, "GPU %d: %q is not a writable GPU value", gpu, key)
	}
	return nil
}

// SetInstance writes one of an instance's value files. held is the memory its processes
// hold now (the sum of meminfo's PID lines): memsize may not drop below it.
func (s *State) SetInstance(gpu int, id string, key InstanceKey, v int64, held uint64) error {
	g := s.GPU(gpu)
	if g == nil {
		return errf(syscall.ENODEV, "no GPU %d", gpu)
	}
	in := g.Instance(id)
	if in == nil {
		return errf(syscall.ENOENT, "GPU %d has no instance %s", gpu, ShortID(id))
	}
	switch key {
	case KeyMemsize:
		if v < 1 {
			return errf(syscall.EINVAL, "GPU %d/%s: memsize %d is outside 1..%d", gpu, in.ID, v, int64(uapi.MaxBytes))
		}
		if uint64(v) < held {
			return errf(syscall.EBUSY, "GPU %d/%s: memsize %d is below the %d bytes in use", gpu, in.ID, v, held)
		}
		in.Memsize = uint64(v)
	case KeyWeight:
		if v < 0 || v > int64(g.MaxInst) {
			return errf(syscall.EINVAL, "GPU %d/%s: weight %d is outside 0..max_inst (%d)", gpu, in.ID, v, g.MaxInst)
		}
		if g.WeightUsed()-in.Weight+int(v) > g.MaxInst {
			return errf(syscall.ENOSPC, "GPU %d/%s: weight %d would pass max_inst %d (free_weight %d)", gpu, in.ID, v, g.MaxInst, g.FreeWeight)
		}
		in.Weight = int(v)
		g.FreeWeight = g.MaxInst - g.WeightUsed()
	case KeyHighPrio:
		if v != 0 && v != 1 {
			return errf(syscall.EINVAL, "GPU %d/%s: highprio %d is not 0 or 1", gpu, in.ID, v)
		}
		in.HighPrio = v == 1
	default:
		return errf(syscall.EINVAL, "GPU %d/%s: %q is not a writable instance value", gpu, in.ID, key)
	}
	return nil
}
