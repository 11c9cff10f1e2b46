package settings

import (
	"fmt"

	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// Saved is what docker cgpu upgrade keeps of the tree before it replaces the kernel
// module: the node's and each GPU's settings, and the values of the instances of the
// containers it restarts (a restarted container registers from its environment, which
// does not know what docker cgpu set changed since).
type Saved struct {
	DefaultMemsize uint64
	GPUs           []procfs.GPUState
	Instances      []SavedInstance
}

// SavedInstance is one container's instance on one GPU, as it was.
type SavedInstance struct {
	Container Container
	GPU       int
	procfs.Instance
}

// Save records st's settings and the instances of containers.
func Save(st *procfs.State, containers []Container) Saved {
	s := Saved{DefaultMemsize: st.DefaultMemsize, GPUs: st.GPUs}
	for _, g := range st.GPUs {
		for _, c := range containers {
			if in := g.Instance(c.ID); in != nil {
				s.Instances = append(s.Instances, SavedInstance{Container: c, GPU: g.Index, Instance: *in})
			}
		}
	}
	return s
}

func (s Saved) gpu(index int) *procfs.GPUState {
	for i := range s.GPUs {
		if s.GPUs[i].Index == index {
			return &s.GPUs[i]
		}
	}
	return nil
}

// Restore writes back what the tree no longer has of s, in the order docker cgpu set
// writes (each step one the kernel accepts), all or nothing. It returns the changes: none
// when everything carried over. Instances whose container has none now are left out.
func Restore(t procfs.Tree, s Saved) ([]Change, error) {
	var changes []Change
	err := t.Update(func(tx procfs.Tx) error {
		st := tx.State()
		changes = nil
		if st.DefaultMemsize != s.DefaultMemsize {
			changes = append(changes, defChange(st.DefaultMemsize, s.DefaultMemsize))
		}
		for gi := range st.GPUs {
			g := &st.GPUs[gi]
			var v values
			old := s.gpu(g.Index)
			if old != nil {
				v = values{policy: int64(old.Policy), maxInst: int64(old.MaxInst), prio: int64(old.PrioRatio),
					hasPolicy: true, hasMaxInst: true, hasPrio: true}
			}
			var mine []target
			for _, si := range s.Instances {
				if in := g.Instance(si.Container.ID); si.GPU == g.Index && in != nil {
					mine = append(mine, target{c: si.Container, in: *in, weight: si.Weight,
						memsize: si.Memsize, highprio: si.HighPrio})
				}
			}
			changes = append(changes, order(v, g, old != nil, mine)...)
		}
		return Apply(tx, changes)
	})
	return changes, err
}

// defChange sets default_memsize from old to new bytes.
func defChange(old, new uint64) Change {
	return Change{
		What: fmt.Sprintf("default_memsize %d -> %d", old, new),
		Do:   func(tx procfs.Tx) error { return tx.SetDefaultMemsize(int64(new)) },
		Undo: func(tx procfs.Tx) error { return tx.SetDefaultMemsize(int64(old)) },
	}
}
