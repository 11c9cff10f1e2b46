// Package metrics exports stat snapshots in the Prometheus exposition format through the
// official client: every scrape gathers a fresh snapshot, GPU figures are labelled by
// gpu, instance figures by gpu, id (the instance's 12-character name) and container
// (its name; empty for an orphan or when Docker could not be asked). Ratios are 0..1, as
// Prometheus counts them; a figure that is not known is left out, never made up. The
// scheduler's cumulative figures are counters (_total), the rest gauges.
package metrics

import (
	"context"
	"io"
	"log"
	"strconv"

	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

var (
	gpuLabels  = []string{"gpu"}
	instLabels = []string{"gpu", "id", "container"}

	upDesc       = prometheus.NewDesc("cgpu_up", "1 when the cgpu tree could be read, else 0.", nil, nil)
	defMemDesc   = prometheus.NewDesc("cgpu_default_memsize_bytes", "default_memsize: memory a container that asks for none gets (0: none).", nil, nil)
	dockerUpDesc = prometheus.NewDesc("cgpu_docker_up", "1 when Docker listed the containers, else 0 (names unknown, no orphan told).", nil, nil)
	gpuInfoDesc  = prometheus.NewDesc("cgpu_gpu_info", "The GPU's identity and policy name; always 1.", []string{"gpu", "uuid", "name", "policy"}, nil)

	gpuDescs = []struct {
		desc *prometheus.Desc
		val  func(g *stat.GPU) (float64, bool)
	}{
		{newDesc("gpu_policy", "Scheduling policy number, 0..5 (cgpu_gpu_info has its name).", gpuLabels), func(g *stat.GPU) (float64, bool) { return float64(g.Policy), true }},
		{newDesc("gpu_max_instances", "max_inst: most instances, and the weight the GPU shares out.", gpuLabels), func(g *stat.GPU) (float64, bool) { return float64(g.MaxInst), true }},
		{newDesc("gpu_free_weight", "Scheduling weight not given to an instance.", gpuLabels), func(g *stat.GPU) (float64, bool) { return float64(g.FreeWeight), true }},
		{newDesc("gpu_prio_ratio", "Most of the GPU's time high priority may preempt, 0..1.", gpuLabels), func(g *stat.GPU) (float64, bool) { return float64(g.PrioRatio) / 100, true }},
		{newDesc("gpu_instances", "Instances on the GPU.", gpuLabels), func(g *stat.GPU) (float64, bool) { return float64(len(g.Instances)), true }},
		{newDesc("gpu_memory_total_bytes", "The GPU's memory.", gpuLabels), func(g *stat.GPU) (float64, bool) { return float64(g.MemoryTotal), g.MemoryTotal > 0 }},
		{newDesc("gpu_memory_given_bytes", "Memory given to instances (sum of memsize).", gpuLabels), func(g *stat.GPU) (float64, bool) { return float64(g.MemoryGiven), true }},
		{newDesc("gpu_memory_used_bytes", "Memory the instances' processes hold.", gpuLabels), func(g *stat.GPU) (float64, bool) { return float64(g.MemoryUsed), true }},
		{newDesc("gpu_utilization_ratio", "GPU utilisation, 0..1: NVML's, else the sum of its instances' from the scheduler; absent when not known.", gpuLabels), func(g *stat.GPU) (float64, bool) { return ratio(g.Utilization) }},
	}
	instDescs = []struct {
		desc *prometheus.Desc
		val  func(in *stat.Instance) (float64, bool)
	}{
		{newDesc("instance_memory_limit_bytes", "memsize: the instance's memory.", instLabels), func(in *stat.Instance) (float64, bool) { return float64(in.Memsize), true }},
		{newDesc("instance_memory_used_bytes", "Memory the instance's processes hold.", instLabels), func(in *stat.Instance) (float64, bool) { return float64(in.Used), true }},
		{newDesc("instance_processes", "Processes holding memory on the instance.", instLabels), func(in *stat.Instance) (float64, bool) { return float64(len(in.Processes)), true }},
		{newDesc("instance_weight", "Scheduling weight.", instLabels), func(in *stat.Instance) (float64, bool) { return float64(in.Weight), true }},
		{newDesc("instance_high_priority", "1 for a high-priority instance.", instLabels), func(in *stat.Instance) (float64, bool) { return b2f(in.HighPrio), true }},
		{newDesc("instance_orphan", "1 when Docker has no container of the instance's ID.", instLabels), func(in *stat.Instance) (float64, bool) { return b2f(in.Orphan), true }},
		{newDesc("instance_compute_share_ratio", "Share of the GPU's time when all its instances are busy, by the policy's rule, 0..1; absent under native.", instLabels), func(in *stat.Instance) (float64, bool) { return ratio(in.ComputeShare) }},
		{newDesc("instance_compute_limit_ratio", "Most of the GPU's time the policy lets the instance have, 0..1; absent under native.", instLabels), func(in *stat.Instance) (float64, bool) { return ratio(in.ComputeLimit) }},
		{newDesc("instance_utilization_ratio", "GPU utilisation of the instance's processes, 0..1: the scheduler's (GPU time reported in the last complete second), else NVML's; absent when not known.", instLabels), func(in *stat.Instance) (float64, bool) { return ratio(in.Utilization) }},
	}
	// The scheduler's counters since the instance was added (it starts from 0 when the
	// module or the instance is new: a counter reset to Prometheus); absent when not read.
	instCounters = []struct {
		desc *prometheus.Desc
		val  func(s *stat.Sched) float64
	}{
		{newDesc("instance_gpu_seconds_total", "GPU time the instance's processes reported at slice ends, in seconds.", instLabels), func(s *stat.Sched) float64 { return s.GPUSeconds }},
		{newDesc("instance_charged_seconds_total", "Time the instance held the GPU, drains included, in seconds.", instLabels), func(s *stat.Sched) float64 { return s.ChargedSeconds }},
		{newDesc("instance_slices_total", "Slices granted to the instance.", instLabels), func(s *stat.Sched) float64 { return float64(s.Grants) }},
		{newDesc("instance_takebacks_total", "Slices taken back from the instance after the grace period.", instLabels), func(s *stat.Sched) float64 { return float64(s.Takebacks) }},
	}
)

func newDesc(name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc("cgpu_"+name, help, labels, nil)
}

func ratio(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p / 100, true
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Collector gathers a snapshot on each scrape.
type Collector struct {
	Gather func(context.Context) (*stat.Snapshot, error)
	// Log receives why a scrape could not read the tree (cgpu_up is then 0).
	Log *log.Logger
}

// Describe sends every metric's description.
func (c Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{upDesc, defMemDesc, dockerUpDesc, gpuInfoDesc} {
		ch <- d
	}
	for _, d := range gpuDescs {
		ch <- d.desc
	}
	for _, d := range instDescs {
		ch <- d.desc
	}
	for _, d := range instCounters {
		ch <- d.desc
	}
}

// Collect gathers a snapshot and sends its figures.
func (c Collector) Collect(ch chan<- prometheus.Metric) {
	s, err := c.Gather(context.Background())
	if err != nil {
		c.Log.Printf("cgpu: scrape: %v", err)
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(defMemDesc, prometheus.GaugeValue, float64(s.DefaultMemsize))
	ch <- prometheus.MustNewConstMetric(dockerUpDesc, prometheus.GaugeValue, b2f(s.DockerError == ""))
	for gi := range s.GPUs {
		g := &s.GPUs[gi]
		idx := strconv.Itoa(g.Index)
		ch <- prometheus.MustNewConstMetric(gpuInfoDesc, prometheus.GaugeValue, 1, idx, g.UUID, g.Name, g.PolicyName)
		for _, d := range gpuDescs {
			if v, ok := d.val(g); ok {
				ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, v, idx)
			}
		}
		for ii := range g.Instances {
			in := &g.Instances[ii]
			name := ""
			if in.Container != nil {
				name = in.Container.Name
			}
			for _, d := range instDescs {
				if v, ok := d.val(in); ok {
					ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, v, idx, in.ID, name)
				}
			}
			for _, d := range instCounters {
				if in.Sched != nil {
					ch <- prometheus.MustNewConstMetric(d.desc, prometheus.CounterValue, d.val(in.Sched), idx, in.ID, name)
				}
			}
		}
	}
}

// NewRegistry is a registry holding only cgpu's collector: an exporter of a node's GPU
// sharing, not of the exporter process itself.
func NewRegistry(c Collector) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(c)
	return r
}

// WriteText writes one scrape of g in the text exposition format.
func WriteText(w io.Writer, g prometheus.Gatherer) error {
	mfs, err := g.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}
