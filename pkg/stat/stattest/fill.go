package stattest

import (
	"fmt"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// Fill lays out a simulated tree of gpus GPUs at root, each at max_inst 25 with perGPU
// instances of 1 GiB: the benchmarks' full node. It returns the instances' container IDs.
func Fill(tb testing.TB, root string, gpus, perGPU int) []string {
	tr, err := procfs.Open(root, gpus)
	if err != nil {
		tb.Fatal(err)
	}
	var ids []string
	err = tr.Update(func(tx procfs.Tx) error {
		for g := 0; g < gpus; g++ {
			if err := tx.SetGPU(g, procfs.KeyMaxInst, uapi.MaxInstMax); err != nil {
				return err
			}
			for i := 0; i < perGPU; i++ {
				id := fmt.Sprintf("%012x%052d", g*100+i+1, 0)
				if err := tx.Add(procfs.AddRequest{GPU: g, ID: id, Memsize: 1 << 30, Weight: 1}); err != nil {
					return err
				}
				ids = append(ids, id)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return ids
}
