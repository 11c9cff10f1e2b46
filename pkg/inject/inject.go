// Package inject finds on the node what cgpu-runtime puts into a cGPU container, for
// pkg/specmod to add to its spec: libcgpu and an /etc/ld.so.preload naming it, so every
// dynamically linked process of the container loads the hook; /dev/cgpu when the cgpu_km
// module keeps the node's tree; and on the simulated node the simulated driver's files,
// bound as NVIDIA's container toolkit binds the real driver's, with the device nodes of
// the stand-in kernel driver where it is loaded (nvnodes.go: it holds the GPUs), else
// the simulated GPUs' state file, so CUDA programs in the container see the same GPUs
// as the node.
package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/oci"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/specmod"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// Paths inside the container.
const (
	HookPath    = node.DefaultHook
	PreloadPath = "/etc/ld.so.preload"
	// SimStatePath is where the simulated driver looks for its state when
	// CGPU_SIM_STATE is not set, as in a container.
	SimStatePath = node.DefaultSimState
	smiPath      = "/usr/bin/nvidia-smi"
)

// PreloadName is the file, in the container's bundle, bound at /etc/ld.so.preload.
const PreloadName = "cgpu-ld.so.preload"

// The simulated driver's libraries, found by soname in the container's library
// directory, and its nvidia-smi.
var simLibs = []string{"libcuda.so.1", "libnvidia-ml.so.1"}

const simSMI = "nvidia-smi"

// Library directories the dynamic loader searches without a cache entry: Debian's
// multiarch one, then the RHEL family's.
var libDirs = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"}

// Node is what this node gives a container: every part to a cGPU container (Check), the
// simulated driver alone to one with cGPU off on the simulated node (Plain).
type Node struct {
	// hook is "" for a container with cGPU off.
	hook   string
	device *specmod.Device
	// simDriver is set on the simulated node only, simState there only where the
	// stand-in driver is not loaded.
	simDriver, simState string
	// nvidia is set where the stand-in driver is loaded.
	nvidia *nvidiaNodes
}

// Check finds and checks everything a cGPU container will get, before its instances are
// registered, so that a node missing a part refuses the container having changed nothing.
// On the simulated node it creates the simulated GPUs' state file if there is none, as
// the first CUDA call on the node would.
func Check(cfg node.Config, t procfs.Tree) (*Node, error) {
	n := &Node{hook: cfg.HookPath()}
	if err := regular(n.hook, "libcgpu"); err != nil {
		return nil, err
	}
	if t.Kernel() {
		d, err := device(t)
		if err != nil {
			return nil, err
		}
		n.device = d
	}
	if !cfg.Sim {
		return n, nil
	}
	return n, n.checkSim(cfg)
}

// Plain is what a container with cGPU off gets on the simulated node: the simulated
// driver, as NVIDIA's toolkit gives such a container the real one (WantsDriver).
func Plain(cfg node.Config) (*Node, error) {
	n := &Node{}
	return n, n.checkSim(cfg)
}

// WantsDriver applies NVIDIA's container toolkit's rule: a container gets the driver when
// NVIDIA_VISIBLE_DEVICES is set, and is neither empty nor "void" ("none" gets the driver
// and no GPU).
func WantsDriver(env map[string]string) bool {
	v, ok := env[alloc.EnvNvidiaVisible]
	return ok && v != "" && v != "void"
}

func (n *Node) checkSim(cfg node.Config) error {
	n.simDriver, n.simState = cfg.SimDriverDir(), cfg.SimStatePath()
	for _, f := range append(append([]string(nil), simLibs...), simSMI) {
		if err := regular(filepath.Join(n.simDriver, f), "the simulated driver's"); err != nil {
			return err
		}
	}
	var err error
	if n.nvidia, err = readStandIn(); err != nil {
		return err
	}
	if n.nvidia != nil {
		// The stand-in driver holds the GPUs' memory, processes and engines: the
		// container gets its nodes, and no file of the node's state.
		n.simState = ""
		return nil
	}
	return ensureSimState(cfg, n.simDriver, n.simState)
}

