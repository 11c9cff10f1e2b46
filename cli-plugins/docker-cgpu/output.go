package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/cgpu-project/cgpu/pkg/alloc"
)

const (
	cgpuRuntime = "cgpu"
	// planLabel is the container label that records the plan it was started with.
	planLabel = "io.github.cgpu-project.plan"
)

// planOutput is the --dry-run --format json document (docs/cli.md has its schema).
type planOutput struct {
	CGPU    bool               `json:"cgpu"`
	Reason  string             `json:"reason,omitempty"`
	Runtime string             `json:"runtime"`
	Env     map[string]string  `json:"env"`
	GPUs    []alloc.Assignment `json:"gpus"`
	// DeviceRequest is the docker --gpus value that exposes the GPUs through the NVIDIA
	// driver; "" on the simulated node, where there is none.
	DeviceRequest string            `json:"device_request"`
	Labels        map[string]string `json:"labels"`
	Simulated     bool              `json:"simulated"`
}

func newPlanOutput(p alloc.Plan, runtime string, env map[string]string, deviceRequest string, sim bool) planOutput {
	gpus := p.GPUs
	if gpus == nil {
		gpus = []alloc.Assignment{}
	}
	label, _ := json.Marshal(struct {
		GPUs []alloc.Assignment `json:"gpus"`
	}{gpus})
	return planOutput{CGPU: p.Enabled, Reason: p.Reason, Runtime: runtime, Env: env, GPUs: gpus,
		DeviceRequest: deviceRequest, Labels: map[string]string{planLabel: string(label)}, Simulated: sim}
}

func (o planOutput) writeJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(o)
}

func (o planOutput) writeTable(w io.Writer) error {
	if !o.CGPU {
		fmt.Fprintf(w, "cGPU off: %s\nruntime: %s\n", o.Reason, o.Runtime)
	} else {
		fmt.Fprintf(w, "runtime: %s\n", o.Runtime)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "GPU\tUUID\tNAME\tMEMORY\tWEIGHT\tHIGH PRIO")
		for _, a := range o.GPUs {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d MiB of %d MiB\t%d\t%t\n", a.Index, a.UUID, a.Name,
				a.MemoryBytes>>20, a.GPUMemoryBytes>>20, a.Weight, a.HighPrio)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(o.Env))
	for k := range o.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "env: %s=%s\n", k, o.Env[k])
	}
	_, err := fmt.Fprintln(w, "(dry run: nothing was created)")
	return err
}
