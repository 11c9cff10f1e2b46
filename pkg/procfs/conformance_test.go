package procfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// The directory backend must refuse what the kernel module refuses, with the same errno.
// The same steps run against both: the directory tree always, the module's tree when
// CGPU_KERNEL_TREE names it (test/suites/45-procfs-kernel.sh loads cgpu_km in a VM).

func TestConformanceDir(t *testing.T) {
	tr, err := Open(filepath.Join(t.TempDir(), "proc"), 2)
	if err != nil {
		t.Fatal(err)
	}
	conformance(t, tr)
}

func TestConformanceKernel(t *testing.T) {
	root := os.Getenv("CGPU_KERNEL_TREE")
	if root == "" {
		t.Skip("needs the cgpu_km module loaded; CGPU_KERNEL_TREE names its tree")
	}
	tr, err := Open(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Kernel() {
		t.Fatalf("%s is not on procfs", root)
	}
	conformance(t, tr)
}

func conformance(t *testing.T, tr Tree) {
	const a, b, c = "aaaaaaaaaaaa0000", "bbbbbbbbbbbb", "cccccccccccc"
	st, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.GPUs) < 2 || st.DefaultMemsize != 0 {
		t.Fatalf("fresh tree: %+v", st)
	}
	for _, g := range st.GPUs {
		if g.MaxInst != uapi.MaxInstDefault || g.Policy != uapi.PolicyDefault || g.PrioRatio != uapi.PrioRatioDefault ||
			g.FreeWeight != uapi.MaxInstDefault || len(g.Instances) != 0 {
			t.Fatalf("GPU %d defaults: %+v", g.Index, g)
		}
	}
	step := func(name string, want syscall.Errno, fn func(Tx) error) {
		t.Helper()
		err := tr.Update(fn)
		if want == 0 && err != nil || want != 0 && !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", name, err, want)
		}
	}
	step("add", 0, func(tx Tx) error {
		return tx.Add(AddRequest{GPU: 0, ID: a, Memsize: 1 << 30, Weight: 2, HighPrio: true, UUID: "GPU-c6a1d000-0000-4000-8000-000000000000"})
	})
	st, err = tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	in := st.GPU(0).Instance(a)
	if in == nil || *in != (Instance{ID: a[:uapi.IDLen], Memsize: 1 << 30, Weight: 2, HighPrio: true}) || st.GPU(0).FreeWeight != uapi.MaxInstDefault-2 {
		t.Fatalf("after add: %+v", st.GPU(0))
	}
	step("duplicate", syscall.EEXIST, func(tx Tx) error { return tx.Add(AddRequest{GPU: 0, ID: a[:uapi.IDLen], Memsize: 1, Weight: 1}) })
	step("unknown GPU", syscall.ENODEV, func(tx Tx) error { return tx.Add(AddRequest{GPU: 99, ID: b, Memsize: 1, Weight: 1}) })
	step("bad id", syscall.EINVAL, func(tx Tx) error { return tx.Add(AddRequest{GPU: 0, ID: "XYZ", Memsize: 1, Weight: 1}) })
	step("no memsize, no default", syscall.EINVAL, func(tx Tx) error { return tx.Add(AddRequest{GPU: 0, ID: b, Weight: 1}) })
	step("weight above max_inst", syscall.EINVAL, func(tx Tx) error { return tx.Add(AddRequest{GPU: 0, ID: b, Memsize: 1, Weight: 17}) })
	step("weight past free", syscall.ENOSPC, func(tx Tx) error { return tx.Add(AddRequest{GPU: 0, ID: b, Memsize: 1, Weight: 15}) })
	step("policy 2", 0, func(tx Tx) error { return tx.SetGPU(0, KeyPolicy, 2) })
	step("policy 6", syscall.EINVAL, func(tx Tx) error { return tx.SetGPU(0, KeyPolicy, 6) })
	step("prio_ratio 19", syscall.EINVAL, func(tx Tx) error { return tx.SetGPU(0, KeyPrioRatio, 19) })
	step("max_inst below weight", syscall.EBUSY, func(tx Tx) error { return tx.SetGPU(0, KeyMaxInst, 1) })
	step("max_inst 26", syscall.EINVAL, func(tx Tx) error { return tx.SetGPU(0, KeyMaxInst, 26) })
	step("weight 3", 0, func(tx Tx) error { return tx.SetInstance(0, a, KeyWeight, 3) })
	step("weight 17", syscall.EINVAL, func(tx Tx) error { return tx.SetInstance(0, a, KeyWeight, 17) })
	step("highprio 2", syscall.EINVAL, func(tx Tx) error { return tx.SetInstance(0, a, KeyHighPrio, 2) })
	step("memsize 0", syscall.EINVAL, func(tx Tx) error { return tx.SetInstance(0, a, KeyMemsize, 0) })
	step("default_memsize", 0, func(tx Tx) error { return tx.SetDefaultMemsize(1 << 20) })
	step("add with default", 0, func(tx Tx) error { return tx.Add(AddRequest{GPU: 1, ID: b, Weight: 1}) })
	step("max_inst 3", 0, func(tx Tx) error { return tx.SetGPU(0, KeyMaxInst, 3) })
	step("max_inst reached", syscall.ENOSPC, func(tx Tx) error {
		if err := tx.SetInstance(0, a, KeyWeight, 1); err != nil {
			return err
		}
		if err := tx.Add(AddRequest{GPU: 0, ID: b, Memsize: 1, Weight: 1}); err != nil {
			return err
		}
		if err := tx.Add(AddRequest{GPU: 0, ID: c, Memsize: 1, Weight: 1}); err != nil {
			return err
		}
		return tx.Add(AddRequest{GPU: 0, ID: "dddddddddddd", Memsize: 1, Weight: 0})
	})
	st, err = tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if g := st.GPU(0); g.Policy != 2 || g.MaxInst != 3 || len(g.Instances) != 3 || g.FreeWeight != 0 ||
		st.GPU(1).Instance(b) == nil || st.GPU(1).Instance(b).Memsize != 1<<20 || st.DefaultMemsize != 1<<20 {
		t.Fatalf("after the steps: %+v", st)
	}
	step("cleanup", 0, func(tx Tx) error {
		for _, d := range []struct {
			gpu int
			id  string
		}{{0, a}, {0, b}, {0, c}, {1, b}} {
			if err := tx.Del(d.gpu, d.id); err != nil {
				return err
			}
		}
		if err := tx.SetGPU(0, KeyMaxInst, uapi.MaxInstDefault); err != nil {
			return err
		}
		if err := tx.SetGPU(0, KeyPolicy, uapi.PolicyDefault); err != nil {
			return err
		}
		return tx.SetDefaultMemsize(0)
	})
	step("del unknown", syscall.ENOENT, func(tx Tx) error { return tx.Del(0, a) })
}
