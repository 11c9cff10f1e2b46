package inject

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/cgpu-project/cgpu/pkg/specmod"
)

// The NVIDIA driver's device nodes, as NVIDIA's driver numbers them and the stand-in
// driver (simdrv/, docs/sim.md) numbers them too: one character major, /dev/nvidiaN at
// minor N, /dev/nvidiactl at minor 255. The C side's copy is simdrv/lib/abi.h.
const (
	NvidiaMajor = 195
	NvidiaCtl   = "/dev/nvidiactl"
	// StandInProc is there while the stand-in driver is loaded.
	StandInProc = "/proc/driver/nvidia-sim"
)

// NvidiaGPU is the device node of GPU i.
func NvidiaGPU(i int) string { return "/dev/nvidia" + strconv.Itoa(i) }

// devStat reads a device node's numbers: whether it is a character device, its major and
// minor.
type devStat func(path string) (char bool, major, minor int64, err error)

// standIn is where this node's stand-in driver shows; tests point it elsewhere.
var standIn = struct {
	proc string
	stat devStat
}{StandInProc, statDevice}

func statDevice(path string) (bool, int64, int64, error) {
	var s unix.Stat_t
	if err := unix.Stat(path, &s); err != nil {
		return false, 0, 0, err
	}
	return s.Mode&unix.S_IFMT == unix.S_IFCHR, int64(unix.Major(s.Rdev)), int64(unix.Minor(s.Rdev)), nil
}

// nvidiaNodes are the stand-in driver's nodes as the node has them, read before a
// container is registered so that a broken node refuses it having changed nothing.
type nvidiaNodes struct {
	ctl  specmod.Device
	gpus []specmod.Device // by GPU index
}

// readStandIn finds the stand-in driver's nodes; nil when the driver is not loaded.
func readStandIn() (*nvidiaNodes, error) {
	ents, err := os.ReadDir(filepath.Join(standIn.proc, "gpus"))
	if errors.Is(err, os.ErrNotExist) {
		if _, e := os.Stat(standIn.proc); errors.Is(e, os.ErrNotExist) {
			return nil, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the stand-in NVIDIA driver is loaded but its GPUs cannot be listed: %w", err)
	}
	return nodesOf(len(ents), standIn.stat)
}

// nodesOf reads the control node and the nodes of a driver serving count GPUs.
func nodesOf(count int, stat devStat) (*nvidiaNodes, error) {
	n := &nvidiaNodes{}
	var err error
	if n.ctl, err = nvidiaNode(NvidiaCtl, stat); err != nil {
		return nil, err
	}
	for i := 0; i < count; i++ {
		d, err := nvidiaNode(NvidiaGPU(i), stat)
		if err != nil {
			return nil, err
		}
		n.gpus = append(n.gpus, d)
	}
	return n, nil
}

// nvidiaNode is one node with the numbers the node's file has: the driver owns the
// major, the minor is whatever the file says.
func nvidiaNode(path string, stat devStat) (specmod.Device, error) {
	char, major, minor, err := stat(path)
	if err != nil {
		return specmod.Device{}, fmt.Errorf("the stand-in NVIDIA driver is loaded (%s) but %s: %w: reload it (install.sh does) so that devtmpfs makes its nodes", standIn.proc, path, unwrapPath(err))
	}
	if !char || major != NvidiaMajor {
		return specmod.Device{}, fmt.Errorf("%s is not a character device of major %d (the NVIDIA driver's): remove it and reload the stand-in driver", path, NvidiaMajor)
	}
	return specmod.Device{Path: path, Major: major, Minor: minor}, nil
}

// devices is what a container with these GPUs gets, as NVIDIA's container toolkit gives
// it: the control node, then the node of each of its GPUs and no other.
func (n *nvidiaNodes) devices(gpus []int) ([]specmod.Device, error) {
	out := []specmod.Device{n.ctl}
	for _, i := range gpus {
		if i < 0 || i >= len(n.gpus) {
			return nil, fmt.Errorf("GPU %d: the stand-in NVIDIA driver serves %d GPU(s) (%s): load it with as many GPUs as the cgpu config's sim_gpus (install.sh does)", i, len(n.gpus), standIn.proc)
		}
		out = append(out, n.gpus[i])
	}
	return out, nil
}
