package settings

import (
	"errors"
	"fmt"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// Apply writes the changes in order. When the tree refuses one, the ones already written
// are written back, last first, and the error says what was refused and why, in the
// tree's (the kernel's) own words.
func Apply(tx procfs.Tx, changes []Change) error {
	for i, c := range changes {
		err := c.Do(tx)
		if err == nil {
			continue
		}
		refused := fmt.Errorf("%s: refused: %w", c.What, err)
		var failed []error
		for j := i - 1; j >= 0; j-- {
			if uerr := changes[j].Undo(tx); uerr != nil {
				failed = append(failed, fmt.Errorf("undoing %s: %w", changes[j].What, uerr))
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("%w; %w; the tree is left as docker cgpu stat shows", refused, errors.Join(failed...))
		}
		if i == 0 {
			return fmt.Errorf("%w; nothing was changed", refused)
		}
		return fmt.Errorf("%w; nothing was changed (the %d change(s) before it were undone)", refused, i)
	}
	return nil
}

// Set plans and applies r under the tree's lock, so no other cgpu process changes the
// tree between the check and the writes. It returns the changes made.
func Set(t procfs.Tree, gpus []gpu.GPU, r Request) ([]Change, error) {
	var changes []Change
	err := t.Update(func(tx procfs.Tx) error {
		held := func(gpu int, id string) (uint64, error) {
			m, err := procfs.ReadMeminfo(t.Root(), gpu, id)
			return m.Held(), err
		}
		var err error
		if changes, err = Plan(r, gpus, tx.State(), held); err != nil {
			return err
		}
		return Apply(tx, changes)
	})
	return changes, err
}
