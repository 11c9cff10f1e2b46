package alloc

import (
	"fmt"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// A full node: 16 GPUs at max_inst 25, each already running 24 instances of 0.5 GiB.
func fullNode(b *testing.B) ([]gpu.GPU, *procfs.State) {
	gpus, _ := gpu.Sim{Count: 16, MemMiB: 40960}.GPUs()
	st := procfs.NewState(16)
	for g := range st.GPUs {
		st.GPUs[g].MaxInst, st.GPUs[g].FreeWeight = uapi.MaxInstMax, uapi.MaxInstMax
		for i := 0; i < uapi.MaxInstMax-1; i++ {
			if _, err := st.Add(procfs.AddRequest{GPU: g, ID: fmt.Sprintf("%012x", g*100+i), Memsize: GiB / 2, Weight: 1}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return gpus, st
}

func benchDecide(b *testing.B, env map[string]string) {
	gpus, st := fullNode(b)
	in, err := ParseEnv(env)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Decide(in, gpus, st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecidePlaced: the 25th instance, placed by best fit over 16 GPUs x 24 instances.
func BenchmarkDecidePlaced(b *testing.B) {
	benchDecide(b, map[string]string{EnvMemContainer: "2"})
}

// BenchmarkDecideAll16: one container on all 16 GPUs of the same node.
func BenchmarkDecideAll16(b *testing.B) {
	benchDecide(b, map[string]string{EnvMemContainer: "2", EnvNvidiaVisible: "all"})
}
