package settings

import (
	"os"
	"reflect"
	"testing"
)

// A module replaced (defaults everywhere), the GPU settings written back (upgrade.sh does
// that) and the containers registered again from their environment: Restore gives back
// the values docker cgpu set changed on their instances.
func TestRestoreAfterModuleReplacement(t *testing.T) {
	tr, gpus := node(t)
	if _, err := Set(tr, gpus, Request{GPUs: "0", Policy: "2", MaxInst: "8", PrioRatio: "40"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Set(tr, gpus, Request{Containers: []Container{web}, Weight: "5", Memsize: "7", HighPrio: tBool(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := Set(tr, gpus, Request{DefaultMemsize: "1"}); err != nil {
		t.Fatal(err)
	}
	before, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	saved := Save(before, []Container{web, db})
	if len(saved.Instances) != 3 {
		t.Fatalf("saved %d instances, want 3: %+v", len(saved.Instances), saved.Instances)
	}

	// The new module: a fresh tree; web and db registered again as their environment says.
	if err := os.RemoveAll(tr.Root()); err != nil {
		t.Fatal(err)
	}
	fresh := register(t, tr.Root(), 1)
	if _, err := Set(fresh, gpus, Request{GPUs: "0", Policy: "2", MaxInst: "8", PrioRatio: "40", DefaultMemsize: "1"}); err != nil {
		t.Fatal(err)
	}
	changes, err := Restore(fresh, saved)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) == 0 {
		t.Fatal("nothing restored")
	}
	after, err := fresh.Read()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("after Restore\n%+v\nwant\n%+v", after, before)
	}
	// Everything carried over: nothing to write.
	if changes, err := Restore(fresh, saved); err != nil || len(changes) != 0 {
		t.Fatalf("second Restore: %v %v", changes, err)
	}
}

// A value the tree refuses (the saved memsize below what is held now) undoes the rest.
func TestRestoreIsAllOrNothing(t *testing.T) {
	tr, _ := node(t)
	st, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	saved := Save(st, []Container{web, db})
	saved.Instances[0].Weight++
	for i := range saved.Instances {
		if saved.Instances[i].Container == db {
			saved.Instances[i].Memsize = 1 << 20 // db's process holds 1 GiB
		}
	}
	before := files(t, tr.Root())
	if _, err := Restore(tr, saved); err == nil {
		t.Fatal("a memsize below the held memory was restored")
	}
	if got := files(t, tr.Root()); !reflect.DeepEqual(got, before) {
		t.Fatal("a refused Restore changed the tree")
	}
}