func regular(path, what string) error {
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w; install cgpu on this node with install.sh, or name the right path in the cgpu config", what, path, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the path a *PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// device is /dev/cgpu as the loaded module made it. Its major number must be the one
// the module reports, or the node is left with a stale device file.
func device(t procfs.Tree) (*specmod.Device, error) {
	st, err := t.Read()
	if err != nil {
		return nil, err
	}
	if len(st.GPUs) == 0 {
		return nil, fmt.Errorf("%s lists no GPU", t.Root())
	}
	major := st.GPUs[0].Major
	var s unix.Stat_t
	if err := unix.Stat(uapi.DevicePath, &s); err != nil {
		return nil, fmt.Errorf("%s: %w (cgpu_km is loaded with major %d: devtmpfs or udev should have made it)", uapi.DevicePath, err, major)
	}
	if s.Mode&unix.S_IFMT != unix.S_IFCHR || int(unix.Major(s.Rdev)) != major {
		return nil, fmt.Errorf("%s is not the character device of cgpu_km (major %d): remove it and reload the module", uapi.DevicePath, major)
	}
	return &specmod.Device{Path: uapi.DevicePath, Major: int64(major), Minor: int64(unix.Minor(s.Rdev))}, nil
}

// ensureSimState creates the state file through the simulated driver itself, with the
// node's GPU count and size, when there is none yet (it lives under /run, so every boot
// starts without). A file the driver has set up is never touched.
func ensureSimState(cfg node.Config, dir, state string) error {
	if fi, err := os.Stat(state); err == nil && fi.Size() > 0 {
		return nil
	}
	cmd := exec.Command(filepath.Join(dir, simSMI), "-L")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir, node.EnvSimState+"="+state,
		node.EnvSimGPUs+"="+strconv.Itoa(cfg.SimGPUs), node.EnvSimMemMiB+"="+strconv.FormatUint(cfg.SimMemMiB, 10))
	out, err := cmd.CombinedOutput()
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(state); err == nil && fi.Size() == 0 {
			err = errors.New("still empty")
		}
	}
	if err != nil {
		return fmt.Errorf("creating the simulated GPUs' state %s with %s -L: %v: %s", state, filepath.Join(dir, simSMI), err, bytes.TrimSpace(out))
	}
	return nil
}

// For returns what to inject into the container of this bundle, whose GPUs (node
// indexes) are gpus. For a cGPU container it writes the container's /etc/ld.so.preload
// into the bundle: libcgpu, then the image's own entries.
func (n *Node) For(bundle string, s *oci.Spec, gpus []int) (specmod.Injection, error) {
	bundle, err := filepath.Abs(bundle)
	if err != nil {
		return specmod.Injection{}, err
	}
	rootfs, err := rootPath(bundle, s)
	if err != nil {
		return specmod.Injection{}, err
	}
	var in specmod.Injection
	if n.device != nil {
		in.Devices = append(in.Devices, *n.device)
	}
	if n.nvidia != nil {
		nv, err := n.nvidia.devices(gpus)
		if err != nil {
			return specmod.Injection{}, err
		}
		in.Devices = append(in.Devices, nv...)
	}
	if n.hook != "" {
		preload := filepath.Join(bundle, PreloadName)
		if err := writePreload(preload, rootfs); err != nil {
			return specmod.Injection{}, err
		}
		in.Binds = []specmod.Bind{{Source: n.hook, Dest: HookPath}, {Source: preload, Dest: PreloadPath}}
	}
	if n.simDriver == "" {
		return in, nil
	}
	lib := libDir(rootfs)
	for _, f := range simLibs {
		in.Binds = append(in.Binds, specmod.Bind{Source: filepath.Join(n.simDriver, f), Dest: filepath.Join(lib, f)})
	}
	in.Binds = append(in.Binds, specmod.Bind{Source: filepath.Join(n.simDriver, simSMI), Dest: smiPath})
	if n.simState != "" {
		in.Binds = append(in.Binds, specmod.Bind{Source: n.simState, Dest: SimStatePath, Writable: true})
	}
	return in, nil
}

func rootPath(bundle string, s *oci.Spec) (string, error) {
	var root struct {
		Path string `json:"path"`
	}
	if raw := s.Raw("root"); len(raw) != 0 {
		if err := json.Unmarshal(raw, &root); err != nil {
			return "", fmt.Errorf("config.json: root: %w", err)
		}
	}
	if root.Path == "" {
		return "", errors.New("config.json: root.path is not set")
	}
	if !filepath.IsAbs(root.Path) {
		root.Path = filepath.Join(bundle, root.Path)
	}
	return root.Path, nil
}

// maxPreload bounds what is read of an image's /etc/ld.so.preload.
const maxPreload = 64 << 10

func writePreload(path, rootfs string) error {
	var b strings.Builder
	b.WriteString(HookPath + "\n")
	own, err := readInRoot(rootfs, PreloadPath)
	if err != nil {
		return fmt.Errorf("reading the image's %s: %w", PreloadPath, err)
	}
	for _, line := range strings.Split(string(own), "\n") {
		if l := strings.TrimSpace(line); l != "" && l != HookPath {
			b.WriteString(line + "\n")
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// readInRoot reads a file of the container's root file system, resolving its symbolic
// links inside that root (an image's link must not reach the node's files); a missing
// file is empty.
func readInRoot(rootfs, path string) ([]byte, error) {
	f, err := openInRoot(rootfs, path, unix.O_RDONLY)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, maxPreload))
}

// libDir is the container's first library directory of libDirs that exists, or the
// first of them: the simulated driver goes where the image's loader finds it.
func libDir(rootfs string) string {
	for _, d := range libDirs {
		if f, err := openInRoot(rootfs, d, unix.O_PATH|unix.O_DIRECTORY); err == nil {
			f.Close()
			return d
		}
	}
	return libDirs[0]
}

func openInRoot(rootfs, path string, flags int) (*os.File, error) {
	root, err := unix.Open(rootfs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: rootfs, Err: err}
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, strings.TrimPrefix(path, "/"), &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(rootfs, path)), nil
}
