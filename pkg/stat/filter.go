package stat

import (
	"fmt"
	"slices"
	"strings"
)

// Filter narrows a snapshot to some GPUs and some containers.
type Filter struct {
	// GPUs are GPU indexes; none means every GPU.
	GPUs []int
	// Containers are names, container ID prefixes or instance names, as docker stats
	// takes them; none means every instance.
	Containers []string
}

// Apply keeps the GPUs asked for and, when containers are named, only their instances and
// the GPUs they are on. GPU figures stay the whole GPU's. A GPU the tree does not have, or
// a container with no instance left after the GPU filter, is an error naming it.
func (f Filter) Apply(s *Snapshot) error {
	for _, idx := range f.GPUs {
		if !slices.ContainsFunc(s.GPUs, func(g GPU) bool { return g.Index == idx }) {
			return fmt.Errorf("--gpu=%d: unknown GPU %d; the cgpu tree has %s", idx, idx, gpuRange(s))
		}
	}
	if len(f.GPUs) > 0 {
		s.GPUs = slices.DeleteFunc(s.GPUs, func(g GPU) bool { return !slices.Contains(f.GPUs, g.Index) })
	}
	if len(f.Containers) == 0 {
		return nil
	}
	keep := map[*Instance]bool{}
	for _, arg := range f.Containers {
		matched, err := s.match(arg)
		if err != nil {
			return err
		}
		for _, in := range matched {
			keep[in] = true
		}
	}
	gpus := s.GPUs[:0]
	for _, g := range s.GPUs {
		var insts []Instance
		for i := range g.Instances {
			if keep[&g.Instances[i]] {
				insts = append(insts, g.Instances[i])
			}
		}
		if len(insts) > 0 {
			g.Instances = insts
			gpus = append(gpus, g)
		}
	}
	s.GPUs = gpus
	return nil
}

// match finds the instances of one container argument: a container name, else an ID
// prefix that names one container (or one orphan) only.
func (s *Snapshot) match(arg string) ([]*Instance, error) {
	if arg == "" {
		return nil, fmt.Errorf("container \"\": empty; give a name or an ID")
	}
	var byName, byID []*Instance
	ids := map[string]bool{}
	for gi := range s.GPUs {
		for ii := range s.GPUs[gi].Instances {
			in := &s.GPUs[gi].Instances[ii]
			id := in.ID
			if in.Container != nil {
				id = in.Container.ID
				if in.Container.Name == arg {
					byName = append(byName, in)
				}
			}
			if strings.HasPrefix(id, arg) {
				byID = append(byID, in)
				ids[id] = true
			}
		}
	}
	switch {
	case len(byName) > 0:
		return byName, nil
	case len(ids) > 1:
		return nil, fmt.Errorf("container %q: the ID prefix matches %d containers; give more of it", arg, len(ids))
	case len(byID) == 0:
		return nil, fmt.Errorf("container %q: no cgpu instance on the GPUs shown", arg)
	}
	return byID, nil
}

func gpuRange(s *Snapshot) string {
	if len(s.GPUs) == 0 {
		return "no GPU"
	}
	return fmt.Sprintf("GPUs %d..%d", s.GPUs[0].Index, s.GPUs[len(s.GPUs)-1].Index)
}
