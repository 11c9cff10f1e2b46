package settings

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/procfs"
)

func plan(t *testing.T, tr procfs.Tree, r Request) []Change {
	t.Helper()
	gpus := nodeGPUs()
	st, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	changes, err := Plan(r, gpus, st, func(gpu int, id string) (uint64, error) {
		m, err := procfs.ReadMeminfo(tr.Root(), gpu, id)
		return m.Held(), err
	})
	if err != nil {
		t.Fatal(err)
	}
	return changes
}

func apply(tr procfs.Tree, changes []Change) error {
	return tr.Update(func(tx procfs.Tx) error { return Apply(tx, changes) })
}

// The order makes each step one the tree accepts; the reverse order, which a naive
// apply of the same changes could take, is refused by the tree itself.
func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup *Request
		r     Request
		want  []string
	}{
		{"raise max_inst before the weight needing it", nil,
			Request{Containers: []Container{web}, GPUs: "0", MaxInst: "25", Weight: "24"},
			[]string{"GPU 0: max_inst 16 -> 25", "web (aaaaaaaaaaaa) on GPU 0: weight 2 -> 24"}},
		{"lower the weight before max_inst", nil,
			Request{Containers: []Container{web}, GPUs: "0", MaxInst: "2", Weight: "1"},
			[]string{"web (aaaaaaaaaaaa) on GPU 0: weight 2 -> 1", "GPU 0: max_inst 16 -> 2"}},
		{"lower one weight before raising another", &Request{Containers: []Container{db}, Weight: "14"},
			Request{Containers: []Container{web, db}, GPUs: "0", Weight: "8"},
			[]string{"db (bbbbbbbbbbbb) on GPU 0: weight 14 -> 8", "web (aaaaaaaaaaaa) on GPU 0: weight 2 -> 8"}},
		{"a container named twice is changed once", nil,
			Request{Containers: []Container{web, web}, GPUs: "1", Weight: "3"},
			[]string{"web (aaaaaaaaaaaa) on GPU 1: weight 1 -> 3"}},
		{"shrink memory before growing", &Request{Containers: []Container{db}, Memsize: "8"},
			Request{Containers: []Container{web, db}, GPUs: "0", Memsize: "7"},
			[]string{"db (bbbbbbbbbbbb) on GPU 0: memsize 8449565218 -> 7393369565", "web (aaaaaaaaaaaa) on GPU 0: memsize 6337173913 -> 7393369565"}},
	} {
		tr, gpus := node(t)
		if tc.setup != nil {
			if _, err := Set(tr, gpus, *tc.setup); err != nil {
				t.Fatal(err)
			}
		}
		changes := plan(t, tr, tc.r)
		if got := whats(changes); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: order %q, want %q", tc.name, got, tc.want)
			continue
		}
		if len(changes) < 2 || tc.name == "shrink memory before growing" {
			// The tree does not refuse overbooking (run's rule, checked by Plan), so
			// there is no refusal to show for memory; the order is the check.
			continue
		}
		reversed := slices.Clone(changes)
		slices.Reverse(reversed)
		if err := apply(tr, reversed); !refusedByTree(err) {
			t.Errorf("%s: the reverse order gave %v, want the tree's refusal", tc.name, err)
		}
		if err := apply(tr, changes); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func refusedByTree(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EBUSY)
}

// failAt refuses the at-th write made through it (and, with undoToo, every later one),
// as a kernel refusal part-way would; writes go through to the real tree otherwise.
type failAt struct {
	procfs.Tx
	n, at   int
	undoToo bool
}

func (f *failAt) write(do func() error) error {
	f.n++
	if f.n == f.at || f.undoToo && f.n > f.at {
		return fmt.Errorf("writing to the tree: %w", syscall.EBUSY)
	}
	return do()
}

