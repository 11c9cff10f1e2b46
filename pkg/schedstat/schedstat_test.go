package schedstat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// layout prints what the C compiler makes of the header: the struct's size, every
// offset the Go struct relies on, and the ioctl number.
const layout = `#include <stddef.h>
#include <stdio.h>
#include "cgpu_ioctl.h"
#define O(f) printf(#f "=%zu\n", offsetof(struct cgpu_inst_stat, f))
#define S(f) printf("sched." #f "=%zu\n", offsetof(struct cgpu_sched_stat, f))
int main(void)
{
	printf("size=%zu\n", sizeof(struct cgpu_inst_stat));
	printf("cmd=%lu\n", (unsigned long)CGPU_IOC_INST_STAT);
	O(abi_version); O(gpu); O(id); O(sched); O(last_second_used_ns); O(age_ns);
	S(abi_version); S(slot); S(gpu); S(sched_id); S(policy); S(weight); S(waiting);
	S(holding); S(quantum_ns); S(grace_ns); S(charged_ns); S(used_ns); S(prio_ns);
	S(grants); S(takebacks);
	return 0;
}
`

// The Go structs are laid out as the C header's, and the number is CGPU_IOC_INST_STAT.
func TestLayoutMatchesHeader(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatalf("no C compiler (cc, from build-essential): the layout check builds the header: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "layout.c")
	if err := os.WriteFile(src, []byte(layout), 0o644); err != nil {
		t.Fatal(err)
	}
	hdr, err := filepath.Abs("../../kmod/uapi")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "layout")
	if out, err := exec.Command(cc, "-I", hdr, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var s Stat
	want := map[string]uintptr{
		"size": unsafe.Sizeof(s), "cmd": InstStatCmd,
		"abi_version": unsafe.Offsetof(s.ABIVersion), "gpu": unsafe.Offsetof(s.GPU),
		"id": unsafe.Offsetof(s.ID), "sched": unsafe.Offsetof(s.Sched),
		"last_second_used_ns": unsafe.Offsetof(s.LastSecondUsedNs), "age_ns": unsafe.Offsetof(s.AgeNs),
		"sched.abi_version": unsafe.Offsetof(s.Sched.ABIVersion), "sched.slot": unsafe.Offsetof(s.Sched.Slot),
		"sched.gpu": unsafe.Offsetof(s.Sched.GPU), "sched.sched_id": unsafe.Offsetof(s.Sched.SchedID),
		"sched.policy": unsafe.Offsetof(s.Sched.Policy), "sched.weight": unsafe.Offsetof(s.Sched.Weight),
		"sched.waiting": unsafe.Offsetof(s.Sched.Waiting), "sched.holding": unsafe.Offsetof(s.Sched.Holding),
		"sched.quantum_ns": unsafe.Offsetof(s.Sched.QuantumNs), "sched.grace_ns": unsafe.Offsetof(s.Sched.GraceNs),
		"sched.charged_ns": unsafe.Offsetof(s.Sched.ChargedNs), "sched.used_ns": unsafe.Offsetof(s.Sched.UsedNs),
		"sched.prio_ns": unsafe.Offsetof(s.Sched.PrioNs), "sched.grants": unsafe.Offsetof(s.Sched.Grants),
		"sched.takebacks": unsafe.Offsetof(s.Sched.Takebacks),
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(want) {
		t.Fatalf("C printed %d figures, Go has %d:\n%s", len(lines), len(want), out)
	}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		w, ok := want[k]
		if !ok {
			t.Errorf("C printed %s, unknown here", k)
			continue
		}
		if got := strings.TrimSpace(v); got != strconv.FormatUint(uint64(w), 10) {
			t.Errorf("%s: C says %s, Go %d", k, got, w)
		}
	}
}

func TestReadRefusesBadID(t *testing.T) {
	r := &Reader{}
	for _, id := range []string{"", "abc", "0123456789abc"} {
		if _, err := r.Read(0, id); err == nil {
			t.Errorf("Read(0, %q) did not fail", id)
		}
	}
}
