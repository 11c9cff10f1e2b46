// Package register turns a container's intent into instances in the cgpu tree, and
// removes them again. Deciding and registering happen under the tree's lock as one step,
// so concurrent containers never overbook a GPU.
package register

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// Register decides the container's plan against the tree as it is now and registers one
// instance per GPU of it; on any refusal nothing stays registered. Instances the same
// container id still has (a create after a crash skipped the delete) are replaced.
func Register(t procfs.Tree, gpus []gpu.GPU, id string, in alloc.Intent) (alloc.Plan, error) {
	var plan alloc.Plan
	err := t.Update(func(tx procfs.Tx) error {
		if err := delAll(tx, id); err != nil {
			return err
		}
		p, err := alloc.Decide(in, gpus, tx.State())
		if err != nil || !p.Enabled {
			plan = p
			return err
		}
		for i, a := range p.GPUs {
			err := tx.Add(procfs.AddRequest{GPU: a.Index, ID: id, Memsize: a.MemoryBytes,
				Weight: a.Weight, HighPrio: a.HighPrio, UUID: a.UUID})
			if err != nil {
				err = fmt.Errorf("registering container %s on GPU %d: %w", procfs.ShortID(id), a.Index, err)
				for _, done := range p.GPUs[:i] {
					if derr := tx.Del(done.Index, id); derr != nil {
						err = fmt.Errorf("%w; undoing GPU %d: %v", err, done.Index, derr)
					}
				}
				return err
			}
		}
		plan = p
		return nil
	})
	return plan, err
}

// Bind ties every instance of the container to its cgroup, named by the pid of a task in
// it (the container's init, once the next runtime has made it): until then no process
// is taken for the container.
func Bind(t procfs.Tree, id string, pid int) error {
	return t.Update(func(tx procfs.Tx) error {
		for _, g := range tx.State().GPUs {
			if g.Instance(id) == nil {
				continue
			}
			if err := tx.Bind(g.Index, id, pid); err != nil {
				return fmt.Errorf("binding container %s on GPU %d to pid %d: %w", procfs.ShortID(id), g.Index, pid, err)
			}
		}
		return nil
	})
}

// Unregister removes every instance of the container; a container without any is fine,
// since delete runs for every container of the runtime, and may run twice.
func Unregister(t procfs.Tree, id string) error {
	st, err := t.Read()
	if err != nil {
		return err
	}
	if !has(st, id) {
		return nil
	}
	return t.Update(func(tx procfs.Tx) error { return delAll(tx, id) })
}

func has(st *procfs.State, id string) bool {
	for i := range st.GPUs {
		if st.GPUs[i].Instance(id) != nil {
			return true
		}
	}
	return false
}

func delAll(tx procfs.Tx, id string) error {
	for _, g := range tx.State().GPUs {
		if g.Instance(id) == nil {
			continue
		}
		if err := tx.Del(g.Index, id); err != nil && !errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("unregistering container %s from GPU %d: %w", procfs.ShortID(id), g.Index, err)
		}
	}
	return nil
}
