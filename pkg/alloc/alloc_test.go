package alloc

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

func t4s(n int) []gpu.GPU {
	g, _ := gpu.Sim{Count: n, MemMiB: gpu.SimDefaultMemMiB}.GPUs()
	return g
}

// withInstances is a fresh tree where GPU i already holds the given bytes in instances.
func withInstances(n int, held map[int][]uint64) *procfs.State {
	st := procfs.NewState(n)
	for gi, list := range held {
		for j, b := range list {
			if _, err := st.Add(procfs.AddRequest{GPU: gi, ID: strings.Repeat(string(rune('a'+j)), 12), Memsize: b, Weight: 1}); err != nil {
				panic(err)
			}
		}
	}
	return st
}

func decideEnv(t *testing.T, env map[string]string, gpus []gpu.GPU, st *procfs.State) (Plan, error) {
	t.Helper()
	in, err := ParseEnv(env)
	if err != nil {
		return Plan{}, err
	}
	return Decide(in, gpus, st)
}

func gibs(p Plan) []uint64 {
	var out []uint64
	for _, a := range p.GPUs {
		out = append(out, a.MemGiB)
	}
	return out
}

// SPEC.md "Memory lists across several GPUs", each row verbatim: 4 GPUs,
// ALIYUN_COM_GPU_MEM_DEV=23, NVIDIA_VISIBLE_DEVICES=0,1,2,3.
func TestSpecMemoryListTable(t *testing.T) {
	gpus, _ := gpu.Sim{Count: 4, MemMiB: 23 * 1024}.GPUs()
	for _, tc := range []struct {
		value string // "<unset>" leaves the variable out
		want  []uint64
	}{
		{"3", []uint64{3, 3, 3, 3}},
		{"3,1", []uint64{3, 1, 1, 1}},
		{"3,4,5,6", []uint64{3, 4, 5, 6}},
		{"<unset>", nil},
		{"0", nil},
		{"1,0,0", nil},
	} {
		t.Run(tc.value, func(t *testing.T) {
			env := map[string]string{EnvMemDev: "23", EnvNvidiaVisible: "0,1,2,3"}
			if tc.value != "<unset>" {
				env[EnvMemContainer] = tc.value
			}
			p, err := decideEnv(t, env, gpus, procfs.NewState(4))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if p.Enabled || p.Reason == "" {
					t.Fatalf("plan %+v: want cGPU disabled with a reason", p)
				}
				return
			}
			if !p.Enabled || !reflect.DeepEqual(gibs(p), tc.want) {
				t.Fatalf("GiB per GPU = %v, want %v", gibs(p), tc.want)
			}
			for i, a := range p.GPUs {
				if a.Index != i || a.MemoryBytes != tc.want[i]*GiB {
					t.Errorf("GPU %d: %+v, want index %d with %d GiB", i, a, i, tc.want[i])
				}
			}
		})
	}
}

// SPEC.md's two-container example: 6 and 8 GiB of a 15 GiB T4, scaled to its 15109 MiB.
func TestSpecTwoContainerExample(t *testing.T) {
	gpus := t4s(1)
	st := procfs.NewState(1)
	p1, err := decideEnv(t, map[string]string{EnvMemContainer: "6", EnvMemDev: "15", EnvNvidiaVisible: "all"}, gpus, st)
	if err != nil {
		t.Fatal(err)
	}
	// 6 of 15 GiB of 15109 MiB "shows about 6043 MiB".
	if got := p1.GPUs[0].MemoryBytes; got != 6337173913 || got/gpu.MiB != 6043 {
		t.Fatalf("6 GiB -> %d bytes (%d MiB), want 6337173913 (6043 MiB)", got, got/gpu.MiB)
	}
	st.Add(procfs.AddRequest{GPU: 0, ID: "aaaaaaaaaaaa", Memsize: p1.GPUs[0].MemoryBytes, Weight: 1})
	p2, err := decideEnv(t, map[string]string{EnvMemContainer: "8", EnvMemDev: "15", EnvNvidiaVisible: "all"}, gpus, st)
	if err != nil {
		t.Fatal(err)
	}
	st.Add(procfs.AddRequest{GPU: 0, ID: "bbbbbbbbbbbb", Memsize: p2.GPUs[0].MemoryBytes, Weight: 1})
	// 14 of 15 GiB are promised: a third container of 2 GiB does not fit.
	_, err = decideEnv(t, map[string]string{EnvMemContainer: "2", EnvMemDev: "15"}, gpus, st)
	assertRefused(t, err, "GPU 0", "ALIYUN_COM_GPU_MEM_CONTAINER=2", "overbooked")
	p4, err := decideEnv(t, map[string]string{EnvMemContainer: "1", EnvMemDev: "15"}, gpus, st)
	if err != nil || p4.GPUs[0].MemoryBytes != 1056195652 {
		t.Fatalf("1 GiB in the rest: %+v %v", p4, err)
	}
}

