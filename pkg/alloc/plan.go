package alloc

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// Plan is a validated decision for one container.
type Plan struct {
	// Enabled is false when cGPU does not apply; Reason then says why.
	Enabled bool
	Reason  string
	GPUs    []Assignment
}

// Assignment is the container's share of one GPU: what its instance registers.
type Assignment struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
	Name  string `json:"name"`
	// MemoryBytes is the container's memory on this GPU (the instance's memsize).
	MemoryBytes    uint64 `json:"memory_bytes"`
	GPUMemoryBytes uint64 `json:"gpu_memory_bytes"`
	// MemGiB and MemDevGiB are the two variables the bytes were scaled from; both 0 when
	// the bytes are the tree's default_memsize.
	MemGiB    uint64 `json:"mem_gib"`
	MemDevGiB uint64 `json:"mem_dev_gib"`
	Weight    int    `json:"weight"`
	HighPrio  bool   `json:"highprio"`
}

// Indexes is the node indexes of the plan's GPUs.
func (p Plan) Indexes() []int {
	out := make([]int, len(p.GPUs))
	for i, a := range p.GPUs {
		out[i] = a.Index
	}
	return out
}

// need is what one visible-GPU position of the container asks for.
type need struct {
	pos    int
	memGiB uint64 // 0: default_memsize bytes
}

// Decide validates an intent against the node's GPUs and the tree's state, and places it.
// Nothing in the result breaks a rule of SPEC.md or docs/contracts.md: each GPU keeps its
// instances within max_inst, its memory within what is left, its weights within max_inst.
//
// Placement, when the container asks for a number of GPUs rather than a list: each
// request, largest first, goes to the GPU that has the least memory left after taking it
// (best fit, as gpushare places), ties going to the GPU with the most free_weight, then
// the lowest index.
func Decide(in Intent, gpus []gpu.GPU, st *procfs.State) (Plan, error) {
	if in.Off != "" {
		return Plan{Reason: in.Off}, nil
	}
	if in.Mem == nil && st.DefaultMemsize == 0 {
		return Plan{Reason: EnvMemContainer + " is not set and default_memsize is 0"}, nil
	}
	n, chosen, err := resolve(in.GPUs, gpus)
	if err != nil {
		return Plan{}, err
	}
	if len(in.Mem) > n {
		return Plan{}, &Error{Value: EnvMemContainer + "=" + joinUints(in.Mem),
			Rule: fmt.Sprintf("%d entries for %d visible GPU(s) (%s); a list may not be longer", len(in.Mem), n, in.GPUs.From)}
	}
	p := planner{in: in, st: st}
	needs := make([]need, n)
	for i := range needs {
		needs[i] = need{pos: i}
		if in.Mem != nil {
			needs[i].memGiB = in.Mem[min(i, len(in.Mem)-1)]
		}
	}
	var out []Assignment
	if chosen != nil {
		out, err = p.fixed(needs, chosen)
	} else {
		out, err = p.place(needs, gpus)
	}
	if err != nil {
		return Plan{}, err
	}
	if uniform(out) {
		sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	}
	return Plan{Enabled: true, GPUs: out}, nil
}

// resolve returns how many GPUs the container gets and, unless placement picks them,
// which ones in the order their memory list positions refer to.
func resolve(sel Selection, gpus []gpu.GPU) (int, []gpu.GPU, error) {
	switch sel.Mode {
	case SelectAll:
		return len(gpus), gpus, nil
	case SelectCount:
		if sel.Count > len(gpus) {
			return 0, nil, &Error{Value: sel.From, Rule: fmt.Sprintf("asks for %d GPUs; the node has %d", sel.Count, len(gpus))}
		}
		return sel.Count, nil, nil
	}
	chosen := make([]gpu.GPU, len(sel.List))
	for i, item := range sel.List {
		g, ok := lookup(item, gpus)
		if !ok {
			return 0, nil, &Error{Value: sel.From, Rule: fmt.Sprintf("unknown GPU %s; the node has %s", plain(item), inventory(gpus))}
		}
		for _, c := range chosen[:i] {
			if c.Index == g.Index {
				return 0, nil, &Error{Value: sel.From, Rule: fmt.Sprintf("GPU %d is listed twice", g.Index)}
			}
		}
		chosen[i] = g
	}
	return len(chosen), chosen, nil
}

func lookup(item string, gpus []gpu.GPU) (gpu.GPU, bool) {
	for _, g := range gpus {
		if strconv.Itoa(g.Index) == item || g.UUID == item {
			return g, true
		}
	}
	return gpu.GPU{}, false
}

func inventory(gpus []gpu.GPU) string {
	if len(gpus) == 0 {
		return "no GPU"
	}
	return fmt.Sprintf("GPUs 0..%d (nvidia-smi -L lists their UUIDs)", len(gpus)-1)
}

type planner struct {
	in Intent
	st *procfs.State
}

