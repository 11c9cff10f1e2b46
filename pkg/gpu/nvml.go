package gpu

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// ErrNoGPU says the node has neither a usable NVIDIA driver nor a GPU. Its text tells the
// user how to try the simulated node instead, since that is the usual case on a laptop or CI.
var ErrNoGPU = errors.New("no NVIDIA GPU found; set CGPU_SIM=1 to use the simulated node")

// NVML reads the inventory through any conforming libnvidia-ml.so.1 (the real driver's or
// the simulated one), loaded at run time so the binaries start on nodes without it.
type NVML struct {
	Lib nvml.Interface
}

// NewNVML uses the system's libnvidia-ml.so.1.
func NewNVML() NVML { return NVML{Lib: nvml.New()} }

// GPUs initialises NVML for the duration of the call only: the inventory is read once per
// command and a held NVML session would keep the driver state busy for nothing.
func (n NVML) GPUs() ([]GPU, error) {
	if ret := n.Lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("%w (NVML: %s)", ErrNoGPU, ret.Error())
	}
	defer n.Lib.Shutdown()
	count, ret := n.Lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: counting GPUs: %s", ret.Error())
	}
	if count == 0 {
		return nil, fmt.Errorf("%w (NVML lists 0 devices)", ErrNoGPU)
	}
	gpus := make([]GPU, count)
	for i := range gpus {
		g, err := n.device(i)
		if err != nil {
			return nil, err
		}
		gpus[i] = g
	}
	return gpus, nil
}

func (n NVML) device(i int) (GPU, error) {
	d, ret := n.Lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return GPU{}, n.fail(i, "handle", ret)
	}
	uuid, ret := d.GetUUID()
	if ret != nvml.SUCCESS {
		return GPU{}, n.fail(i, "UUID", ret)
	}
	name, ret := d.GetName()
	if ret != nvml.SUCCESS {
		return GPU{}, n.fail(i, "name", ret)
	}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return GPU{}, n.fail(i, "memory", ret)
	}
	return GPU{Index: i, UUID: uuid, Name: name, MemoryBytes: mem.Total}, nil
}

func (n NVML) fail(i int, what string, ret nvml.Return) error {
	return fmt.Errorf("NVML: GPU %d: reading %s: %s", i, what, ret.Error())
}
