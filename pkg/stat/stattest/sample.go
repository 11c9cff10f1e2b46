package stattest

import (
	"testing"
	"time"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// Container IDs of Sample.
const (
	IDWeb   = "aaaaaaaaaaaa1111111111111111111111111111111111111111111111111111"
	IDDB    = "bbbbbbbbbbbb2222222222222222222222222222222222222222222222222222"
	IDGhost = "cccccccccccc"
)

// Sample is a node of two simulated T4s: web (2 processes) and db on GPU 0 under the
// weight policy, db high priority, utilisation from NVML; an orphan on GPU 1 under
// native, whose scheduler counters are known (and its utilisation, native, is not).
func Sample(t testing.TB) stat.Input {
	gpus, _ := gpu.Sim{Count: 2, MemMiB: 15109}.GPUs()
	st := procfs.NewState(2)
	st.DefaultMemsize = 1 << 30
	for _, r := range []procfs.AddRequest{
		{GPU: 0, ID: IDWeb, Memsize: 6 << 30, Weight: 1},
		{GPU: 0, ID: IDDB, Memsize: 4 << 30, Weight: 3, HighPrio: true},
		{GPU: 1, ID: IDGhost + "0000", Memsize: 1 << 30, Weight: 2},
	} {
		if _, err := st.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetGPU(0, procfs.KeyPolicy, uapi.PolicyWeight); err != nil {
		t.Fatal(err)
	}
	if err := st.SetGPU(1, procfs.KeyPolicy, uapi.PolicyNative); err != nil {
		t.Fatal(err)
	}
	return stat.Input{
		Time: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Root: "/proc/cgpu_km", Kernel: true, State: st, GPUs: gpus,
		Meminfo: map[stat.MeminfoKey]procfs.Meminfo{
			{GPU: 0, ID: IDWeb[:12]}: {Free: 3 << 30, Procs: []procfs.ProcMem{{PID: 100, Mem: 1 << 30}, {PID: 101, Mem: 2 << 30}}},
			{GPU: 0, ID: IDDB[:12]}:  {Free: 4 << 30},
			{GPU: 1, ID: IDGhost}:    {Free: 768 << 20, Procs: []procfs.ProcMem{{PID: 300, Mem: 256 << 20}}},
		},
		Containers: []stat.Container{{ID: IDWeb, Name: "web", State: "running"}, {ID: IDDB, Name: "db", State: "exited"}},
		Util:       map[int]stat.Utilization{0: {GPU: 80, PerPID: map[int]float64{100: 30, 101: 25.5, 999: 10}}},
		Sched: map[stat.MeminfoKey]uapi.InstStat{
			{GPU: 1, ID: IDGhost}: {Sched: uapi.SchedStat{Policy: uapi.PolicyNative, Used_ns: 1500000000,
				Charged_ns: 2000000000, Grants: 500, Takebacks: 1}, Last_second_used_ns: 0},
		},
	}
}
