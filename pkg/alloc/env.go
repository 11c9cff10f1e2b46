// Package alloc is the container environment contract of SPEC.md in one place: it parses
// the cgpu variables into an Intent, and turns an Intent, the node's GPUs and the current
// /proc/cgpu_km state into a validated Plan (which GPUs, bytes per GPU, weight, priority).
// The docker plugin and the OCI runtime both decide through it, so a container registers
// the same way whichever of the two saw it first.
package alloc

import (
	"strconv"
	"strings"

	"github.com/cgpu-project/cgpu/pkg/gpu"
)

// The variables of SPEC.md.
const (
	EnvDisable       = "CGPU_DISABLE"
	EnvMemDev        = "ALIYUN_COM_GPU_MEM_DEV"
	EnvMemContainer  = "ALIYUN_COM_GPU_MEM_CONTAINER"
	EnvVisible       = "ALIYUN_COM_GPU_VISIBLE_DEVICES"
	EnvWeight        = "ALIYUN_COM_GPU_SCHD_WEIGHT"
	EnvHighPrio      = "ALIYUN_COM_GPU_HIGH_PRIO"
	EnvNvidiaVisible = "NVIDIA_VISIBLE_DEVICES"
	// EnvMemLimitBytes (ours) is not a request: a plan writes it (Plan.Added), and libcgpu
	// enforces it when it has no /dev/cgpu to ask.
	EnvMemLimitBytes = "CGPU_MEM_LIMIT_BYTES"
)

// Intent is what a container's environment asks for, before it meets the node.
type Intent struct {
	// Off, when not empty, says why cGPU does not apply to the container.
	Off string
	// Mem is ALIYUN_COM_GPU_MEM_CONTAINER in GiB, one entry per visible GPU position, the
	// last repeating; nil when not set (default_memsize then decides).
	Mem []uint64
	// MemDev is ALIYUN_COM_GPU_MEM_DEV in GiB; 0 when not set (each GPU's own size).
	MemDev uint64
	GPUs   Selection
	// Weight is ALIYUN_COM_GPU_SCHD_WEIGHT; 0 when not set.
	Weight   int
	HighPrio bool
}

// EnvMap turns KEY=VALUE entries into a map; a later entry overrides an earlier one, as
// docker's own merging of --env-file and -e does. An entry without "=" (docker's -e NAME
// for a name the client does not have) sets nothing.
func EnvMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// ParseEnv reads the cgpu variables of a container environment. CGPU_DISABLE and a zero
// memory entry switch cGPU off before anything else is read, so a container that opts out
// is never refused over variables it does not use.
func ParseEnv(env map[string]string) (Intent, error) {
	var in Intent
	if v := env[EnvDisable]; v != "" {
		off, err := boolean(v)
		if err != nil {
			return in, valueErr(EnvDisable, v, err.Error())
		}
		if off {
			in.Off = EnvDisable + "=" + v
			return in, nil
		}
	}
	if v, ok := env[EnvMemContainer]; ok {
		mem, err := list(v, maxGiB)
		if err != nil {
			return in, valueErr(EnvMemContainer, v, err.Error()+" (want whole GiB per GPU, e.g. 6 or 3,1)")
		}
		if mem == nil {
			in.Off = EnvMemContainer + "=" + strconv.Quote(v) + " (0 or empty disables cGPU)"
			return in, nil
		}
		in.Mem = mem
	}
	var err error
	if v := env[EnvMemDev]; v != "" {
		if in.MemDev, err = ParseWhole(EnvMemDev, v, 1); err != nil {
			return in, err
		}
	}
	if v := env[EnvWeight]; v != "" {
		w, err := whole(v, 1, maxWeight)
		if err != nil {
			return in, valueErr(EnvWeight, v, err.Error())
		}
		in.Weight = int(w)
	}
	switch v := env[EnvHighPrio]; v {
	case "", "0":
	case "1":
		in.HighPrio = true
	default:
		return in, valueErr(EnvHighPrio, v, "not 0 or 1")
	}
	in.GPUs, err = parseVisible(env)
	if err != nil {
		return in, err
	}
	if in.GPUs.Mode == SelectNone {
		in.Off = EnvNvidiaVisible + "=" + strconv.Quote(in.GPUs.From) + " gives the container no GPU"
	}
	return in, nil
}

// parseVisible picks the GPUs the environment names: ALIYUN_COM_GPU_VISIBLE_DEVICES
// first, then NVIDIA_VISIBLE_DEVICES (as nvidia images set it), else one GPU placed by
// the node (ours: a container that asks for memory gets a GPU to hold it).
func parseVisible(env map[string]string) (Selection, error) {
	if v := env[EnvVisible]; v != "" {
		items, err := parseDeviceList(EnvVisible, v)
		return Selection{Mode: SelectList, List: items, From: EnvVisible + "=" + plain(v)}, err
	}
	v, ok := env[EnvNvidiaVisible]
	switch {
	case !ok:
		return Selection{Mode: SelectCount, Count: 1, From: "one GPU by default"}, nil
	case v == "all":
		return Selection{Mode: SelectAll, From: EnvNvidiaVisible + "=all"}, nil
	case v == "" || v == "none" || v == "void":
		return Selection{Mode: SelectNone, From: v}, nil
	}
	items, err := parseDeviceList(EnvNvidiaVisible, v)
	return Selection{Mode: SelectList, List: items, From: EnvNvidiaVisible + "=" + plain(v)}, err
}

// NvidiaVisible is the GPUs (node indexes, in the order given) that NVIDIA_VISIBLE_DEVICES
// gives a container cGPU leaves alone, as NVIDIA's container toolkit reads it: "all",
// "none" (the driver and no GPU), or a list of indexes or UUIDs of the node's GPUs. Unset,
// empty and "void" give none (cgpu-runtime gives such a container no driver at all).
func NvidiaVisible(env map[string]string, gpus []gpu.GPU) ([]int, error) {
	v := env[EnvNvidiaVisible]
	var chosen []gpu.GPU
	switch v {
	case "", "none", "void":
	case "all":
		chosen = gpus
	default:
		items, err := parseDeviceList(EnvNvidiaVisible, v)
		if err != nil {
			return nil, err
		}
		if _, chosen, err = resolve(Selection{Mode: SelectList, List: items, From: EnvNvidiaVisible + "=" + plain(v)}, gpus); err != nil {
			return nil, err
		}
	}
	out := make([]int, len(chosen))
	for i, g := range chosen {
		out[i] = g.Index
	}
	return out, nil
}
