package inject

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	// nvidia-uvm's nodes: a character region of that name, of a major the kernel picks
	// (NVIDIA's nvidia-uvm and the stand-in alike), minors 0 and 1. The C side's copy is
	// simdrv/lib/abi.h.
	UVMRegion = "nvidia-uvm"
	UVM       = "/dev/nvidia-uvm"
	UVMTools  = "/dev/nvidia-uvm-tools"
)

// NvidiaGPU is the device node of GPU i.
func NvidiaGPU(i int) string { return "/dev/nvidia" + strconv.Itoa(i) }

// devStat reads a device node's numbers: whether it is a character device, its major and
// minor.
type devStat func(path string) (char bool, major, minor int64, err error)

// standIn is where this node's stand-in driver shows; tests point it elsewhere.
var standIn = struct {
	proc    string
	devices string // /proc/devices: the kernel's list of majors by region name
	stat    devStat
}{StandInProc, "/proc/devices", statDevice}

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
	uvm  []specmod.Device // /dev/nvidia-uvm, /dev/nvidia-uvm-tools; none without the region
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
	n, err := nodesOf(len(ents), standIn.stat)
	if err != nil {
		return nil, err
	}
	major, err := regionMajor(standIn.devices, UVMRegion)
	if err != nil || major < 0 {
		return n, err
	}
	for _, p := range []string{UVM, UVMTools} {
		d, err := deviceNode(p, major, standIn.stat)
		if err != nil {
			return nil, err
		}
		n.uvm = append(n.uvm, d)
	}
	return n, nil
}

// regionMajor is the major of the character region name in the kernel's list (the
// format of /proc/devices: "Character devices:", then "MAJOR NAME" lines, then a blank
// line and the block devices); -1 when there is none.
func regionMajor(devices, name string) (int64, error) {
	f, err := os.Open(devices)
	if err != nil {
		return -1, fmt.Errorf("reading the kernel's device regions: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	char := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "Character devices:":
			char = true
		case line == "" || strings.HasSuffix(line, "devices:"):
			char = false
		case char:
			if fields := strings.Fields(line); len(fields) == 2 && fields[1] == name {
				return strconv.ParseInt(fields[0], 10, 64)
			}
		}
	}
	return -1, sc.Err()
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
	return deviceNode(path, NvidiaMajor, stat)
}

// deviceNode is the node at path, which must be a character device of major want.
func deviceNode(path string, want int64, stat devStat) (specmod.Device, error) {
	char, major, minor, err := stat(path)
	if err != nil {
		return specmod.Device{}, fmt.Errorf("the stand-in NVIDIA driver is loaded (%s) but %s: %w: reload it (install.sh does) so that devtmpfs makes its nodes", standIn.proc, path, unwrapPath(err))
	}
	if !char || major != want {
		return specmod.Device{}, fmt.Errorf("%s is not a character device of major %d (the NVIDIA driver's): remove it and reload the stand-in driver", path, want)
	}
	return specmod.Device{Path: path, Major: major, Minor: minor}, nil
}

// devices is what a container with these GPUs gets, as NVIDIA's container toolkit gives
// it: the control node, the node of each of its GPUs and no other, then nvidia-uvm's
// two nodes where the driver has them.
func (n *nvidiaNodes) devices(gpus []int) ([]specmod.Device, error) {
	out := []specmod.Device{n.ctl}
	for _, i := range gpus {
		if i < 0 || i >= len(n.gpus) {
			return nil, fmt.Errorf("GPU %d: the stand-in NVIDIA driver serves %d GPU(s) (%s): load it with as many GPUs as the cgpu config's sim_gpus (install.sh does)", i, len(n.gpus), standIn.proc)
		}
		out = append(out, n.gpus[i])
	}
	return append(out, n.uvm...), nil
}
