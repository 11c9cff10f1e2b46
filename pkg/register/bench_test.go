package register

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// BenchmarkRegisterFill: registering 16 GPUs x 25 instances one container at a time in the
// simulated tree (lock, read the whole tree, decide, write), reported per registration.
func BenchmarkRegisterFill(b *testing.B) {
	gpus, _ := gpu.Sim{Count: 16, MemMiB: 40960}.GPUs()
	in, err := alloc.ParseEnv(map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "1"})
	if err != nil {
		b.Fatal(err)
	}
	const perNode = 16 * uapi.MaxInstMax
	for i := 0; i < b.N; i += perNode {
		b.StopTimer()
		tr, _ := procfs.Open(filepath.Join(b.TempDir(), "proc"), 16)
		tr.Update(func(tx procfs.Tx) error {
			for g := 0; g < 16; g++ {
				if err := tx.SetGPU(g, procfs.KeyMaxInst, uapi.MaxInstMax); err != nil {
					return err
				}
			}
			return nil
		})
		b.StartTimer()
		for j := 0; j < perNode && i+j < b.N; j++ {
			if _, err := Register(tr, gpus, fmt.Sprintf("%012x", j+1), in); err != nil {
				b.Fatal(err)
			}
		}
	}
}
