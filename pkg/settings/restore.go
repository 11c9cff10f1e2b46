package settings

import (
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// Saved is what docker cgpu upgrade keeps of the tree before it replaces the kernel
// module: the values of the instances of the containers it restarts (a restarted
// container registers from its environment, which does not know what docker cgpu set
// changed since). The node's and each GPU's settings are upgrade.sh's to carry over: it
// writes them back as soon as the new module loads, before any container registers, so
// that they are restored in one place.
type Saved struct {
	Instances []SavedInstance
}

// SavedInstance is one container's instance on one GPU, as it was.
type SavedInstance struct {
	Container Container
	GPU       int
	procfs.Instance
}

// Save records the instances of containers in st.
func Save(st *procfs.State, containers []Container) Saved {
	var s Saved
	for _, g := range st.GPUs {
		for _, c := range containers {
			if in := g.Instance(c.ID); in != nil {
				s.Instances = append(s.Instances, SavedInstance{Container: c, GPU: g.Index, Instance: *in})
			}
		}
	}
	return s
}

// Restore writes back the instance values the tree no longer has of s, in the order
// docker cgpu set writes (each step one the kernel accepts), all or nothing. It returns
// the changes: none when everything carried over. Instances whose container has none now
// are left out.
func Restore(t procfs.Tree, s Saved) ([]Change, error) {
	var changes []Change
	err := t.Update(func(tx procfs.Tx) error {
		st := tx.State()
		changes = nil
		for gi := range st.GPUs {
			g := &st.GPUs[gi]
			var mine []target
			for _, si := range s.Instances {
				if in := g.Instance(si.Container.ID); si.GPU == g.Index && in != nil {
					mine = append(mine, target{c: si.Container, in: *in, weight: si.Weight,
						memsize: si.Memsize, highprio: si.HighPrio})
				}
			}
			changes = append(changes, order(values{}, g, false, mine)...)
		}
		return Apply(tx, changes)
	})
	return changes, err
}
