package stat_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
	"github.com/cgpu-project/cgpu/pkg/uapi"
	"golang.org/x/sys/unix"
)

func simTree(t testing.TB, gpus int) procfs.Tree {
	tr, err := procfs.Open(filepath.Join(t.TempDir(), "proc"), gpus)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func source(tr procfs.Tree, gpus []gpu.GPU, containers []stat.Container, dockerErr error) stat.Source {
	return stat.Source{Tree: tr, GPUs: gpus, Simulated: true,
		Containers: func(context.Context) ([]stat.Container, error) { return containers, dockerErr },
		Now:        func() time.Time { return time.Unix(1700000000, 0).UTC() }}
}

// Every figure comes from the tree on disk: values written through the tree's own
// writer, meminfo as the kernel prints it.
func TestGatherReadsTheTree(t *testing.T) {
	tr := simTree(t, 2)
	gpus, _ := gpu.Sim{Count: 2, MemMiB: 15109}.GPUs()
	err := tr.Update(func(tx procfs.Tx) error {
		return errors.Join(tx.Add(procfs.AddRequest{GPU: 1, ID: stattest.IDWeb, Memsize: 3 << 30, Weight: 4}),
			tx.SetGPU(1, procfs.KeyMaxInst, 8), tx.SetGPU(1, procfs.KeyPrioRatio, 50), tx.SetDefaultMemsize(5))
	})
	if err != nil {
		t.Fatal(err)
	}
	mi := filepath.Join(tr.Root(), "1", stattest.IDWeb[:12], "meminfo")
	if err := os.WriteFile(mi, []byte(fmt.Sprintf("Free: %d\nPID: 42 Mem: 1000\n", 3<<30-1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := source(tr, gpus, []stat.Container{{ID: stattest.IDWeb, Name: "web", State: "running"}}, nil).Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Root != tr.Root() || s.Kernel || !s.Simulated || s.DefaultMemsize != 5 || len(s.GPUs) != 2 || len(s.GPUs[0].Instances) != 0 {
		t.Fatalf("snapshot %+v", s)
	}
	g := s.GPUs[1]
	in := g.Instances[0]
	if g.MaxInst != 8 || g.FreeWeight != 4 || g.PrioRatio != 50 || g.PolicyName != "preemptive" || g.MemoryGiven != 3<<30 ||
		g.MemoryUsed != 1000 || in.Container.Name != "web" || in.Used != 1000 || in.Free != 3<<30-1000 ||
		in.Processes[0] != (stat.Process{42, 1000}) || in.Weight != 4 || *in.ComputeShare != 100 {
		t.Fatalf("GPU 1 %+v instance %+v", g, in)
	}
}

func TestGatherWithoutTree(t *testing.T) {
	tr, err := procfs.Open("/proc/cgpu_km_test_absent", 1)
	if err == nil {
		_, err = source(tr, nil, nil, nil).Gather(context.Background())
	}
	if !errors.Is(err, procfs.ErrNoModule) {
		t.Fatalf("err = %v, want ErrNoModule", err)
	}
}

type fakeSched struct {
	figs   map[string]uapi.InstStat
	asked  []string
	closed bool
}

func (f *fakeSched) Read(gpu int, id string) (uapi.InstStat, error) {
	f.asked = append(f.asked, fmt.Sprint(gpu, "/", id))
	if st, ok := f.figs[id]; ok {
		return st, nil
	}
	return uapi.InstStat{}, unix.ENOENT
}

func (f *fakeSched) Close() error { f.closed = true; return nil }

// Each instance is asked for once per snapshot on one file, closed after it; one the
// module does not answer for stays unknown, and a file that does not open (a frozen
// module, not root) leaves every figure unknown, with no error.
func TestGatherReadsScheduler(t *testing.T) {
	tr := simTree(t, 2)
	err := tr.Update(func(tx procfs.Tx) error {
		return errors.Join(tx.Add(procfs.AddRequest{GPU: 0, ID: stattest.IDWeb, Memsize: 1 << 30, Weight: 1}),
			tx.Add(procfs.AddRequest{GPU: 1, ID: stattest.IDDB, Memsize: 1 << 30, Weight: 1}))
	})
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeSched{figs: map[string]uapi.InstStat{stattest.IDWeb[:12]: {Last_second_used_ns: 250000000,
		Sched: uapi.SchedStat{Policy: 1, Used_ns: 3e9, Grants: 4}}}}
	src := source(tr, nil, nil, nil)
	src.OpenSched = func() (stat.SchedReader, error) { return fake, nil }
	s, err := src.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	web, db := s.GPUs[0].Instances[0], s.GPUs[1].Instances[0]
	if *web.Utilization != 25 || web.Sched.GPUSeconds != 3 || *s.GPUs[0].Utilization != 25 ||
		db.Utilization != nil || db.Sched != nil || s.GPUs[1].Utilization != nil {
		t.Fatalf("web %+v db %+v", web, db)
	}
	if !fake.closed || fmt.Sprint(fake.asked) != "[0/"+stattest.IDWeb[:12]+" 1/"+stattest.IDDB[:12]+"]" {
		t.Fatalf("asked %v, closed %v", fake.asked, fake.closed)
	}
	src.OpenSched = func() (stat.SchedReader, error) { return nil, unix.EAGAIN }
	if s, err = src.Gather(context.Background()); err != nil || s.GPUs[0].Instances[0].Utilization != nil {
		t.Fatalf("a file that does not open: %v, %+v", err, s)
	}
}
