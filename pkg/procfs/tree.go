package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
	"golang.org/x/sys/unix"
)

// Tree is a /proc/cgpu_km tree, kernel-kept or simulated in a directory.
type Tree interface {
	// Root is the tree's top directory.
	Root() string
	// Kernel tells whether the cgpu_km kernel module keeps the tree.
	Kernel() bool
	// Read returns a consistent snapshot of every value.
	Read() (*State, error)
	// Update runs fn with the tree locked against every other cgpu process, so that
	// reading the state, deciding and registering happen as one step.
	Update(fn func(Tx) error) error
}

// Tx is the write side of a locked tree. Its State reflects the writes made through it.
type Tx interface {
	State() *State
	Add(AddRequest) error
	Del(gpu int, id string) error
	// Bind names the container of an instance by a task in it (its init): the kernel
	// takes that task's cgroup, and a caller belongs to the container whose cgroup holds
	// its own (docs/contracts.md §2).
	Bind(gpu int, id string, pid int) error
	SetDefaultMemsize(v int64) error
	SetGPU(gpu int, key GPUKey, v int64) error
	SetInstance(gpu int, id string, key InstanceKey, v int64) error
}

// ErrNoModule says the kernel tree is missing: the module is not loaded.
var ErrNoModule = errors.New("the cgpu_km kernel module is not loaded; load it, or set CGPU_SIM=1 to use the simulated node")

// Open picks the backend by what root is: a directory on procfs is the kernel module's
// tree; anything else is a simulated tree, laid out for gpus GPUs when first written.
func Open(root string, gpus int) (Tree, error) {
	root = filepath.Clean(root)
	var sfs unix.Statfs_t
	err := unix.Statfs(root, &sfs)
	switch {
	case err == nil && sfs.Type == unix.PROC_SUPER_MAGIC:
		return kernelTree{root: root}, nil
	case err == nil || errors.Is(err, fs.ErrNotExist) && !underProc(root):
		return &dirTree{root: root, gpus: gpus}, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s is missing: %w", root, ErrNoModule)
	default:
		return nil, fmt.Errorf("cgpu tree %s: %w", root, err)
	}
}

func underProc(path string) bool {
	return path == "/proc" || strings.HasPrefix(path, "/proc/")
}

// lockRoot takes a flock on the tree's top directory. Both backends lock the same way,
// so planners on one node serialise whatever backend they use; procfs directories
// accept flock like any other file.
func lockRoot(root string, exclusive bool) (*flock.Flock, error) {
	l := flock.New(root, flock.SetFlag(os.O_RDONLY))
	lock := l.RLock
	if exclusive {
		lock = l.Lock
	}
	if err := lock(); err != nil {
		return nil, fmt.Errorf("locking %s: %w", root, err)
	}
	return l, nil
}
