package stat

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
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
	Now  func() time.Time
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
	return Build(in), nil
}
