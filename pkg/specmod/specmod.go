// Package specmod is the change cgpu-runtime makes to a container's OCI spec before the
// next runtime sees it. It is pure: a spec and a plan in, the spec edited, no I/O, so each
// step of the change is tested on its own and later steps (the in-container hook's mounts)
// slot in beside the ones here.
package specmod

import (
	"sort"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/oci"
)

// Apply edits s for a container registered with plan p.
func Apply(s *oci.Spec, p alloc.Plan) error {
	if !p.Enabled {
		return nil
	}
	return addEnv(s, p)
}

// addEnv writes the plan's own decisions (the GPUs placed, MEM_DEV from the device) into
// the process environment, so the NVIDIA hook exposes the GPUs the instances are on and
// the in-container hook reads the same decision. Variables the container has stay as set.
func addEnv(s *oci.Spec, p alloc.Plan) error {
	env, err := s.Env()
	if err != nil {
		return err
	}
	added := p.Added(alloc.EnvMap(env))
	if len(added) == 0 {
		return nil
	}
	keys := make([]string, 0, len(added))
	for k := range added {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+added[k])
	}
	return s.SetEnv(env)
}