func assertRefused(t *testing.T, err error, parts ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *alloc.Error", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("message spans lines: %q", msg)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("message %q does not contain %q", msg, p)
		}
	}
}

func TestParseEnvRefusesMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, key, value, want string
	}{
		{"letters", EnvMemContainer, "abc", `item 1: not a whole number`},
		{"negative", EnvMemContainer, "-1", `item 1: not a whole number`},
		{"fraction", EnvMemContainer, "1.5", `item 1: not a whole number`},
		{"empty middle item", EnvMemContainer, "3,,4", "item 2: empty"},
		{"empty last item", EnvMemContainer, "3,", "item 2: empty"},
		{"empty first item", EnvMemContainer, ",3", "item 1: empty"},
		{"space", EnvMemContainer, "3, 1", `"3, 1": item 2: not a whole number`},
		{"overflow", EnvMemContainer, "18446744073709551616", "too large"},
		{"huge", EnvMemContainer, "1048577", "too large"},
		{"plus", EnvMemContainer, "+3", "not a whole number"},
		{"mem dev letters", EnvMemDev, "x", "not a whole number"},
		{"mem dev zero", EnvMemDev, "0", "at least 1"},
		{"weight zero", EnvWeight, "0", "at least 1"},
		{"weight negative", EnvWeight, "-2", "not a whole number"},
		{"weight overflow", EnvWeight, "99999999999999999999999", "too large"},
		{"high prio 2", EnvHighPrio, "2", "not 0 or 1"},
		{"high prio yes", EnvHighPrio, "yes", "not 0 or 1"},
		{"disable maybe", EnvDisable, "maybe", "not a boolean"},
		{"visible mixed", EnvVisible, "0,GPU-c6a1d000-0000-4000-8000-000000000001", "mixes indexes and UUIDs"},
		{"visible empty item", EnvVisible, "0,,1", "item 2: empty"},
		{"visible twice", EnvVisible, "1,01", "GPU 1 is listed twice"},
		{"visible negative", EnvVisible, "-1", "neither a GPU index nor"},
		{"visible MIG", EnvVisible, "MIG-abc", "MIG devices are not supported"},
		{"nvidia visible junk", EnvNvidiaVisible, "0,x", "neither a GPU index nor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{EnvMemContainer: "1", tc.key: tc.value}
			_, err := ParseEnv(env)
			assertRefused(t, err, tc.key, tc.want)
		})
	}
}

func TestParseEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Intent
	}{
		{"nothing", map[string]string{},
			Intent{GPUs: Selection{Mode: SelectCount, Count: 1, From: "one GPU by default"}}},
		{"disable wins over junk", map[string]string{EnvDisable: "true", EnvMemContainer: "abc"},
			Intent{Off: "CGPU_DISABLE=true"}},
		{"disable false", map[string]string{EnvDisable: "false", EnvMemContainer: "2"},
			Intent{Mem: []uint64{2}, GPUs: Selection{Mode: SelectCount, Count: 1, From: "one GPU by default"}}},
		{"empty memory disables", map[string]string{EnvMemContainer: ""},
			Intent{Off: `ALIYUN_COM_GPU_MEM_CONTAINER="" (0 or empty disables cGPU)`}},
		{"full", map[string]string{EnvMemContainer: "3,1", EnvMemDev: "23", EnvWeight: "4", EnvHighPrio: "1",
			EnvVisible: "GPU-a,GPU-b", EnvNvidiaVisible: "all"},
			Intent{Mem: []uint64{3, 1}, MemDev: 23, Weight: 4, HighPrio: true,
				GPUs: Selection{Mode: SelectList, List: []string{"GPU-a", "GPU-b"}, From: EnvVisible + "=GPU-a,GPU-b"}}},
		{"nvidia all", map[string]string{EnvMemContainer: "1", EnvNvidiaVisible: "all"},
			Intent{Mem: []uint64{1}, GPUs: Selection{Mode: SelectAll, From: "NVIDIA_VISIBLE_DEVICES=all"}}},
		{"nvidia none", map[string]string{EnvMemContainer: "1", EnvNvidiaVisible: "none"},
			Intent{Off: `NVIDIA_VISIBLE_DEVICES="none" gives the container no GPU`, Mem: []uint64{1},
				GPUs: Selection{Mode: SelectNone, From: "none"}}},
		{"leading zeros", map[string]string{EnvMemContainer: "06", EnvVisible: "02"},
			Intent{Mem: []uint64{6}, GPUs: Selection{Mode: SelectList, List: []string{"2"}, From: EnvVisible + "=02"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnv(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDecideRefusals(t *testing.T) {
	full := procfs.NewState(2)
	for i := 0; i < uapi.MaxInstDefault; i++ {
		full.Add(procfs.AddRequest{GPU: 0, ID: strings.Repeat(string(rune('a'+i%6)), 11) + string(rune('0'+i%10)) + "", Memsize: 1, Weight: 0})
	}
	heavy := procfs.NewState(2)
	heavy.Add(procfs.AddRequest{GPU: 0, ID: "aaaaaaaaaaaa", Memsize: 1, Weight: 14})
	for _, tc := range []struct {
		name  string
		env   map[string]string
		st    *procfs.State
		parts []string
	}{
		{"above the GPU's size", map[string]string{EnvMemContainer: "16", EnvVisible: "0"}, nil,
			[]string{"GPU 0 (Tesla T4", "ALIYUN_COM_GPU_MEM_CONTAINER=16", "above the GPU's size (ALIYUN_COM_GPU_MEM_DEV=15)"}},
		{"above MEM_DEV given", map[string]string{EnvMemContainer: "8", EnvMemDev: "7", EnvVisible: "1"}, nil,
			[]string{"GPU 1", "ALIYUN_COM_GPU_MEM_CONTAINER=8", "ALIYUN_COM_GPU_MEM_DEV=7"}},
		{"above what is left", map[string]string{EnvMemContainer: "8", EnvVisible: "1"}, withInstances(2, map[int][]uint64{1: {8 * GiB}}),
			[]string{"GPU 1", "ALIYUN_COM_GPU_MEM_CONTAINER=8 needs 8449565218", "left after 1 instance(s)"}},
		{"list longer than GPUs", map[string]string{EnvMemContainer: "1,2,3", EnvVisible: "0,1"}, nil,
			[]string{"ALIYUN_COM_GPU_MEM_CONTAINER=1,2,3", "3 entries for 2 visible GPU(s)"}},
		{"list longer than count", map[string]string{EnvMemContainer: "1,2"}, nil,
			[]string{"2 entries for 1 visible GPU(s) (one GPU by default)"}},
		{"unknown index", map[string]string{EnvMemContainer: "1", EnvVisible: "0,7"}, nil,
			[]string{"ALIYUN_COM_GPU_VISIBLE_DEVICES=0,7", "unknown GPU 7", "GPUs 0..1"}},
		{"unknown UUID", map[string]string{EnvMemContainer: "1", EnvVisible: "GPU-nope"}, nil,
			[]string{"unknown GPU GPU-nope"}},
		{"ALIYUN list wins over NVIDIA all", map[string]string{EnvMemContainer: "1", EnvNvidiaVisible: "all", EnvVisible: "0,1"}, nil, nil},
		{"weight above max_inst", map[string]string{EnvMemContainer: "1", EnvWeight: "17", EnvVisible: "0"}, nil,
			[]string{"GPU 0", "ALIYUN_COM_GPU_SCHD_WEIGHT=17", "outside 1..max_inst (16)"}},
		{"weight above free_weight", map[string]string{EnvMemContainer: "1", EnvWeight: "3", EnvVisible: "0"}, heavy,
			[]string{"GPU 0", "ALIYUN_COM_GPU_SCHD_WEIGHT=3", "above free_weight (2)"}},
		{"max_inst reached", map[string]string{EnvMemContainer: "1", EnvVisible: "0"}, full,
			[]string{"GPU 0", "max_inst=16"}},
		{"GPU missing from the tree", map[string]string{EnvMemContainer: "1", EnvNvidiaVisible: "0,1"}, procfs.NewState(1),
			[]string{"GPU 1", "no directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			if st == nil {
				st = procfs.NewState(2)
			}
			_, err := decideEnv(t, tc.env, t4s(2), st)
			if tc.parts == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			assertRefused(t, err, tc.parts...)
		})
	}
}

func TestPlacementBestFit(t *testing.T) {
	// Left: GPU 0 15.0, GPU 1 5.8, GPU 2 9.8, GPU 3 5.8 GiB (approx.).
	st := withInstances(4, map[int][]uint64{1: {9 * GiB}, 2: {5 * GiB}, 3: {9 * GiB}})
	gpus := t4s(4)
	place := func(env map[string]string, sel Selection) Plan {
		t.Helper()
		in, err := ParseEnv(env)
		if err != nil {
			t.Fatal(err)
		}
		in.GPUs = sel
		p, err := Decide(in, gpus, st)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	idx := func(p Plan) []int {
		var out []int
		for _, a := range p.GPUs {
			out = append(out, a.Index)
		}
		return out
	}
	one := Selection{Mode: SelectCount, Count: 1, From: "--gpus 1"}
	// 5 GiB fits GPUs 1 and 3 most tightly; equal free weight, so the lower index.
	if got := idx(place(map[string]string{EnvMemContainer: "5"}, one)); !reflect.DeepEqual(got, []int{1}) {
		t.Errorf("5 GiB on one GPU went to %v, want [1]", got)
	}
	// 6 GiB fits only GPUs 0 and 2; GPU 2 is tighter.
	if got := idx(place(map[string]string{EnvMemContainer: "6"}, one)); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("6 GiB went to %v, want [2]", got)
	}
	// Free weight breaks a tie of memory: GPU 3 has more of it than GPU 1.
	st.GPU(1).Instances[0].Weight = 5
	st.GPU(1).FreeWeight = 11
	if got := idx(place(map[string]string{EnvMemContainer: "5"}, one)); !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("tie broken to %v, want [3]", got)
	}
	// Two positions, 9 and 1 GiB: the 9 goes first to the tightest GPU it fits (2), the
	// 1 to the tightest of the rest; the list order is kept.
	p := place(map[string]string{EnvMemContainer: "1,9"}, Selection{Mode: SelectCount, Count: 2, From: "--gpus 2"})
	if got := idx(p); !reflect.DeepEqual(got, []int{3, 2}) || !reflect.DeepEqual(gibs(p), []uint64{1, 9}) {
		t.Errorf("1,9 on two GPUs: GPUs %v with %v GiB, want [3 2] with [1 9]", idx(p), gibs(p))
	}
	// A uniform request reads in index order.
	if got := idx(place(map[string]string{EnvMemContainer: "2"}, Selection{Mode: SelectCount, Count: 3})); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("2 GiB on three GPUs: %v, want [1 2 3]", got)
	}
	in, _ := ParseEnv(map[string]string{EnvMemContainer: "12"})
	in.GPUs = Selection{Mode: SelectCount, Count: 2, From: "--gpus 2"}
	_, err := Decide(in, gpus, st)
	assertRefused(t, err, "GPU 2", "ALIYUN_COM_GPU_MEM_CONTAINER=12", "no other GPU fits either (--gpus 2)")
	in.GPUs.Count = 5
	_, err = Decide(in, gpus, st)
	assertRefused(t, err, "--gpus 2", "asks for 5 GPUs; the node has 4")
}

func TestDefaultMemsizeAndWeights(t *testing.T) {
	st := procfs.NewState(1)
	p, err := decideEnv(t, map[string]string{}, t4s(1), st)
	if err != nil || p.Enabled || !strings.Contains(p.Reason, "default_memsize is 0") {
		t.Fatalf("unset memory, default 0: %+v %v", p, err)
	}
	st.DefaultMemsize = 2 * GiB
	p, err = decideEnv(t, map[string]string{}, t4s(1), st)
	if err != nil || !p.Enabled || p.GPUs[0].MemoryBytes != 2*GiB || p.GPUs[0].MemGiB != 0 || p.GPUs[0].Weight != 1 {
		t.Fatalf("default_memsize plan: %+v %v", p, err)
	}
	st.DefaultMemsize = 16 * GiB
	_, err = decideEnv(t, map[string]string{}, t4s(1), st)
	assertRefused(t, err, "GPU 0", "default_memsize=17179869184", "above the GPU's size")
	// No free weight left: the container still runs, with weight 0 (SPEC).
	st = procfs.NewState(1)
	st.Add(procfs.AddRequest{GPU: 0, ID: "aaaaaaaaaaaa", Memsize: 1, Weight: 16})
	p, err = decideEnv(t, map[string]string{EnvMemContainer: "1", EnvHighPrio: "1"}, t4s(1), st)
	if err != nil || p.GPUs[0].Weight != 0 || !p.GPUs[0].HighPrio {
		t.Fatalf("no free weight: %+v %v", p, err)
	}
	p, err = decideEnv(t, map[string]string{EnvMemContainer: "1", EnvWeight: "16"}, t4s(1), procfs.NewState(1))
	if err != nil || p.GPUs[0].Weight != 16 {
		t.Fatalf("weight 16: %+v %v", p, err)
	}
}

func TestAddedEnv(t *testing.T) {
	gpus := t4s(4)
	for _, tc := range []struct {
		name string
		env  map[string]string
		sel  *Selection
		want map[string]string
	}{
		{"placed", map[string]string{EnvMemContainer: "6"}, nil,
			map[string]string{EnvVisible: "0", EnvNvidiaVisible: "0", EnvMemDev: "15", EnvMemLimitBytes: "6337173913"}},
		{"all", map[string]string{EnvMemContainer: "6", EnvMemDev: "15"}, &Selection{Mode: SelectAll},
			map[string]string{EnvVisible: "0,1,2,3", EnvNvidiaVisible: "0,1,2,3", EnvMemLimitBytes: "6337173913,6337173913,6337173913,6337173913"}},
		{"user list kept", map[string]string{EnvMemContainer: "6", EnvVisible: "GPU-c6a1d000-0000-4000-8000-000000000002"}, nil,
			map[string]string{EnvNvidiaVisible: "GPU-c6a1d000-0000-4000-8000-000000000002", EnvMemDev: "15", EnvMemLimitBytes: "6337173913"}},
		{"nvidia all kept", map[string]string{EnvMemContainer: "6", EnvNvidiaVisible: "all"}, nil,
			map[string]string{EnvVisible: "0,1,2,3", EnvMemDev: "15", EnvMemLimitBytes: "6337173913,6337173913,6337173913,6337173913"}},
		{"list order, bytes replace the user's", map[string]string{EnvMemContainer: "3,1", EnvMemDev: "5", EnvVisible: "2,0", EnvMemLimitBytes: "1"}, nil,
			map[string]string{EnvNvidiaVisible: "2,0", EnvMemLimitBytes: "9505760870,3168586956"}},
		{"disabled adds nothing", map[string]string{EnvMemContainer: "0"}, nil, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ParseEnv(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if tc.sel != nil {
				in.GPUs = *tc.sel
			}
			p, err := Decide(in, gpus, procfs.NewState(4))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Added(tc.env); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("added %v, want %v", got, tc.want)
			}
			// The container's own environment decides the same plan again (the runtime's view).
			merged := map[string]string{}
			for k, v := range tc.env {
				merged[k] = v
			}
			for k, v := range p.Added(tc.env) {
				merged[k] = v
			}
			again, err := decideEnv(t, merged, gpus, procfs.NewState(4))
			if err != nil || !reflect.DeepEqual(again, p) {
				t.Fatalf("re-decided from the container env: %+v %v, want %+v", again, err, p)
			}
			vis := p.Visible(map[string]string{"PATH": "/bin", "NVIDIA_DRIVER_CAPABILITIES": "compute"})
			if _, ok := vis["PATH"]; ok || vis["NVIDIA_DRIVER_CAPABILITIES"] != "compute" {
				t.Fatalf("Visible = %v", vis)
			}
		})
	}
}

func TestParseGPUsFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Selection
		err  string
	}{
		{"all", Selection{Mode: SelectAll}, ""},
		{"2", Selection{Mode: SelectCount, Count: 2}, ""},
		{"count=3", Selection{Mode: SelectCount, Count: 3}, ""},
		{"count=all", Selection{Mode: SelectAll}, ""},
		{`"device=0,2"`, Selection{Mode: SelectList, List: []string{"0", "2"}}, ""},
		{"device=1", Selection{Mode: SelectList, List: []string{"1"}}, ""},
		{"0,1", Selection{Mode: SelectList, List: []string{"0", "1"}}, ""},
		{"GPU-x", Selection{Mode: SelectList, List: []string{"GPU-x"}}, ""},
		{"0", Selection{}, "at least 1"},
		{"-1", Selection{}, "not a whole number"},
		{"two", Selection{}, "not a whole number"},
		{"0,,1", Selection{}, "item 2: empty"},
		{"0,GPU-x", Selection{}, "mixes indexes and UUIDs"},
		{"device=", Selection{}, "item 1: empty"},
	} {
		got, err := ParseGPUsFlag(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--gpus") {
				t.Errorf("--gpus %s: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		got.From = ""
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("--gpus %s = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestScaling(t *testing.T) {
	t4 := uint64(gpu.SimDefaultMemMiB) * gpu.MiB
	for _, tc := range []struct{ mem, dev, total, want uint64 }{
		{6, 15, t4, 6337173913},
		{15, 15, t4, t4},
		{1, 1, 1 << 62, 1 << 62},
		{maxGiB, maxGiB, 1<<64 - 1, 1<<64 - 1}, // 128-bit product, no overflow
		{3, 23, 23 * GiB, 3 * GiB},
	} {
		if got := MemBytes(tc.mem, tc.dev, tc.total); got != tc.want {
			t.Errorf("MemBytes(%d, %d, %d) = %d, want %d", tc.mem, tc.dev, tc.total, got, tc.want)
		}
	}
	for mib, want := range map[uint64]uint64{15109: 15, 22731: 22, 40960: 40, 81920: 80, 16384: 16, 100: 1, 1535: 1, 1536: 2} {
		if got := MemDevOf(mib * gpu.MiB); got != want {
			t.Errorf("MemDevOf(%d MiB) = %d, want %d", mib, got, want)
		}
	}
}

func TestEnvMap(t *testing.T) {
	got := EnvMap([]string{"A=1", "B", "A=2=3", "C="})
	want := map[string]string{"A": "2=3", "C": ""}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("EnvMap = %v", got)
	}
}

// NVIDIA_VISIBLE_DEVICES of a container cGPU leaves alone, as the toolkit reads it.
func TestNvidiaVisible(t *testing.T) {
	gpus := t4s(3)
	for v, want := range map[string][]int{
		"all": {0, 1, 2}, "none": {}, "void": {}, "": {}, "1": {1}, "2,0": {2, 0},
		gpu.SimUUID(2) + "," + gpu.SimUUID(1): {2, 1},
	} {
		got, err := NvidiaVisible(map[string]string{EnvNvidiaVisible: v}, gpus)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v, want %v", v, got, err, want)
		}
	}
	for v, why := range map[string]string{
		"3": "unknown GPU 3; the node has GPUs 0..2", "0,0": "GPU 0 is listed twice",
		"0," + gpu.SimUUID(1): "mixes indexes and UUIDs", "x": `"x" is neither a GPU index`,
	} {
		_, err := NvidiaVisible(map[string]string{EnvNvidiaVisible: v}, gpus)
		assertRefused(t, err, EnvNvidiaVisible, why)
	}
}

func TestPlanIndexes(t *testing.T) {
	p := Plan{Enabled: true, GPUs: []Assignment{{Index: 2}, {Index: 0}}}
	if got := p.Indexes(); !reflect.DeepEqual(got, []int{2, 0}) {
		t.Errorf("%v", got)
	}
}
