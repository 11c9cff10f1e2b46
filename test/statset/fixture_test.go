package statset

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// The node every test starts from: web (2 GiB on GPU 0, weight 1), db (3 GiB on GPUs 0
// and 1, weight 2, high priority), plain (no cGPU), and an orphan instance on GPU 1
// (weight 1, 1 GiB) whose container never existed. web's process holds 512 MiB on GPU 0,
// db's 1.5 GiB on GPU 1. Each test puts back what it changes (baseline).
const orphan = "0bad0bad0bad"

var (
	fx struct {
		tr           procfs.Tree
		web, db, pln container
		held         holder
		webPID       int
		dbPID        int
		ready        bool
	}
	gib2, gib3 uint64 // web's and db's memsize: 2 and 3 GiB of a 15 GiB T4
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fx.tr != nil {
		fx.held.releaseAll()
		fx.tr.Update(func(tx procfs.Tx) error { return tx.Del(1, orphan) })
		docker("rm", "-f", "web", "db", "plain")
	}
	os.Exit(code)
}

var fixtureOnce sync.Once

// fixture sets the node up for the first test that needs it; later tests share it.
func fixture(t *testing.T) {
	t.Helper()
	setup(t)
	fixtureOnce.Do(func() {
		img := os.Getenv("CGPU_E2E_IMAGE")
		must(t, "cgpu", "run", "-d", "--name", "web", "--gpu-mem", "2", "--gpus", "device=0", img, "sleep", "3600")
		must(t, "cgpu", "run", "-d", "--name", "db", "--gpu-mem", "3", "--gpus", "device=0,1", "--weight", "2", "--high-prio", img, "sleep", "3600")
		must(t, "run", "-d", "--name", "plain", img, "sleep", "3600")
		n := openNode(t)
		fx.tr, fx.held = n.Tree, newHolder(n.Tree)
		gib2, gib3 = alloc.MemBytes(2, 15, n.GPUs[0].MemoryBytes), alloc.MemBytes(3, 15, n.GPUs[0].MemoryBytes)
		fx.web, fx.db, fx.pln = inspect(t, "web"), inspect(t, "db"), inspect(t, "plain")
		if err := addOrphan(); err != nil {
			t.Fatal(err)
		}
		fx.webPID = fx.held.hold(t, fx.web, 0, 512<<20)
		fx.dbPID = fx.held.hold(t, fx.db, 1, 3<<29)
		fx.ready = true
	})
	if !fx.ready {
		t.Fatal("the fixture could not be set up (see the first test)")
	}
	t.Cleanup(func() { baseline(t) })
}

func addOrphan() error {
	return fx.tr.Update(func(tx procfs.Tx) error {
		return tx.Add(procfs.AddRequest{GPU: 1, ID: orphan, Memsize: 1 << 30, Weight: 1})
	})
}

// baseline puts the fixture's values back, through the tree's own writer.
func baseline(t *testing.T) {
	t.Helper()
	err := fx.tr.Update(func(tx procfs.Tx) error {
		var errs []error
		set := func(err error) { errs = append(errs, err) }
		set(tx.SetDefaultMemsize(0))
		// Room for any weights first, whatever a test left, then the fixture's values.
		for g := 0; g < 2; g++ {
			set(tx.SetGPU(g, procfs.KeyMaxInst, uapi.MaxInstMax))
		}
		for _, c := range []struct {
			id       string
			gpus     []int
			weight   int64
			mem      uint64
			highprio int64
		}{{fx.web.ID, []int{0}, 1, gib2, 0}, {fx.db.ID, []int{0, 1}, 2, gib3, 1}} {
			for _, g := range c.gpus {
				set(tx.SetInstance(g, c.id, procfs.KeyWeight, c.weight))
				set(tx.SetInstance(g, c.id, procfs.KeyMemsize, int64(c.mem)))
				set(tx.SetInstance(g, c.id, procfs.KeyHighPrio, c.highprio))
			}
		}
		for g := 0; g < 2; g++ {
			set(tx.SetGPU(g, procfs.KeyMaxInst, uapi.MaxInstDefault))
			set(tx.SetGPU(g, procfs.KeyPolicy, uapi.PolicyDefault))
			set(tx.SetGPU(g, procfs.KeyPrioRatio, uapi.PrioRatioDefault))
		}
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatal(err)
	}
}
