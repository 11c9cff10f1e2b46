// Package settings is "docker cgpu set": a request to change the tree's tunable values is
// checked whole against the node before anything is written, with run's rules and
// messages (pkg/alloc); it is then applied in an order whose every step the kernel
// accepts, and a refusal part-way (the kernel has the final word) undoes what was written.
package settings

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/policy"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// Request is one docker cgpu set command line; "" and nil are "not given".
type Request struct {
	// GPUs is --gpu: "all" or a list of indexes. GPU-level values need it; it narrows
	// instance values to the containers' instances on those GPUs.
	GPUs                                       string
	Policy, MaxInst, PrioRatio, DefaultMemsize string
	Containers                                 []Container
	Weight, Memsize                            string
	HighPrio                                   *bool
	// RemoveOrphans are instance names whose container Docker does not have.
	RemoveOrphans []string
}

// Container is a container Docker resolved from the command line.
type Container struct {
	ID   string // the full ID
	Name string
}

func (c Container) String() string { return c.Name + " (" + procfs.ShortID(c.ID) + ")" }

func (r Request) gpuLevel() bool { return r.Policy != "" || r.MaxInst != "" || r.PrioRatio != "" }
func (r Request) instanceLevel() bool {
	return r.Weight != "" || r.Memsize != "" || r.HighPrio != nil
}

// usage refuses a command line that asks for nothing, or for things that do not go together.
func (r Request) usage() error {
	switch {
	case len(r.RemoveOrphans) > 0 && (r.gpuLevel() || r.instanceLevel() || r.DefaultMemsize != "" || len(r.Containers) > 0 || r.GPUs != ""):
		return errors.New("--remove-orphan goes alone: removing an instance is not undone with other changes")
	case r.gpuLevel() && r.GPUs == "":
		return errors.New("--policy, --max-inst and --prio-ratio need --gpu N|LIST|all")
	case r.instanceLevel() && len(r.Containers) == 0:
		return errors.New("--weight, --memsize and --high-prio need a CONTAINER")
	case len(r.Containers) > 0 && !r.instanceLevel():
		return errors.New("a CONTAINER is changed with --weight, --memsize or --high-prio")
	case !r.gpuLevel() && !r.instanceLevel() && r.DefaultMemsize == "" && len(r.RemoveOrphans) == 0:
		return errors.New("nothing to change")
	}
	return nil
}

// values are the request's numbers, parsed and range-checked where no GPU is involved.
type values struct {
	gpus                   []int
	policy, maxInst, prio  int64
	hasPolicy, hasMaxInst  bool
	hasPrio                bool
	weight, memGiB, defGiB uint64
	hasWeight, hasMem      bool
	hasDef                 bool
	highprio               *bool
}

func (r Request) parse(st *procfs.State) (values, error) {
	v := values{highprio: r.HighPrio}
	var err error
	if r.GPUs != "" {
		if v.gpus, err = parseGPUs(r.GPUs, st); err != nil {
			return v, err
		}
	}
	if r.Policy != "" {
		p, err := policy.Parse(r.Policy)
		if err != nil {
			return v, &alloc.Error{Value: "--policy=" + strconv.Quote(r.Policy), Rule: err.Error()}
		}
		v.policy, v.hasPolicy = int64(p), true
	}
	ranged := func(name, s string, lo, hi uint64) (int64, error) {
		n, err := alloc.ParseWhole(name, s, 0)
		if err == nil && (n < lo || n > hi) {
			err = &alloc.Error{Value: name + "=" + s, Rule: fmt.Sprintf("outside %d..%d", lo, hi)}
		}
		return int64(n), err
	}
	if r.MaxInst != "" {
		if v.maxInst, err = ranged("--max-inst", r.MaxInst, uapi.MaxInstMin, uapi.MaxInstMax); err != nil {
			return v, err
		}
		v.hasMaxInst = true
	}
	if r.PrioRatio != "" {
		if v.prio, err = ranged("--prio-ratio", r.PrioRatio, uapi.PrioRatioMin, uapi.PrioRatioMax); err != nil {
			return v, err
		}
		v.hasPrio = true
	}
	if r.Weight != "" {
		if v.weight, err = alloc.ParseWhole("--weight", r.Weight, 0); err != nil {
			return v, err
		}
		v.hasWeight = true
	}
	if r.Memsize != "" {
		if v.memGiB, err = alloc.ParseWhole("--memsize", r.Memsize, 1); err != nil {
			return v, err
		}
		v.hasMem = true
	}
	if r.DefaultMemsize != "" {
		if v.defGiB, err = alloc.ParseWhole("--default-memsize", r.DefaultMemsize, 0); err != nil {
			return v, err
		}
		v.hasDef = true
	}
	return v, nil
}

// ParseGPUs reads --gpu, as set and stat take it: "all", or a list of GPU indexes.
func ParseGPUs(s string) (indexes []int, all bool, err error) {
	if s == "all" {
		return nil, true, nil
	}
	for _, item := range strings.Split(s, ",") {
		n, err := alloc.ParseWhole("--gpu", item, 0)
		if err != nil {
			return nil, false, &alloc.Error{Value: "--gpu=" + strconv.Quote(s), Rule: fmt.Sprintf("item %q is not a GPU index; want N, a list such as 0,2, or all", item)}
		}
		if slices.Contains(indexes, int(n)) {
			return nil, false, &alloc.Error{Value: "--gpu=" + s, Rule: fmt.Sprintf("GPU %d is listed twice", n)}
		}
		indexes = append(indexes, int(n))
	}
	return indexes, false, nil
}

// parseGPUs reads --gpu against the tree: every GPU for "all", else GPUs it has.
func parseGPUs(s string, st *procfs.State) ([]int, error) {
	indexes, all, err := ParseGPUs(s)
	if err != nil {
		return nil, err
	}
	if all {
		indexes = make([]int, len(st.GPUs))
		for i, g := range st.GPUs {
			indexes[i] = g.Index
		}
	}
	for _, idx := range indexes {
		if st.GPU(idx) == nil {
			return nil, &alloc.Error{Value: "--gpu=" + s, Rule: fmt.Sprintf("unknown GPU %d; the cgpu tree has %s", idx, treeGPUs(st))}
		}
	}
	return indexes, nil
}

func treeGPUs(st *procfs.State) string {
	if len(st.GPUs) == 0 {
		return "no GPU"
	}
	return fmt.Sprintf("GPUs %d..%d", st.GPUs[0].Index, st.GPUs[len(st.GPUs)-1].Index)
}

// inventory is the node's GPU of a tree index, for messages and sizes; a GPU the
// inventory does not list has only its index.
func inventory(gpus []gpu.GPU, idx int) gpu.GPU {
	for _, g := range gpus {
		if g.Index == idx {
			return g
		}
	}
	return gpu.GPU{Index: idx}
}
