package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/cgpu-project/cgpu/pkg/version"
)

// instCtlUsage is what reading inst_ctl prints (docs/contracts.md §2).
const instCtlUsage = `add <gpu> <id> [memsize=<bytes>] [weight=<n>] [highprio=0|1] [uuid=GPU-<uuid>]
del <gpu> <id>
bind <gpu> <id> <pid>
`

// dirTree is the simulated node's tree: a plain directory laid out like /proc/cgpu_km.
// Every write goes through the kernel's rules (rules.go) under the root's lock, and each
// file is replaced by rename, so a reader that does not lock (cat) never sees half a value.
type dirTree struct {
	root string
	gpus int
}

func (d *dirTree) Root() string { return d.root }
func (d *dirTree) Kernel() bool { return false }

// Read of a tree never written yet is the fresh tree, and creates nothing.
func (d *dirTree) Read() (*State, error) {
	if _, err := os.Stat(d.root); errors.Is(err, fs.ErrNotExist) {
		return NewState(d.gpus), nil
	}
	l, err := lockRoot(d.root, false)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return d.read()
}

// read fills in the GPUs a larger simulated node adds (the next write creates them).
func (d *dirTree) read() (*State, error) {
	st, err := readTree(d.root)
	if err != nil {
		return nil, err
	}
	for i := 0; i < d.gpus; i++ {
		if st.GPU(i) == nil {
			st.GPUs = append(st.GPUs, NewGPUState(i))
		}
	}
	return st, nil
}

func (d *dirTree) Update(fn func(Tx) error) error {
	if err := os.MkdirAll(d.root, 0o755); err != nil {
		return err
	}
	l, err := lockRoot(d.root, true)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if err := d.init(); err != nil {
		return fmt.Errorf("initialising %s: %w", d.root, err)
	}
	st, err := d.read()
	if err != nil {
		return err
	}
	return fn(&dirTx{root: d.root, st: st})
}

// init creates whatever part of the layout is missing with the kernel's defaults,
// leaving existing values alone. The simulated module is the release of the program that
// created the tree, as a loaded module is the release it was built from.
func (d *dirTree) init() error {
	top := []struct{ name, data string }{
		{fileDefaultMemsize, "0\n"}, {fileInstCtl, instCtlUsage}, {fileUpgrade, ""}, {fileVersion, version.Version + "\n"},
	}
	for _, f := range top {
		if err := createMissing(filepath.Join(d.root, f.name), f.data); err != nil {
			return err
		}
	}
	for i := 0; i < d.gpus; i++ {
		g := NewGPUState(i)
		dir := filepath.Join(d.root, strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for name, v := range gpuFiles(&g) {
			if err := createMissing(filepath.Join(dir, name), v); err != nil {
				return err
			}
		}
	}
	return nil
}

func gpuFiles(g *GPUState) map[string]string {
	return map[string]string{
		string(KeyMaxInst): num(g.MaxInst), string(KeyPolicy): num(g.Policy), string(KeyPrioRatio): num(g.PrioRatio),
		fileFreeWeight: num(g.FreeWeight), fileMajor: num(g.Major),
	}
}

func num(v int) string { return strconv.Itoa(v) + "\n" }

func createMissing(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

type dirTx struct {
	root string
	st   *State
}

func (t *dirTx) State() *State { return t.st }

func (t *dirTx) gpuDir(gpu int) string { return filepath.Join(t.root, strconv.Itoa(gpu)) }

func (t *dirTx) Add(r AddRequest) error {
	in, err := t.st.Add(r)
	if err != nil {
		return err
	}
	// Built under a dot name and renamed into place, so readers see all of it or none.
	final := filepath.Join(t.gpuDir(r.GPU), in.ID)
	tmp := filepath.Join(t.gpuDir(r.GPU), "."+in.ID+".new")
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		fileID: in.ID + "\n", string(KeyMemsize): strconv.FormatUint(in.Memsize, 10) + "\n",
		string(KeyWeight): num(in.Weight), string(KeyHighPrio): num(boolInt(in.HighPrio)),
		fileMeminfo: "Free: " + strconv.FormatUint(in.Memsize, 10) + "\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	return t.writeFreeWeight(r.GPU)
}

func (t *dirTx) Del(gpu int, id string) error {
	if err := t.st.Del(gpu, id); err != nil {
		return err
	}
	dir := filepath.Join(t.gpuDir(gpu), ShortID(id))
	gone := filepath.Join(t.gpuDir(gpu), "."+ShortID(id)+".del")
	if err := os.Rename(dir, gone); err != nil {
		return err
	}
	if err := os.RemoveAll(gone); err != nil {
		return err
	}
	return t.writeFreeWeight(gpu)
}

// Bind on the simulated node only checks the instance exists: without the kernel module
// no one answers for identity (libcgpu limits each process by its own environment).
func (t *dirTx) Bind(gpu int, id string, pid int) error {
	g := t.st.GPU(gpu)
	if g == nil {
		return errf(syscall.ENODEV, "no GPU %d", gpu)
	}
	if g.Instance(id) == nil {
		return errf(syscall.ENOENT, "GPU %d has no instance %s", gpu, ShortID(id))
	}
	if pid < 1 {
		return errf(syscall.EINVAL, "pid %d", pid)
	}
	return nil
}

func (t *dirTx) SetDefaultMemsize(v int64) error {
	if err := t.st.SetDefaultMemsize(v); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(t.root, fileDefaultMemsize), strconv.FormatInt(v, 10)+"\n")
}

func (t *dirTx) SetGPU(gpu int, key GPUKey, v int64) error {
	if err := t.st.SetGPU(gpu, key, v); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(t.gpuDir(gpu), string(key)), strconv.FormatInt(v, 10)+"\n"); err != nil {
		return err
	}
	return t.writeFreeWeight(gpu)
}

func (t *dirTx) SetInstance(gpu int, id string, key InstanceKey, v int64) error {
	dir := filepath.Join(t.gpuDir(gpu), ShortID(id))
	held, err := readHeld(filepath.Join(dir, fileMeminfo))
	if err != nil {
		return err
	}
	if err := t.st.SetInstance(gpu, id, key, v, held); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, string(key)), strconv.FormatInt(v, 10)+"\n"); err != nil {
		return err
	}
	return t.writeFreeWeight(gpu)
}

func (t *dirTx) writeFreeWeight(gpu int) error {
	return writeAtomic(filepath.Join(t.gpuDir(gpu), fileFreeWeight), num(t.st.GPU(gpu).FreeWeight))
}

func writeAtomic(path, data string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new")
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