func (f *failAt) SetDefaultMemsize(v int64) error {
	return f.write(func() error { return f.Tx.SetDefaultMemsize(v) })
}
func (f *failAt) SetGPU(g int, k procfs.GPUKey, v int64) error {
	return f.write(func() error { return f.Tx.SetGPU(g, k, v) })
}
func (f *failAt) SetInstance(g int, id string, k procfs.InstanceKey, v int64) error {
	return f.write(func() error { return f.Tx.SetInstance(g, id, k, v) })
}
func (f *failAt) Add(r procfs.AddRequest) error { return f.write(func() error { return f.Tx.Add(r) }) }
func (f *failAt) Del(g int, id string) error    { return f.write(func() error { return f.Tx.Del(g, id) }) }

// All or nothing: a refusal at any step leaves every file of the tree as it was.
func TestRollback(t *testing.T) {
	r := Request{GPUs: "all", Policy: "fixed", MaxInst: "20", PrioRatio: "50", DefaultMemsize: "3",
		Containers: []Container{web, db}, Weight: "3", Memsize: "4", HighPrio: tBool(true)}
	tr, _ := node(t)
	n := len(plan(t, tr, r))
	if n != 16 {
		t.Fatalf("%d changes, want 16: %q", n, whats(plan(t, tr, r)))
	}
	for at := 1; at <= n; at++ {
		tr, _ := node(t)
		before := files(t, tr.Root())
		changes := plan(t, tr, r)
		err := tr.Update(func(tx procfs.Tx) error { return Apply(&failAt{Tx: tx, at: at}, changes) })
		want := fmt.Sprintf("%s: refused: writing to the tree: device or resource busy; nothing was changed", changes[at-1].What)
		if at > 1 {
			want += fmt.Sprintf(" (the %d change(s) before it were undone)", at-1)
		}
		if err == nil || err.Error() != want || !errors.Is(err, syscall.EBUSY) {
			t.Errorf("refused at %d: %v\nwant %s", at, err, want)
		}
		if after := files(t, tr.Root()); !reflect.DeepEqual(after, before) {
			t.Errorf("refused at %d: the tree changed", at)
		}
	}
	// When writing back fails too, the message says so rather than claim nothing changed.
	tr, _ = node(t)
	changes := plan(t, tr, r)
	err := tr.Update(func(tx procfs.Tx) error { return Apply(&failAt{Tx: tx, at: 3, undoToo: true}, changes) })
	if err == nil || !strings.Contains(err.Error(), "undoing "+changes[1].What) ||
		!strings.HasSuffix(err.Error(), "the tree is left as docker cgpu stat shows") || strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("undo failing: %v", err)
	}
}

func TestRemoveOrphans(t *testing.T) {
	tr, gpus := node(t)
	before := files(t, tr.Root())
	changes, err := Set(tr, gpus, Request{RemoveOrphans: []string{idA[:12]}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"orphan aaaaaaaaaaaa on GPU 0: removed", "orphan aaaaaaaaaaaa on GPU 1: removed"}; !reflect.DeepEqual(whats(changes), want) {
		t.Fatalf("changes %q, want %q", whats(changes), want)
	}
	st, _ := tr.Read()
	if st.GPU(0).Instance(idA) != nil || st.GPU(1).Instance(idA) != nil || st.GPU(0).FreeWeight != 15 || st.GPU(1).FreeWeight != 16 {
		t.Fatalf("after removal: %+v", st)
	}
	// Undone, a removal adds the instance back as it was.
	tr, _ = node(t)
	before = files(t, tr.Root())
	changes = plan(t, tr, Request{RemoveOrphans: []string{idA[:12]}})
	if err := tr.Update(func(tx procfs.Tx) error { return Apply(&failAt{Tx: tx, at: 2}, changes) }); err == nil {
		t.Fatal("no refusal")
	}
	if after := files(t, tr.Root()); !reflect.DeepEqual(after, before) {
		t.Errorf("after the undo the tree differs:\n%v\nwant\n%v", after, before)
	}
}
