package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cgpu-project/cgpu/pkg/alloc"
)

// options are docker cgpu run's own flags. Each but --gpus is another spelling of a
// container variable, so the plugin and a plain docker run -e ... decide alike.
type options struct {
	gpuMem   string
	gpus     string
	weight   string
	highPrio bool
	noCGPU   bool
	dryRun   bool
	format   string
}

// request is what a docker cgpu run command line asks for.
type request struct {
	// given is the container's cgpu variables from -e, --env-file and the cgpu flags.
	given map[string]string
	// fromFlags are the variables the cgpu flags set, to be added to the container.
	fromFlags map[string]string
	intent    alloc.Intent
	// gpus is --gpus, when given.
	gpus *alloc.Selection
}

// newRequest merges the cgpu flags into the environment the user gave with -e and
// --env-file. Saying one thing twice (a flag and its variable) is refused rather than
// guessed at.
func newRequest(o options, env map[string]string) (request, error) {
	r := request{given: map[string]string{}, fromFlags: map[string]string{}}
	for k, v := range env {
		r.given[k] = v
	}
	set := func(flag, name, value string) error {
		if _, ok := env[name]; ok {
			return fmt.Errorf("--%s and -e %s are both given; give one", flag, name)
		}
		r.given[name], r.fromFlags[name] = value, value
		return nil
	}
	for _, f := range []struct {
		on         bool
		flag, name string
		value      string
	}{
		{o.gpuMem != "", "gpu-mem", alloc.EnvMemContainer, o.gpuMem},
		{o.weight != "", "weight", alloc.EnvWeight, o.weight},
		{o.highPrio, "high-prio", alloc.EnvHighPrio, "1"},
		{o.noCGPU, "no-cgpu", alloc.EnvDisable, "true"},
	} {
		if !f.on {
			continue
		}
		if err := set(f.flag, f.name, f.value); err != nil {
			return r, err
		}
	}
	var err error
	if r.intent, err = alloc.ParseEnv(r.given); err != nil {
		return r, err
	}
	if o.gpus != "" {
		if _, ok := env[alloc.EnvVisible]; ok {
			return r, fmt.Errorf("--gpus and -e %s are both given; give one", alloc.EnvVisible)
		}
		sel, err := alloc.ParseGPUsFlag(o.gpus)
		if err != nil {
			return r, err
		}
		r.gpus = &sel
		if r.intent.Off == "" {
			r.intent.GPUs = sel
		}
	}
	return r, nil
}

// runtimeFor picks the container's runtime: cgpu, which a cGPU container needs; a user's
// own --runtime is kept only when cGPU is off.
func runtimeFor(p alloc.Plan, userRuntime string) (string, error) {
	switch {
	case userRuntime == "" || userRuntime == cgpuRuntime:
		return cgpuRuntime, nil
	case !p.Enabled:
		return userRuntime, nil
	}
	return "", fmt.Errorf("--runtime %s: a cGPU container runs on the %s runtime; leave --runtime out, or add --no-cgpu", userRuntime, cgpuRuntime)
}

// deviceRequest is docker's --gpus value that gives the container its GPUs through the
// NVIDIA driver: the planned GPUs, or without cGPU whatever --gpus asked for.
func deviceRequest(p alloc.Plan, gpus *alloc.Selection) string {
	if p.Enabled {
		ids := make([]string, len(p.GPUs))
		for i, a := range p.GPUs {
			ids[i] = strconv.Itoa(a.Index)
		}
		return `"device=` + strings.Join(ids, ",") + `"`
	}
	if gpus == nil {
		return ""
	}
	switch gpus.Mode {
	case alloc.SelectAll:
		return "all"
	case alloc.SelectCount:
		return strconv.Itoa(gpus.Count)
	case alloc.SelectList:
		return `"device=` + strings.Join(gpus.List, ",") + `"`
	}
	return ""
}