// fixed checks each listed GPU against its position's request.
func (p planner) fixed(needs []need, chosen []gpu.GPU) ([]Assignment, error) {
	out := make([]Assignment, len(needs))
	for i, nd := range needs {
		a, err := p.fit(nd, chosen[i])
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// place picks GPUs for the requests by best fit (see Decide).
func (p planner) place(needs []need, gpus []gpu.GPU) ([]Assignment, error) {
	order := append([]need(nil), needs...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].memGiB > order[j].memGiB })
	out := make([]Assignment, len(needs))
	used := map[int]bool{}
	for _, nd := range order {
		var best *Assignment
		var bestLeft uint64
		var closest error
		var closestLeft uint64
		for _, g := range gpus {
			if used[g.Index] {
				continue
			}
			a, err := p.fit(nd, g)
			left := p.left(g)
			if err != nil {
				if closest == nil || left > closestLeft {
					closest, closestLeft = err, left
				}
				continue
			}
			after := left - a.MemoryBytes
			if best == nil || after < bestLeft ||
				after == bestLeft && p.st.GPU(g.Index).FreeWeight > p.st.GPU(best.Index).FreeWeight {
				a := a
				best, bestLeft = &a, after
			}
		}
		if best == nil {
			if closest == nil {
				return nil, &Error{Value: p.in.GPUs.From, Rule: "no GPU is left to place on"}
			}
			e := closest.(*Error)
			return nil, &Error{GPU: e.GPU, Value: e.Value, Rule: e.Rule + "; no other GPU fits either (" + p.in.GPUs.From + ")"}
		}
		used[best.Index] = true
		out[nd.pos] = *best
	}
	return out, nil
}

// left is the memory of a GPU not yet promised to an instance.
func (p planner) left(g gpu.GPU) uint64 {
	gs := p.st.GPU(g.Index)
	if gs == nil || gs.MemUsed() >= g.MemoryBytes {
		return 0
	}
	return g.MemoryBytes - gs.MemUsed()
}

// fit decides one request on one GPU, or says which rule refuses it.
func (p planner) fit(nd need, g gpu.GPU) (Assignment, error) {
	gs := p.st.GPU(g.Index)
	a := Assignment{Index: g.Index, UUID: g.UUID, Name: g.Name, GPUMemoryBytes: g.MemoryBytes, HighPrio: p.in.HighPrio}
	refuse := func(value, format string, args ...any) (Assignment, error) {
		gg := g
		return a, &Error{GPU: &gg, Value: value, Rule: fmt.Sprintf(format, args...)}
	}
	if gs == nil {
		return refuse("GPU "+strconv.Itoa(g.Index), "the cgpu tree has no directory for this GPU (is cgpu_km loaded for every GPU?)")
	}
	memValue := "default_memsize=" + strconv.FormatUint(p.st.DefaultMemsize, 10)
	if nd.memGiB == 0 {
		a.MemoryBytes = p.st.DefaultMemsize
		if a.MemoryBytes > g.MemoryBytes {
			return refuse(memValue, "above the GPU's size of %s", human(g.MemoryBytes))
		}
	} else {
		a.MemGiB, a.MemDevGiB = nd.memGiB, p.in.MemDev
		if a.MemDevGiB == 0 {
			a.MemDevGiB = MemDevOf(g.MemoryBytes)
		}
		memValue = fmt.Sprintf("%s=%d", EnvMemContainer, nd.memGiB)
		if nd.memGiB > a.MemDevGiB {
			return refuse(memValue, "above the GPU's size (%s=%d)", EnvMemDev, a.MemDevGiB)
		}
		a.MemoryBytes = MemBytes(nd.memGiB, a.MemDevGiB, g.MemoryBytes)
	}
	if len(gs.Instances) >= gs.MaxInst {
		return refuse(memValue, "the GPU already runs max_inst=%d instances", gs.MaxInst)
	}
	if err := CheckMemory(g, memValue, a.MemoryBytes, p.left(g), len(gs.Instances)); err != nil {
		return a, err
	}
	switch w := p.in.Weight; {
	case w == 0:
		// SPEC: with no free weight a container still runs, with weight 0 and no compute.
		a.Weight = min(uapi.WeightDefault, gs.FreeWeight)
	case w > gs.MaxInst:
		return refuse(EnvWeight+"="+strconv.Itoa(w), "outside 1..max_inst (%d)", gs.MaxInst)
	case w > gs.FreeWeight:
		return refuse(EnvWeight+"="+strconv.Itoa(w), "above free_weight (%d)", gs.FreeWeight)
	default:
		a.Weight = w
	}
	return a, nil
}

// CheckMemory refuses need bytes (asked for by value) on GPU g when only left bytes remain
// after its other instances: memory may not be overbooked.
func CheckMemory(g gpu.GPU, value string, need, left uint64, others int) error {
	if need <= left {
		return nil
	}
	return &Error{GPU: &g, Value: value + " needs " + human(need),
		Rule: fmt.Sprintf("only %s left after %d instance(s); memory may not be overbooked", human(left), others)}
}

// uniform tells whether every GPU got the same request, so the order of the list carries
// no meaning and index order reads best.
func uniform(a []Assignment) bool {
	for _, x := range a {
		if x.MemGiB != a[0].MemGiB || x.MemDevGiB != a[0].MemDevGiB {
			return false
		}
	}
	return true
}

func joinUints(v []uint64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatUint(x, 10)
	}
	return strings.Join(s, ",")
}
