package procfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/uapi"
	"github.com/cgpu-project/cgpu/pkg/version"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOpenPicksBackend(t *testing.T) {
	tr, err := Open("/proc/sys", 1)
	if err != nil || !tr.Kernel() {
		t.Fatalf("/proc/sys: kernel=%v err=%v, want the kernel backend", tr != nil && tr.Kernel(), err)
	}
	if _, err := Open("/proc/cgpu_km_not_loaded", 1); !errors.Is(err, ErrNoModule) || !strings.Contains(err.Error(), "CGPU_SIM=1") {
		t.Fatalf("missing procfs tree: %v", err)
	}
	for _, root := range []string{t.TempDir(), filepath.Join(t.TempDir(), "not", "yet")} {
		tr, err := Open(root, 1)
		if err != nil || tr.Kernel() {
			t.Fatalf("%s: err=%v, want the directory backend", root, err)
		}
	}
}

func TestDirReadOfMissingTreeCreatesNothing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proc")
	tr, _ := Open(root, 3)
	st, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.GPUs) != 3 || st.GPUs[2].MaxInst != uapi.MaxInstDefault || st.DefaultMemsize != 0 {
		t.Fatalf("state %+v", st)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read created %s", root)
	}
}

func TestDirLayoutAndDefaults(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proc")
	tr, _ := Open(root, 2)
	if err := tr.Update(func(Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"default_memsize": "0\n", "version": version.Version + "\n",
		"0/max_inst": "16\n", "0/policy": "1\n", "0/prio_ratio": "30\n", "0/free_weight": "16\n", "0/major": "0\n",
		"1/max_inst": "16\n",
	}
	for rel, data := range want {
		if got := readFile(t, filepath.Join(root, rel)); got != data {
			t.Errorf("%s = %q, want %q", rel, got, data)
		}
	}
	if !strings.HasPrefix(readFile(t, filepath.Join(root, "inst_ctl")), "add <gpu> <id>") {
		t.Error("inst_ctl does not print the usage")
	}
	// A second initialisation keeps what was changed.
	os.WriteFile(filepath.Join(root, "0", "policy"), []byte("3\n"), 0o644)
	tr.Update(func(Tx) error { return nil })
	if got := readFile(t, filepath.Join(root, "0", "policy")); got != "3\n" {
		t.Errorf("re-init overwrote policy: %q", got)
	}
}

func TestDirAddDelRoundTrip(t *testing.T) {
	root := t.TempDir()
	tr, _ := Open(root, 2)
	err := tr.Update(func(tx Tx) error {
		if err := tx.Add(AddRequest{GPU: 1, ID: idA, Memsize: 6335076761, Weight: 4, HighPrio: true}); err != nil {
			return err
		}
		if tx.State().GPU(1).FreeWeight != 12 {
			return fmt.Errorf("tx state not updated: %+v", tx.State().GPU(1))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "1", idA[:12])
	for name, data := range map[string]string{"id": idA[:12] + "\n", "memsize": "6335076761\n", "weight": "4\n",
		"highprio": "1\n", "meminfo": "Free: 6335076761\n"} {
		if got := readFile(t, filepath.Join(dir, name)); got != data {
			t.Errorf("%s = %q, want %q", name, got, data)
		}
	}
	if got := readFile(t, filepath.Join(root, "1", "free_weight")); got != "12\n" {
		t.Errorf("free_weight = %q", got)
	}
	st, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	in := st.GPU(1).Instance(idA)
	if in == nil || *in != (Instance{ID: idA[:12], Memsize: 6335076761, Weight: 4, HighPrio: true}) || st.GPU(1).FreeWeight != 12 {
		t.Fatalf("read back %+v", st.GPU(1))
	}
	if err := tr.Update(func(tx Tx) error { return tx.Del(1, idA) }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("instance directory left behind")
	}
	if got := readFile(t, filepath.Join(root, "1", "free_weight")); got != "16\n" {
		t.Errorf("free_weight after del = %q", got)
	}
	if err := tr.Update(func(tx Tx) error { return tx.Del(1, idA) }); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("second del: %v", err)
	}
}

func TestDirSetters(t *testing.T) {
	root := t.TempDir()
	tr, _ := Open(root, 1)
	err := tr.Update(func(tx Tx) error {
		for _, step := range []func() error{
			func() error { return tx.Add(AddRequest{GPU: 0, ID: idA, Memsize: 100, Weight: 1}) },
			func() error { return tx.SetGPU(0, KeyMaxInst, 4) },
			func() error { return tx.SetGPU(0, KeyPolicy, 2) },
			func() error { return tx.SetInstance(0, idA, KeyWeight, 3) },
			func() error { return tx.SetDefaultMemsize(1 << 30) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, data := range map[string]string{"0/max_inst": "4\n", "0/policy": "2\n", "0/free_weight": "1\n",
		"0/" + idA[:12] + "/weight": "3\n", "default_memsize": "1073741824\n"} {
		if got := readFile(t, filepath.Join(root, rel)); got != data {
			t.Errorf("%s = %q, want %q", rel, got, data)
		}
	}
	// Refused writes change no file.
	os.WriteFile(filepath.Join(root, "0", idA[:12], "meminfo"), []byte("Free: 0\nPID: 7 Mem: 100\n"), 0o644)
	for _, bad := range []func(Tx) error{
		func(tx Tx) error { return tx.SetGPU(0, KeyMaxInst, 2) },
		func(tx Tx) error { return tx.SetGPU(0, KeyPolicy, 9) },
		func(tx Tx) error { return tx.SetInstance(0, idA, KeyWeight, 5) },
		func(tx Tx) error { return tx.SetInstance(0, idA, KeyMemsize, 99) },
		func(tx Tx) error { return tx.SetDefaultMemsize(-1) },
	} {
		if err := tr.Update(bad); err == nil {
			t.Error("bad write accepted")
		}
	}
	for rel, data := range map[string]string{"0/max_inst": "4\n", "0/policy": "2\n",
		"0/" + idA[:12] + "/weight": "3\n", "0/" + idA[:12] + "/memsize": "100\n", "default_memsize": "1073741824\n"} {
		if got := readFile(t, filepath.Join(root, rel)); got != data {
			t.Errorf("after refused writes %s = %q, want %q", rel, got, data)
		}
	}
}

// Concurrent registrations each read the tree, decide, and write under the root's lock:
// however they interleave, max_inst bounds how many get in.
func TestDirConcurrentAddsNeverPassMaxInst(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tr, _ := Open(root, 1)
			err := tr.Update(func(tx Tx) error {
				return tx.Add(AddRequest{GPU: 0, ID: fmt.Sprintf("%012x", i), Memsize: 1, Weight: 1})
			})
			if err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			} else if !errors.Is(err, syscall.ENOSPC) {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	tr, _ := Open(root, 1)
	st, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if ok != uapi.MaxInstDefault || len(st.GPU(0).Instances) != uapi.MaxInstDefault || st.GPU(0).FreeWeight != 0 {
		t.Fatalf("%d adds succeeded, tree has %d instances, free_weight %d; want %d, %d, 0",
			ok, len(st.GPU(0).Instances), st.GPU(0).FreeWeight, uapi.MaxInstDefault, uapi.MaxInstDefault)
	}
}

// The kernel backend writes inst_ctl commands and value files as the module parses them.
func TestKernelWritesCommands(t *testing.T) {
	root := t.TempDir()
	d, _ := Open(root, 1)
	d.Update(func(Tx) error { return nil })
	os.WriteFile(filepath.Join(root, "inst_ctl"), nil, 0o644)
	k := kernelTree{root: root}
	err := k.Update(func(tx Tx) error {
		return tx.Add(AddRequest{GPU: 0, ID: idA, Memsize: 42, Weight: 2, HighPrio: true, UUID: "GPU-x"})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "add 0 " + idA + " memsize=42 weight=2 highprio=1 uuid=GPU-x\n"
	if got := readFile(t, filepath.Join(root, "inst_ctl")); got != want {
		t.Errorf("inst_ctl got %q, want %q", got, want)
	}
	if err := k.Update(func(tx Tx) error { return tx.SetGPU(0, KeyPolicy, 4) }); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(root, "0", "policy")); got != "4\n" {
		t.Errorf("policy got %q", got)
	}
	if got := InstCtlDel(3, idB); got != "del 3 "+idB+"\n" {
		t.Errorf("del command %q", got)
	}
	if got := InstCtlAdd(AddRequest{GPU: 1, ID: idB}); got != "add 1 "+idB+" weight=0 highprio=0\n" {
		t.Errorf("add without memsize: %q", got)
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	root := t.TempDir()
	d, _ := Open(root, 1)
	d.Update(func(Tx) error { return nil })
	os.WriteFile(filepath.Join(root, "0", "max_inst"), []byte("many\n"), 0o644)
	if _, err := d.Read(); err == nil || !strings.Contains(err.Error(), "max_inst") {
		t.Fatalf("err = %v, want it to name max_inst", err)
	}
}

func TestReadMeminfo(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proc")
	tr, _ := Open(root, 1)
	if err := tr.Update(func(tx Tx) error { return tx.Add(AddRequest{GPU: 0, ID: idA, Memsize: 1000, Weight: 1}) }); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMeminfo(root, 0, idA)
	if err != nil || m.Free != 1000 || len(m.Procs) != 0 || m.Held() != 0 {
		t.Fatalf("fresh instance: %+v, %v", m, err)
	}
	os.WriteFile(filepath.Join(root, "0", idA[:12], "meminfo"), []byte("Free: 600\nPID: 7 Mem: 100\nPID: 9 Mem: 300\n"), 0o644)
	m, err = ReadMeminfo(root, 0, idA[:12])
	want := Meminfo{Free: 600, Procs: []ProcMem{{7, 100}, {9, 300}}}
	if err != nil || m.Free != want.Free || len(m.Procs) != 2 || m.Procs[0] != want.Procs[0] || m.Procs[1] != want.Procs[1] || m.Held() != 400 {
		t.Fatalf("got %+v, %v; want %+v", m, err, want)
	}
	if _, err := ReadMeminfo(root, 0, "bbbbbbbbbbbb"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing instance: %v", err)
	}
}
