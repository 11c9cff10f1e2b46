package alloc

import (
	"errors"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// FuzzParseEnv: any environment either parses or is refused with a one-line *Error.
func FuzzParseEnv(f *testing.F) {
	for _, s := range []string{"3", "3,1", "3,,4", "abc", "-1", "1.5", "", "0", "1,0,0", "18446744073709551616", "GPU-a,GPU-b", "all", "0,1", "6,", "007", "+6", " 6"} {
		f.Add(s, "15", s, "1", "0", "false", "all")
	}
	f.Fuzz(func(t *testing.T, mem, dev, visible, weight, prio, disable, nvidia string) {
		env := map[string]string{EnvMemContainer: mem, EnvMemDev: dev, EnvVisible: visible,
			EnvWeight: weight, EnvHighPrio: prio, EnvDisable: disable, EnvNvidiaVisible: nvidia}
		in, err := ParseEnv(env)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if in.Off == "" {
			if len(in.Mem) > maxListItems || in.Weight > maxWeight {
				t.Fatalf("accepted %d memory entries, weight %d", len(in.Mem), in.Weight)
			}
			for _, m := range in.Mem {
				if m == 0 || m > maxGiB {
					t.Fatalf("accepted memory entry %d from %q", m, mem)
				}
			}
		}
	})
}

// FuzzParseGPUsFlag: any --gpus value parses to a usable selection or is refused.
func FuzzParseGPUsFlag(f *testing.F) {
	for _, s := range []string{"all", "2", "count=3", `"device=0,2"`, "0,1", "GPU-x", "0", "device=", "count=all"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseGPUsFlag(s)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if sel.Mode == SelectCount && sel.Count < 1 || sel.Mode == SelectList && len(sel.List) == 0 {
			t.Fatalf("--gpus %q gave unusable %+v", s, sel)
		}
	})
}

// FuzzDecide: whatever the environment and the tree already hold, an accepted plan never
// overbooks a GPU's memory, instances or weight, and never names a GPU twice.
func FuzzDecide(f *testing.F) {
	f.Add("6", "", "", "", uint64(0), uint64(0), uint8(1), uint8(0))
	f.Add("3,1", "23", "0,1,2,3", "4", uint64(8<<30), uint64(0), uint8(4), uint8(15))
	f.Add("8", "", "", "2", uint64(14<<30), uint64(1<<30), uint8(2), uint8(16))
	f.Fuzz(func(t *testing.T, mem, dev, visible, weight string, held, defMem uint64, count, usedWeight uint8) {
		gpus := t4s(4)
		st := procfs.NewState(4)
		st.DefaultMemsize = defMem % (32 << 30)
		st.Add(procfs.AddRequest{GPU: 1, ID: "aaaaaaaaaaaa", Memsize: held%(16<<30) + 1, Weight: int(usedWeight % 17)})
		in, err := ParseEnv(map[string]string{EnvMemContainer: mem, EnvMemDev: dev, EnvVisible: visible, EnvWeight: weight})
		if err != nil {
			return
		}
		if visible == "" {
			in.GPUs = Selection{Mode: SelectCount, Count: int(count%6) + 1, From: "fuzz"}
		}
		p, err := Decide(in, gpus, st)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		seen := map[int]bool{}
		for _, a := range p.GPUs {
			g := st.GPU(a.Index)
			if seen[a.Index] {
				t.Fatalf("GPU %d placed twice: %+v", a.Index, p)
			}
			seen[a.Index] = true
			if a.MemoryBytes == 0 || a.MemoryBytes+g.MemUsed() > gpus[a.Index].MemoryBytes {
				t.Fatalf("GPU %d overbooked: %d + %d > %d", a.Index, a.MemoryBytes, g.MemUsed(), gpus[a.Index].MemoryBytes)
			}
			if a.Weight+g.WeightUsed() > g.MaxInst || len(g.Instances) >= g.MaxInst {
				t.Fatalf("GPU %d weight or instances overbooked: %+v on %+v", a.Index, a, g)
			}
			if _, err := st.Add(procfs.AddRequest{GPU: a.Index, ID: "bbbbbbbbbbbb", Memsize: a.MemoryBytes, Weight: a.Weight}); err != nil {
				t.Fatalf("the kernel's rules refuse the plan: %v", err)
			}
		}
	})
}

func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || strings.ContainsAny(err.Error(), "\n\r") || e.Rule == "" {
		t.Fatalf("refusal %q is not a one-line *Error with a rule", err)
	}
}
