package uapi

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The committed definitions are what the headers give today: a header changed without
// go generate fails here, before Go and the kernel disagree on a running node.
func TestGeneratedMatchesHeaders(t *testing.T) {
	cc, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		t.Fatalf("go env CC: %v", err)
	}
	if f := strings.Fields(string(cc)); len(f) == 0 {
		t.Fatal("go env CC is empty: cgo -godefs needs a C compiler")
	} else if _, err := exec.LookPath(f[0]); err != nil {
		t.Fatalf("no C compiler (from build-essential): cgo -godefs compiles the headers: %v", err)
	}
	name := "ztypes_linux_" + runtime.GOARCH + ".go"
	committed, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v: run go generate ./pkg/uapi on this architecture", err)
	}
	fresh := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("sh", "mkztypes.sh", fresh).CombinedOutput(); err != nil {
		t.Fatalf("mkztypes.sh: %v\n%s", err, out)
	}
	got, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Errorf("%s is not what kmod/uapi gives: run go generate ./pkg/uapi and commit it; generated:\n%s", name, got)
	}
}
