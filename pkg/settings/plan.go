package settings

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// Change is one value written to the tree, and how to write the old one back.
type Change struct {
	// What says it for people: "GPU 0: max_inst 16 -> 8".
	What     string
	Do, Undo func(procfs.Tx) error
}

// Held reads the memory an instance's processes hold now.
type Held func(gpu int, id string) (uint64, error)

// target is one instance a CONTAINER names, with its values before and after.
type target struct {
	c        Container
	in       procfs.Instance
	weight   int
	memsize  uint64
	highprio bool
}

// Plan checks the request against the node (its GPUs and the tree's state st) and
// returns the changes in the order to apply them. Nothing is written. Every rule is
// checked on the state the request leads to, so a refusal names the value at fault;
// the order then makes each step one the kernel accepts (see order).
func Plan(r Request, gpus []gpu.GPU, st *procfs.State, held Held) ([]Change, error) {
	if err := r.usage(); err != nil {
		return nil, err
	}
	if len(r.RemoveOrphans) > 0 {
		return removals(r.RemoveOrphans, gpus, st)
	}
	v, err := r.parse(st)
	if err != nil {
		return nil, err
	}
	var changes []Change
	if v.hasDef {
		c, err := defaultMemsize(v.defGiB, gpus, st)
		if err != nil {
			return nil, err
		}
		changes = append(changes, c...)
	}
	targets, err := r.targets(v, st)
	if err != nil {
		return nil, err
	}
	for gi := range st.GPUs {
		g := &st.GPUs[gi]
		inGPU := slices.Contains(v.gpus, g.Index)
		mine := targets[g.Index]
		if !inGPU && len(mine) == 0 {
			continue
		}
		c, err := planGPU(v, inventory(gpus, g.Index), g, inGPU, mine, held)
		if err != nil {
			return nil, err
		}
		changes = append(changes, c...)
	}
	return changes, nil
}

// targets finds each CONTAINER's instances, by GPU: on the --gpu GPUs when given, else on
// every GPU it has one. A container without one there is refused.
func (r Request) targets(v values, st *procfs.State) (map[int][]target, error) {
	out := map[int][]target{}
	seen := map[string]bool{}
	for _, c := range r.Containers {
		// The same container named twice (by name and by ID) is one target.
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		found := false
		for _, g := range st.GPUs {
			if v.gpus != nil && !slices.Contains(v.gpus, g.Index) {
				continue
			}
			in := g.Instance(c.ID)
			if in == nil {
				continue
			}
			found = true
			t := target{c: c, in: *in, weight: in.Weight, memsize: in.Memsize, highprio: in.HighPrio}
			out[g.Index] = append(out[g.Index], t)
		}
		if !found {
			where := "on any GPU (it runs without cGPU, or is not running)"
			if v.gpus != nil {
				where = "on --gpu " + r.GPUs
			}
			return nil, fmt.Errorf("container %s has no cgpu instance %s", c, where)
		}
	}
	return out, nil
}

// planGPU checks one GPU's new values and orders its changes.
func planGPU(v values, inv gpu.GPU, g *procfs.GPUState, inGPU bool, mine []target, held Held) ([]Change, error) {
	refuse := func(value, format string, a ...any) error {
		return &alloc.Error{GPU: &inv, Value: value, Rule: fmt.Sprintf(format, a...)}
	}
	maxInst := g.MaxInst
	if inGPU && v.hasMaxInst {
		maxInst = int(v.maxInst)
	}
	// The instances' new values; the others keep theirs.
	for i := range mine {
		t := &mine[i]
		if v.hasWeight {
			if int(v.weight) > maxInst {
				return nil, refuse(fmt.Sprintf("--weight=%d for %s", v.weight, t.c), "outside 0..max_inst (%d)", maxInst)
			}
			t.weight = int(v.weight)
		}
		if v.hasMem {
			b, err := memBytes(v.memGiB, inv, fmt.Sprintf("--memsize=%d for %s", v.memGiB, t.c))
			if err != nil {
				return nil, err
			}
			t.memsize = b
		}
		if r := v.highprio; r != nil {
			t.highprio = *r
		}
	}
	weights, given := 0, uint64(0)
	for _, in := range g.Instances {
		w, m := in.Weight, in.Memsize
		for _, t := range mine {
			if t.in.ID == in.ID {
				w, m = t.weight, t.memsize
			}
		}
		weights += w
		given += m
	}
	maxValue := "--max-inst=" + strconv.Itoa(maxInst)
	if len(g.Instances) > maxInst {
		return nil, refuse(maxValue, "below the GPU's %d instances", len(g.Instances))
	}
	if weights > maxInst {
		value := maxValue
		switch {
		case v.hasWeight && inGPU && v.hasMaxInst:
			value = fmt.Sprintf("--weight=%d with %s", v.weight, maxValue)
		case v.hasWeight:
			value = fmt.Sprintf("--weight=%d", v.weight)
		}
		return nil, refuse(value, "the GPU's weights would sum to %d, above max_inst (%d)", weights, maxInst)
	}
	for _, t := range mine {
		if !v.hasMem {
			break
		}
		value := fmt.Sprintf("--memsize=%d for %s", v.memGiB, t.c)
		others := given - t.memsize
		left := uint64(0)
		if inv.MemoryBytes > others {
			left = inv.MemoryBytes - others
		}
		if err := alloc.CheckMemory(inv, value, t.memsize, left, len(g.Instances)-1); err != nil {
			return nil, err
		}
		h, err := held(g.Index, t.in.ID)
		if err != nil {
			return nil, err
		}
		if t.memsize < h {
			return nil, refuse(value, "below the %d bytes its processes hold now", h)
		}
	}
	return order(v, g, inGPU, mine), nil
}
