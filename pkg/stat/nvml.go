package stat

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// utilWindow is how far back process samples are averaged: about what nvidia-smi's own
// utilisation figure covers.
const utilWindow = time.Second

// NVMLUtil reads utilisation through an initialised NVML (the caller keeps NVML open for
// as long as it reads: a watch or an exporter reads many times).
type NVMLUtil struct {
	Lib nvml.Interface
	// Now gives the sample window's end.
	Now func() time.Time
}

// Read returns each GPU's utilisation and each process's, where NVML gives them. A GPU
// whose utilisation NVML cannot read is left out (not known); one whose per-process
// samples it cannot read has PerPID nil.
func (u NVMLUtil) Read() map[int]Utilization {
	out := map[int]Utilization{}
	count, ret := u.Lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return out
	}
	since := uint64(u.Now().Add(-utilWindow).UnixMicro())
	for i := 0; i < count; i++ {
		d, ret := u.Lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		rates, ret := d.GetUtilizationRates()
		if ret != nvml.SUCCESS {
			continue
		}
		util := Utilization{GPU: float64(rates.Gpu)}
		samples, ret := d.GetProcessUtilization(since)
		switch ret {
		case nvml.SUCCESS:
			util.PerPID = meanPerPID(samples)
		case nvml.ERROR_NOT_FOUND:
			// No process sampled in the window: every process used none.
			util.PerPID = map[int]float64{}
		}
		out[i] = util
	}
	return out
}

// meanPerPID averages each process's SM utilisation over its samples.
func meanPerPID(samples []nvml.ProcessUtilizationSample) map[int]float64 {
	sum, n := map[int]float64{}, map[int]int{}
	for _, s := range samples {
		sum[int(s.Pid)] += float64(s.SmUtil)
		n[int(s.Pid)]++
	}
	for pid := range sum {
		sum[pid] /= float64(n[pid])
	}
	return sum
}
