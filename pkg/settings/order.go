package settings

import (
	"fmt"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/policy"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// order lists one GPU's changes so that each step keeps the kernel's rules, given that
// the end state does (Plan checked it): a raised max_inst first, then what lowers
// (weights, memory), high-priority flags, what raises, and a lowered max_inst last. Any
// step then sees weights summing to at most the larger of the two max_inst and never
// more instances or weight than max_inst; memory only grows once the rest has shrunk.
func order(v values, g *procfs.GPUState, inGPU bool, mine []target) []Change {
	var first, mid, lower, flags, raise, last []Change
	if inGPU {
		if v.hasMaxInst && int(v.maxInst) != g.MaxInst {
			c := gpuChange(g.Index, procfs.KeyMaxInst, int64(g.MaxInst), v.maxInst)
			if int(v.maxInst) > g.MaxInst {
				first = append(first, c)
			} else {
				last = append(last, c)
			}
		}
		if v.hasPolicy && int(v.policy) != g.Policy {
			c := gpuChange(g.Index, procfs.KeyPolicy, int64(g.Policy), v.policy)
			c.What = fmt.Sprintf("GPU %d: policy %d (%s) -> %d (%s)", g.Index, g.Policy, policy.Name(g.Policy), v.policy, policy.Name(int(v.policy)))
			mid = append(mid, c)
		}
		if v.hasPrio && int(v.prio) != g.PrioRatio {
			mid = append(mid, gpuChange(g.Index, procfs.KeyPrioRatio, int64(g.PrioRatio), v.prio))
		}
	}
	for _, t := range mine {
		for _, kv := range []struct {
			key      procfs.InstanceKey
			old, new int64
		}{
			{procfs.KeyWeight, int64(t.in.Weight), int64(t.weight)},
			{procfs.KeyMemsize, int64(t.in.Memsize), int64(t.memsize)},
		} {
			switch c := instChange(g.Index, t, kv.key, kv.old, kv.new); {
			case kv.new < kv.old:
				lower = append(lower, c)
			case kv.new > kv.old:
				raise = append(raise, c)
			}
		}
		if t.highprio != t.in.HighPrio {
			flags = append(flags, instChange(g.Index, t, procfs.KeyHighPrio, boolInt(t.in.HighPrio), boolInt(t.highprio)))
		}
	}
	return concat(first, mid, lower, flags, raise, last)
}

func concat(lists ...[]Change) []Change {
	var out []Change
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func gpuChange(gpu int, key procfs.GPUKey, old, new int64) Change {
	return Change{
		What: fmt.Sprintf("GPU %d: %s %d -> %d", gpu, key, old, new),
		Do:   func(tx procfs.Tx) error { return tx.SetGPU(gpu, key, new) },
		Undo: func(tx procfs.Tx) error { return tx.SetGPU(gpu, key, old) },
	}
}

func instChange(gpu int, t target, key procfs.InstanceKey, old, new int64) Change {
	id := t.in.ID
	return Change{
		What: fmt.Sprintf("%s on GPU %d: %s %d -> %d", t.c, gpu, key, old, new),
		Do:   func(tx procfs.Tx) error { return tx.SetInstance(gpu, id, key, new) },
		Undo: func(tx procfs.Tx) error { return tx.SetInstance(gpu, id, key, old) },
	}
}

// memBytes scales whole GiB as a user reads them off nvidia-smi to the GPU's real size,
// as ALIYUN_COM_GPU_MEM_CONTAINER is (docs/contracts.md §1).
func memBytes(memGiB uint64, g gpu.GPU, value string) (uint64, error) {
	if g.MemoryBytes == 0 {
		return 0, &alloc.Error{GPU: &g, Value: value, Rule: "the node's inventory does not list this GPU, so its size is unknown"}
	}
	memDev := alloc.MemDevOf(g.MemoryBytes)
	if memGiB > memDev {
		return 0, &alloc.Error{GPU: &g, Value: value, Rule: fmt.Sprintf("above the GPU's size (%d GiB, as nvidia-smi shows %d MiB)", memDev, g.MemoryBytes/gpu.MiB)}
	}
	return alloc.MemBytes(memGiB, memDev, g.MemoryBytes), nil
}

// defaultMemsize scales --default-memsize to the node's smallest GPU, so that the
// default fits every GPU and, on a node of one model, equals what
// ALIYUN_COM_GPU_MEM_CONTAINER of the same number gives.
func defaultMemsize(memGiB uint64, gpus []gpu.GPU, st *procfs.State) ([]Change, error) {
	var b uint64
	if memGiB > 0 {
		if len(gpus) == 0 {
			return nil, fmt.Errorf("--default-memsize=%d: the node lists no GPU to size it by", memGiB)
		}
		small := gpus[0]
		for _, g := range gpus {
			if g.MemoryBytes < small.MemoryBytes {
				small = g
			}
		}
		var err error
		if b, err = memBytes(memGiB, small, fmt.Sprintf("--default-memsize=%d", memGiB)); err != nil {
			return nil, err
		}
	}
	if st.DefaultMemsize == b {
		return nil, nil
	}
	return []Change{defChange(st.DefaultMemsize, b)}, nil
}

// removals removes orphaned instances (the caller made sure Docker has no container of
// those IDs); undoing one adds it back as it was.
func removals(ids []string, gpus []gpu.GPU, st *procfs.State) ([]Change, error) {
	var out []Change
	for _, id := range ids {
		found := false
		for _, g := range st.GPUs {
			in := g.Instance(id)
			if in == nil {
				continue
			}
			found = true
			gi, rm := g.Index, *in
			out = append(out, Change{
				What: fmt.Sprintf("orphan %s on GPU %d: removed", rm.ID, gi),
				Do:   func(tx procfs.Tx) error { return tx.Del(gi, rm.ID) },
				Undo: func(tx procfs.Tx) error {
					return tx.Add(procfs.AddRequest{GPU: gi, ID: rm.ID, Memsize: rm.Memsize, Weight: rm.Weight,
						HighPrio: rm.HighPrio, UUID: inventory(gpus, gi).UUID})
				},
			})
		}
		if !found {
			return nil, fmt.Errorf("--remove-orphan=%s: the tree has no instance of that name (docker cgpu stat lists orphans by their 12-character name)", id)
		}
	}
	return out, nil
}

func defChange(old, new uint64) Change {
	return Change{
		What: fmt.Sprintf("default_memsize %d -> %d", old, new),
		Do:   func(tx procfs.Tx) error { return tx.SetDefaultMemsize(int64(new)) },
		Undo: func(tx procfs.Tx) error { return tx.SetDefaultMemsize(int64(old)) },
	}
}
