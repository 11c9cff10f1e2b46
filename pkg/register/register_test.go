package register

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

const id1 = "1111111111111111111111111111111111111111111111111111111111111111"

func setup(t *testing.T, n int) (procfs.Tree, []gpu.GPU) {
	t.Helper()
	gpus, _ := gpu.Sim{Count: n, MemMiB: gpu.SimDefaultMemMiB}.GPUs()
	tr, err := procfs.Open(filepath.Join(t.TempDir(), "proc"), n)
	if err != nil {
		t.Fatal(err)
	}
	return tr, gpus
}

func intent(t *testing.T, env map[string]string) alloc.Intent {
	t.Helper()
	in, err := alloc.ParseEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestRegisterAndUnregister(t *testing.T) {
	tr, gpus := setup(t, 4)
	p, err := Register(tr, gpus, id1, intent(t, map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "3,1", "ALIYUN_COM_GPU_VISIBLE_DEVICES": "2,0", "ALIYUN_COM_GPU_HIGH_PRIO": "1"}))
	if err != nil || len(p.GPUs) != 2 {
		t.Fatalf("%+v %v", p, err)
	}
	st, _ := tr.Read()
	in2, in0 := st.GPU(2).Instance(id1), st.GPU(0).Instance(id1)
	if in2 == nil || in0 == nil || in2.Memsize != p.GPUs[0].MemoryBytes || in0.Memsize != p.GPUs[1].MemoryBytes || !in0.HighPrio || in0.Weight != 1 {
		t.Fatalf("tree after register: GPU 2 %+v, GPU 0 %+v, plan %+v", in2, in0, p)
	}
	if in2.Memsize <= in0.Memsize {
		t.Fatalf("list order lost: GPU 2 (3 GiB) has %d, GPU 0 (1 GiB) has %d", in2.Memsize, in0.Memsize)
	}
	// Registering the same container again replaces its instances instead of failing.
	if _, err := Register(tr, gpus, id1, intent(t, map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "5", "ALIYUN_COM_GPU_VISIBLE_DEVICES": "1"})); err != nil {
		t.Fatal(err)
	}
	st, _ = tr.Read()
	if st.GPU(0).Instance(id1) != nil || st.GPU(2).Instance(id1) != nil || st.GPU(1).Instance(id1) == nil {
		t.Fatalf("re-register left %+v", st)
	}
	for i := 0; i < 2; i++ {
		if err := Unregister(tr, id1); err != nil {
			t.Fatalf("unregister #%d: %v", i+1, err)
		}
	}
	st, _ = tr.Read()
	for _, g := range st.GPUs {
		if len(g.Instances) != 0 || g.FreeWeight != g.MaxInst {
			t.Fatalf("GPU %d after unregister: %+v", g.Index, g)
		}
	}
}

func TestUnregisterOfMissingTreeCreatesNothing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proc")
	tr, _ := procfs.Open(root, 0)
	if err := Unregister(tr, id1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unregister created %s", root)
	}
}

// A refusal on the second GPU leaves nothing on the first.
func TestRegisterIsAllOrNothing(t *testing.T) {
	tr, gpus := setup(t, 2)
	if _, err := Register(tr, gpus, "2222222222222222", intent(t, map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "10", "ALIYUN_COM_GPU_VISIBLE_DEVICES": "1"})); err != nil {
		t.Fatal(err)
	}
	_, err := Register(tr, gpus, id1, intent(t, map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "6", "NVIDIA_VISIBLE_DEVICES": "all"}))
	var e *alloc.Error
	if !errors.As(err, &e) || e.GPU == nil || e.GPU.Index != 1 {
		t.Fatalf("err = %v, want GPU 1 refused", err)
	}
	st, _ := tr.Read()
	if st.GPU(0).Instance(id1) != nil {
		t.Fatal("GPU 0 kept an instance of a refused container")
	}
}

func TestDisabledRegistersNothing(t *testing.T) {
	tr, gpus := setup(t, 1)
	p, err := Register(tr, gpus, id1, intent(t, map[string]string{}))
	if err != nil || p.Enabled {
		t.Fatalf("%+v %v", p, err)
	}
	st, _ := tr.Read()
	if len(st.GPU(0).Instances) != 0 {
		t.Fatal("registered without memory")
	}
}

// Many containers at once, each asking for 4 GiB of a 15 GiB GPU: exactly three fit.
func TestConcurrentRegistrationsNeverOverbook(t *testing.T) {
	tr, gpus := setup(t, 1)
	in := intent(t, map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "4"})
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tr, _ := procfs.Open(tr.Root(), 1)
			_, errs[i] = Register(tr, gpus, fmt.Sprintf("%012x", i+1), in)
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		var e *alloc.Error
		switch {
		case err == nil:
			ok++
		case !errors.As(err, &e):
			t.Errorf("unexpected failure: %v", err)
		}
	}
	st, _ := tr.Read()
	if ok != 3 || len(st.GPU(0).Instances) != 3 || st.GPU(0).MemUsed() > gpus[0].MemoryBytes {
		t.Fatalf("%d registered, tree holds %d using %d of %d bytes", ok, len(st.GPU(0).Instances), st.GPU(0).MemUsed(), gpus[0].MemoryBytes)
	}
}
