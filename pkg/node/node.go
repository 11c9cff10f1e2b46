// Package node says what node the cgpu tools run on: the configuration shared by the
// runtime and the plugin (/etc/cgpu/runtime.json, overridden by CGPU_* variables), the
// GPU inventory it implies (real through NVML, or simulated) and the /proc/cgpu_km tree.
package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// Paths of docs/contracts.md §5.
const (
	DefaultConfigPath = "/etc/cgpu/runtime.json"
	KernelRoot        = "/proc/cgpu_km"
	SimRoot           = "/var/lib/cgpu/sim/proc"
	DefaultHook       = "/usr/local/lib/cgpu/libcgpu.so"
	DefaultRuntime    = "/usr/local/bin/cgpu-runtime"
	DefaultSimDriver  = "/usr/local/lib/cgpu/sim"
	// DefaultSimState is the simulated driver's own default state file (docs/sim.md).
	DefaultSimState = "/run/cgpu-sim/state"
)

// Environment variables that override the configuration file.
const (
	EnvConfig    = "CGPU_RUNTIME_CONFIG"
	EnvSim       = "CGPU_SIM"
	EnvSimGPUs   = "CGPU_SIM_GPUS"
	EnvSimMemMiB = "CGPU_SIM_MEM_MIB"
	EnvRoot      = "CGPU_PROCFS_ROOT"
	// EnvSimState is the simulated driver's variable: the runtime, like the host's
	// CUDA programs, then uses that state file.
	EnvSimState = "CGPU_SIM_STATE"
)

// Config is /etc/cgpu/runtime.json. Every field may be left out.
type Config struct {
	// ProcfsRoot is the cgpu tree: /proc/cgpu_km, or /var/lib/cgpu/sim/proc when Sim.
	ProcfsRoot string `json:"procfs_root,omitempty"`
	// Sim makes the node the simulated one: SimGPUs x SimMemMiB "Tesla T4"s.
	Sim       bool   `json:"sim,omitempty"`
	SimGPUs   int    `json:"sim_gpus,omitempty"`
	SimMemMiB uint64 `json:"sim_mem_mib,omitempty"`
	// NextRuntime is the OCI runtime cgpu-runtime hands the container to: a path or a
	// name looked up in PATH; nvidia-container-runtime when installed, else runc.
	NextRuntime string `json:"next_runtime,omitempty"`
	// Hook is libcgpu on the node, bound into every cGPU container.
	Hook string `json:"hook,omitempty"`
	// SimDriver is the directory of the simulated libcuda.so.1, libnvidia-ml.so.1 and
	// nvidia-smi, bound into containers on the simulated node in place of NVIDIA's.
	SimDriver string `json:"sim_driver,omitempty"`
	// SimState is the simulated GPUs' state file, shared by the node and its containers.
	SimState string `json:"sim_state,omitempty"`
}

// Load reads the configuration file at path ("" means $CGPU_RUNTIME_CONFIG, else the
// default, which may be absent), then applies the CGPU_* variables from getenv.
func Load(path string, getenv func(string) string) (Config, error) {
	c := Config{SimGPUs: gpu.SimDefaultCount, SimMemMiB: gpu.SimDefaultMemMiB}
	optional := false
	if path == "" {
		path = getenv(EnvConfig)
	}
	if path == "" {
		path, optional = DefaultConfigPath, true
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(&c); err != nil {
			return c, fmt.Errorf("cgpu config %s: %w", path, err)
		}
	case optional && errors.Is(err, fs.ErrNotExist):
	default:
		return c, fmt.Errorf("cgpu config: %w", err)
	}
	if err := c.applyEnv(getenv); err != nil {
		return c, err
	}
	if c.SimGPUs < 1 || c.SimMemMiB < 1 {
		return c, fmt.Errorf("cgpu config: the simulated node needs at least 1 GPU of at least 1 MiB (sim_gpus %d, sim_mem_mib %d)", c.SimGPUs, c.SimMemMiB)
	}
	return c, nil
}

func (c *Config) applyEnv(getenv func(string) string) error {
	if v := getenv(EnvSim); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q: not a boolean", EnvSim, v)
		}
		c.Sim = b
	}
	if v := getenv(EnvSimGPUs); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s=%q: not a number", EnvSimGPUs, v)
		}
		c.SimGPUs = n
	}
	if v := getenv(EnvSimMemMiB); v != "" {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return fmt.Errorf("%s=%q: not a number of MiB", EnvSimMemMiB, v)
		}
		c.SimMemMiB = n
	}
	if v := getenv(EnvRoot); v != "" {
		c.ProcfsRoot = v
	}
	if v := getenv(EnvSimState); v != "" {
		c.SimState = v
	}
	return nil
}

// Root is the cgpu tree the node uses.
func (c Config) Root() string {
	switch {
	case c.ProcfsRoot != "":
		return c.ProcfsRoot
	case c.Sim:
		return SimRoot
	}
	return KernelRoot
}

// HookPath is libcgpu on the node.
func (c Config) HookPath() string { return or(c.Hook, DefaultHook) }

// SimDriverDir holds the simulated driver's files.
func (c Config) SimDriverDir() string { return or(c.SimDriver, DefaultSimDriver) }

// SimStatePath is the simulated GPUs' state file.
func (c Config) SimStatePath() string { return or(c.SimState, DefaultSimState) }

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// Inventory is where the node's GPUs are read from.
func (c Config) Inventory() gpu.Inventory {
	if c.Sim {
		return gpu.Sim{Count: c.SimGPUs, MemMiB: c.SimMemMiB}
	}
	return gpu.NewNVML()
}

// NextRuntimePath resolves the runtime that runs containers after cgpu-runtime.
func (c Config) NextRuntimePath() (string, error) {
	if c.NextRuntime != "" {
		p, err := exec.LookPath(c.NextRuntime)
		if err != nil {
			return "", fmt.Errorf("cgpu config: next_runtime %q: %w", c.NextRuntime, err)
		}
		return p, nil
	}
	for _, name := range []string{"nvidia-container-runtime", "runc"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("cgpu: neither nvidia-container-runtime nor runc is in PATH; set next_runtime in the cgpu config")
}

// Node is an opened node: its GPUs and its tree.
type Node struct {
	GPUs []gpu.GPU
	Tree procfs.Tree
}

// Open reads the inventory and opens the tree laid out for it.
func Open(c Config) (*Node, error) {
	gpus, err := c.Inventory().GPUs()
	if err != nil {
		return nil, err
	}
	t, err := procfs.Open(c.Root(), len(gpus))
	if err != nil {
		return nil, err
	}
	return &Node{GPUs: gpus, Tree: t}, nil
}

// OpenTree opens the tree alone, for work that needs no inventory (unregistering).
func OpenTree(c Config) (procfs.Tree, error) {
	return procfs.Open(c.Root(), 0)
}
