package policy

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

func TestNamesRoundTrip(t *testing.T) {
	for p := 0; p <= uapi.PolicyMax; p++ {
		for _, s := range []string{Name(p), fmt.Sprint(p)} {
			got, err := Parse(s)
			if err != nil || got != p {
				t.Errorf("Parse(%q) = %d, %v; want %d", s, got, err, p)
			}
		}
	}
	if Name(uapi.PolicyWeight) != "weight" || Name(7) != "7" || Name(-1) != "-1" {
		t.Errorf("names: %q %q %q", Name(uapi.PolicyWeight), Name(7), Name(-1))
	}
	for _, bad := range []string{"", "6", "-1", "01", " 1", "Fair-Share", "weight-based", "1.0"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "fair-share, preemptive, weight, fixed, soft, native") {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

type inst struct {
	w  int
	hp bool
}

func gpuOf(policy, maxInst, prio int, ins ...inst) *procfs.GPUState {
	g := &procfs.GPUState{Policy: policy, MaxInst: maxInst, PrioRatio: prio}
	for i, in := range ins {
		g.Instances = append(g.Instances, procfs.Instance{ID: fmt.Sprintf("%012d", i), Weight: in.w, HighPrio: in.hp})
	}
	return g
}

func TestShares(t *testing.T) {
	const none = -1.0 // no figure
	for _, tc := range []struct {
		name  string
		g     *procfs.GPUState
		share []float64
		limit []float64
	}{
		{"fair-share: 1/max_inst, a cap", gpuOf(uapi.PolicyFair, 4, 30, inst{1, false}, inst{3, false}),
			[]float64{25, 25}, []float64{25, 25}},
		{"preemptive: 1/N busy, all alone", gpuOf(uapi.PolicyPreempt, 16, 30, inst{1, false}, inst{2, false}, inst{1, false}),
			[]float64{100.0 / 3, 100.0 / 3, 100.0 / 3}, []float64{100, 100, 100}},
		{"weight: w/Σw, idle keep theirs", gpuOf(uapi.PolicyWeight, 16, 30, inst{1, false}, inst{2, false}),
			[]float64{100.0 / 3, 200.0 / 3}, []float64{100.0 / 3, 200.0 / 3}},
		{"fixed: w/max_inst, a cap", gpuOf(uapi.PolicyFixed, 8, 30, inst{2, false}, inst{4, false}),
			[]float64{25, 50}, []float64{25, 50}},
		{"soft: w/Σw busy, all alone", gpuOf(uapi.PolicySoft, 16, 30, inst{1, false}, inst{2, false}),
			[]float64{100.0 / 3, 200.0 / 3}, []float64{100, 100}},
		{"native: the driver decides", gpuOf(uapi.PolicyNative, 16, 30, inst{1, false}, inst{0, false}),
			[]float64{none, 0}, []float64{none, 0}},
		{"unknown policy: no guess", gpuOf(9, 16, 30, inst{1, false}),
			[]float64{none}, []float64{none}},
		{"weight 0 gets nothing, even high priority", gpuOf(uapi.PolicyPreempt, 16, 30, inst{0, true}, inst{1, false}),
			[]float64{0, 100}, []float64{0, 100}},
		// docs/scheduler.md table (b), "busy + hp busy" rows (measured: 17.31 17.33 47.14).
		{"fair-share with high priority", gpuOf(uapi.PolicyFair, 4, 30, inst{1, false}, inst{1, false}, inst{1, true}),
			[]float64{17.5, 17.5, 47.5}, []float64{25, 25, 47.5}},
		// measured 23.10 23.09 52.91
		{"preemptive with high priority", gpuOf(uapi.PolicyPreempt, 16, 30, inst{1, false}, inst{1, false}, inst{1, true}),
			[]float64{70.0 / 3, 70.0 / 3, 30 + 70.0/3}, []float64{100, 100, 100}},
		// measured 17.32 34.66 47.12; an idle high-priority instance has no idle slots, so
		// alone A gets 1/(1+2) and C 30% + 70% x 1/(1+1+2)
		{"weight with high priority", gpuOf(uapi.PolicyWeight, 16, 30, inst{1, false}, inst{2, false}, inst{1, true}),
			[]float64{17.5, 35, 47.5}, []float64{100.0 / 3, 200.0 / 3, 47.5}},
		// measured 17.32 34.67 38.42
		{"fixed with high priority", gpuOf(uapi.PolicyFixed, 8, 30, inst{2, false}, inst{4, false}, inst{1, true}),
			[]float64{17.5, 35, 38.75}, []float64{25, 50, 38.75}},
		{"two high priority split the credit", gpuOf(uapi.PolicySoft, 16, 40, inst{1, true}, inst{1, true}),
			[]float64{20 + 30, 20 + 30}, []float64{100, 100}},
	} {
		got := Shares(tc.g)
		for i, c := range got {
			if tc.share[i] == none {
				if c.Known {
					t.Errorf("%s: instance %d: %+v, want no figure", tc.name, i, c)
				}
				continue
			}
			if !c.Known || math.Abs(c.Share-tc.share[i]) > 1e-9 || math.Abs(c.Limit-tc.limit[i]) > 1e-9 {
				t.Errorf("%s: instance %d: %+v, want share %.4f limit %.4f", tc.name, i, c, tc.share[i], tc.limit[i])
			}
		}
	}
}
