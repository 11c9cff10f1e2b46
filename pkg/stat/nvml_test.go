package stat_test

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/cgpu-project/cgpu/pkg/stat"
)

// NVML's own mock of a DGX A100 stands in for a GPU these machines do not have.
func TestNVMLUtil(t *testing.T) {
	srv := dgxa100.New()
	now := time.Unix(1700000000, 0)
	var asked uint64
	for i, d := range srv.Devices {
		dev := d.(*dgxa100.Device)
		i := i
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			if i == 2 {
				return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
			}
			return nvml.Utilization{Gpu: uint32(10 * i)}, nvml.SUCCESS
		}
		dev.GetProcessUtilizationFunc = func(since uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			asked = since
			switch i {
			case 0:
				return []nvml.ProcessUtilizationSample{{Pid: 7, SmUtil: 20}, {Pid: 7, SmUtil: 40}, {Pid: 8, SmUtil: 5}}, nvml.SUCCESS
			case 1:
				return nil, nvml.ERROR_NOT_FOUND
			}
			return nil, nvml.ERROR_NOT_SUPPORTED
		}
	}
	u := stat.NVMLUtil{Lib: srv, Now: func() time.Time { return now }}.Read()
	if asked != uint64(now.Add(-time.Second).UnixMicro()) {
		t.Errorf("samples asked since %d", asked)
	}
	if len(u) != 7 {
		t.Fatalf("%d GPUs known, want 7 of 8 (GPU 2 reports none)", len(u))
	}
	if g := u[0]; g.GPU != 0 || g.PerPID[7] != 30 || g.PerPID[8] != 5 || len(g.PerPID) != 2 {
		t.Errorf("GPU 0: %+v", g)
	}
	if g := u[1]; g.GPU != 10 || g.PerPID == nil || len(g.PerPID) != 0 {
		t.Errorf("GPU 1 (no samples: every process used none): %+v", g)
	}
	if _, ok := u[2]; ok {
		t.Errorf("GPU 2 known: %+v", u[2])
	}
	if g := u[3]; g.GPU != 30 || g.PerPID != nil {
		t.Errorf("GPU 3 (no per-process figures): %+v", g)
	}
}
