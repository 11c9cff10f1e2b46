package alloc

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// The placement rule of docs/cli.md on nodes whose free memory is not in index order, so
// that placing in index order, largest-free-first, smallest-free-first (before taking the
// request) or requests in list order each pick other GPUs than the rule.
func TestPlacementOrder(t *testing.T) {
	const MiB = 1 << 20
	t4 := t4s(4) // 15109 MiB each: held G GiB leaves about 14.75-G GiB
	// A T4 and a 32 GiB GPU: 5 GiB is 5036 MiB of the T4 (scaled by its 15 GiB) but 5120
	// MiB of the other.
	mixed := []gpu.GPU{t4[0], {Index: 1, UUID: gpu.SimUUID(1), Name: "Tesla V100-SXM2-32GB", MemoryBytes: 32768 * MiB}}
	for _, tc := range []struct {
		name   string
		gpus   []gpu.GPU
		held   map[int][]uint64 // bytes of the instances already on GPU i
		weight map[int]int      // weight of GPU i's first instance (default 1)
		mem    string           // ALIYUN_COM_GPU_MEM_CONTAINER
		count  int
		want   []int // the GPU of each memory-list position
	}{
		{name: "tightest fit at a middle index", gpus: t4,
			held: map[int][]uint64{0: {1 * GiB}, 1: {4 * GiB}, 2: {8 * GiB}}, // left 13.75 10.75 6.75 14.75
			mem:  "5", count: 1, want: []int{2}},
		{name: "the smallest free is skipped where the request does not fit", gpus: t4,
			held: map[int][]uint64{0: {3 * GiB}, 1: {10 * GiB}, 2: {12 * GiB}, 3: {6 * GiB}}, // 11.75 4.75 2.75 8.75
			mem:  "5", count: 1, want: []int{3}},
		{name: "equal memory left: the most free_weight, at a higher index", gpus: t4,
			held: map[int][]uint64{1: {5 * GiB}, 3: {5 * GiB}}, weight: map[int]int{1: 4}, // free_weight 12 and 15
			mem: "5", count: 1, want: []int{3}},
		{name: "equal memory left and free_weight: the lowest index", gpus: t4,
			held: map[int][]uint64{1: {5 * GiB}, 3: {5 * GiB}},
			mem:  "5", count: 1, want: []int{1}},
		{name: "the largest request is placed first; the list keeps its order", gpus: t4,
			held: map[int][]uint64{0: {5 * GiB}, 1: {4 * GiB}, 2: {14 * GiB}, 3: {14 * GiB}}, // 9.75 10.75 0.75 0.75
			// 9 first takes GPU 0 (0.75 left), 5 then GPU 1. Placing 5 first would
			// take GPU 0 (4.75 left) and leave 9 GPU 1.
			mem: "5,9", count: 2, want: []int{1, 0}},
		{name: "a uniform request: the three tightest, listed in index order", gpus: t4,
			held: map[int][]uint64{0: {1 * GiB}, 1: {4 * GiB}, 2: {8 * GiB}}, // placed 2, 1, 0
			mem:  "2", count: 3, want: []int{0, 1, 2}},
		{name: "the fit is judged on each GPU's bytes, not on its free memory", gpus: mixed,
			// Left: T4 9989 MiB -> 4953 after 5 GiB; V100 10000 MiB -> 4880 after.
			held: map[int][]uint64{0: {5 * GiB}, 1: {22768 * MiB}},
			mem:  "5", count: 1, want: []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := procfs.NewState(len(tc.gpus))
			for gi, list := range tc.held {
				for j, b := range list {
					w := 1
					if j == 0 && tc.weight[gi] != 0 {
						w = tc.weight[gi]
					}
					if _, err := st.Add(procfs.AddRequest{GPU: gi, ID: strings.Repeat(string(rune('a'+j)), 12), Memsize: b, Weight: w}); err != nil {
						t.Fatal(err)
					}
				}
			}
			in, err := ParseEnv(map[string]string{EnvMemContainer: tc.mem})
			if err != nil {
				t.Fatal(err)
			}
			in.GPUs = Selection{Mode: SelectCount, Count: tc.count, From: "--gpus " + strconv.Itoa(tc.count)}
			p, err := Decide(in, tc.gpus, st)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, a := range p.GPUs {
				got = append(got, a.Index)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s GiB on %d GPU(s) went to GPUs %v, want %v", tc.mem, tc.count, got, tc.want)
			}
		})
	}
}
