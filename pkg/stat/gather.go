package stat

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// Source is where a node's snapshots are read from.
type Source struct {
	Tree      procfs.Tree
	GPUs      []gpu.GPU
	Simulated bool
	// Containers lists every container Docker has, running or not.
	Containers func(context.Context) ([]Container, error)
	// Util reads NVML's utilisation of the GPUs; nil where NVML cannot (the simulated
	// node's driver keeps no utilisation).
	Util func() map[int]Utilization
	// OpenSched opens the scheduler's figures for one reading (closed right after it:
	// an open /dev/cgpu holds up a hot update); nil where they cannot be had (not a
	// kernel tree, not root).
	OpenSched func() (SchedReader, error)
	Now       func() time.Time
}

// SchedReader reads instances' figures from cgpu_km's scheduler (schedstat.Reader).
type SchedReader interface {
	Read(gpu int, id string) (uapi.InstStat, error)
	Close() error
}

// Gather reads the tree, every instance's meminfo, Docker's containers and utilisation,
// and builds the snapshot. Only a tree that cannot be read is an error: without Docker
// the snapshot says so and shows the tree.
func (s Source) Gather(ctx context.Context) (*Snapshot, error) {
	in := Input{Time: s.Now(), Root: s.Tree.Root(), Kernel: s.Tree.Kernel(), Simulated: s.Simulated, GPUs: s.GPUs}
	var err error
	if in.State, err = s.Tree.Read(); err != nil {
		return nil, err
	}
	if in.Kernel {
		if in.Enforcement, err = procfs.ReadEnforcement(in.Root); err != nil {
			return nil, err
		}
	}
	in.Meminfo = map[MeminfoKey]procfs.Meminfo{}
	for _, g := range in.State.GPUs {
		for _, inst := range g.Instances {
			m, err := procfs.ReadMeminfo(in.Root, g.Index, inst.ID)
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since the tree was read
			}
			if err != nil {
				return nil, err
			}
			in.Meminfo[MeminfoKey{g.Index, inst.ID}] = m
		}
	}
	in.Containers, in.DockerErr = s.Containers(ctx)
	if s.Util != nil {
		in.Util = s.Util()
	}
	in.Sched = s.readSched(in.State)
	return Build(in), nil
}

// readSched reads what it can: a file that does not open (a frozen or unloaded module)
// or a call refused (an instance gone meanwhile, a module without it) leaves figures
// unknown, never an error.
func (s Source) readSched(st *procfs.State) map[MeminfoKey]uapi.InstStat {
	out := map[MeminfoKey]uapi.InstStat{}
	if s.OpenSched == nil {
		return out
	}
	r, err := s.OpenSched()
	if err != nil {
		return out
	}
	defer r.Close()
	for _, g := range st.GPUs {
		for _, inst := range g.Instances {
			if f, err := r.Read(g.Index, inst.ID); err == nil {
				out[MeminfoKey{g.Index, inst.ID}] = f
			}
		}
	}
	return out
}
