package procfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// kernelTree writes what the kernel module expects and lets it validate: the rules live
// in the kernel, and a refusal comes back as the write's errno.
type kernelTree struct{ root string }

func (k kernelTree) Root() string { return k.root }
func (k kernelTree) Kernel() bool { return true }
func (k kernelTree) Read() (*State, error) {
	l, err := lockRoot(k.root, false)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return readTree(k.root)
}

func (k kernelTree) Update(fn func(Tx) error) error {
	l, err := lockRoot(k.root, true)
	if err != nil {
		return err
	}
	defer l.Unlock()
	st, err := readTree(k.root)
	if err != nil {
		return err
	}
	return fn(&kernelTx{root: k.root, st: st})
}

// kernelTx mirrors each accepted write in its State so a caller deciding several steps
// sees them without re-reading the tree.
type kernelTx struct {
	root string
	st   *State
}

func (t *kernelTx) State() *State { return t.st }

// InstCtlAdd is the inst_ctl command registering r (docs/contracts.md §2).
func InstCtlAdd(r AddRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "add %d %s", r.GPU, r.ID)
	if r.Memsize != 0 {
		fmt.Fprintf(&b, " memsize=%d", r.Memsize)
	}
	fmt.Fprintf(&b, " weight=%d highprio=%d", r.Weight, boolInt(r.HighPrio))
	if r.UUID != "" {
		fmt.Fprintf(&b, " uuid=%s", r.UUID)
	}
	return b.String() + "\n"
}

// InstCtlDel is the inst_ctl command removing an instance.
func InstCtlDel(gpu int, id string) string {
	return fmt.Sprintf("del %d %s\n", gpu, id)
}

// InstCtlBind is the inst_ctl command binding an instance to the cgroup of task pid.
func InstCtlBind(gpu int, id string, pid int) string {
	return fmt.Sprintf("bind %d %s %d\n", gpu, id, pid)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *kernelTx) write(rel, data string) error {
	path := filepath.Join(t.root, rel)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	// One write(2) per command: the kernel parses each write as a whole.
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", strings.TrimSpace(data), path, err)
	}
	return nil
}

func (t *kernelTx) Add(r AddRequest) error {
	if err := t.write(fileInstCtl, InstCtlAdd(r)); err != nil {
		return err
	}
	return t.reread()
}

func (t *kernelTx) Del(gpu int, id string) error {
	if err := t.write(fileInstCtl, InstCtlDel(gpu, id)); err != nil {
		return err
	}
	return t.reread()
}

// Bind changes nothing the tree shows, so there is nothing to read again.
func (t *kernelTx) Bind(gpu int, id string, pid int) error {
	return t.write(fileInstCtl, InstCtlBind(gpu, id, pid))
}

func (t *kernelTx) SetDefaultMemsize(v int64) error {
	return t.setValue(fileDefaultMemsize, v)
}

func (t *kernelTx) SetGPU(gpu int, key GPUKey, v int64) error {
	return t.setValue(filepath.Join(strconv.Itoa(gpu), string(key)), v)
}

func (t *kernelTx) SetInstance(gpu int, id string, key InstanceKey, v int64) error {
	return t.setValue(filepath.Join(strconv.Itoa(gpu), ShortID(id), string(key)), v)
}

func (t *kernelTx) setValue(rel string, v int64) error {
	if err := t.write(rel, strconv.FormatInt(v, 10)+"\n"); err != nil {
		return err
	}
	return t.reread()
}

// reread takes the kernel's own view after a write rather than predicting it.
func (t *kernelTx) reread() error {
	st, err := readTree(t.root)
	if err != nil {
		return err
	}
	t.st = st
	return nil
}
