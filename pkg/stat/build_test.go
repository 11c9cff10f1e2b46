package stat_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

func TestBuild(t *testing.T) {
	s := stat.Build(stattest.Sample(t))
	if s.SchemaVersion != stat.SchemaVersion || !s.Time.Equal(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)) ||
		s.Root != "/proc/cgpu_km" || !s.Kernel || s.Simulated || s.DefaultMemsize != 1<<30 || s.DockerError != "" || len(s.GPUs) != 2 {
		t.Fatalf("node: %+v", s)
	}
	g0, g1 := s.GPUs[0], s.GPUs[1]
	if g0.Index != 0 || g0.UUID != gpu.SimUUID(0) || g0.Name != "Tesla T4" || g0.Policy != 2 || g0.PolicyName != "weight" ||
		g0.MaxInst != 16 || g0.FreeWeight != 12 || g0.PrioRatio != 30 || g0.MemoryTotal != 15109<<20 ||
		g0.MemoryGiven != 10<<30 || g0.MemoryUsed != 3<<30 || *g0.Utilization != 80 || len(g0.Instances) != 2 {
		t.Fatalf("GPU 0: %+v", g0)
	}
	if g1.PolicyName != "native" || g1.Utilization != nil || g1.MemoryUsed != 256<<20 || len(g1.Instances) != 1 {
		t.Fatalf("GPU 1: %+v", g1)
	}
	web, db, ghost := g0.Instances[0], g0.Instances[1], g1.Instances[0]
	if web.GPU != 0 || web.ID != stattest.IDWeb[:12] || *web.Container != (stat.Container{stattest.IDWeb, "web", "running"}) || web.Orphan ||
		web.Memsize != 6<<30 || web.Used != 3<<30 || web.Free != 3<<30 || len(web.Processes) != 2 ||
		web.Processes[1] != (stat.Process{PID: 101, Used: 2 << 30}) || web.Weight != 1 || web.HighPrio {
		t.Fatalf("web: %+v", web)
	}
	// Weight policy, prio_ratio 30, db high priority: web 0.7 x 1/4, alone 1/1; db
	// 0.3 + 0.7 x 3/4 both ways. Utilisation: its two processes' 30 + 25.5.
	if *web.ComputeShare != 17.5 || *web.ComputeLimit != 100 || *web.Utilization != 55.5 {
		t.Fatalf("web compute %v %v util %v", *web.ComputeShare, *web.ComputeLimit, *web.Utilization)
	}
	if db.Container.State != "exited" || !db.HighPrio || db.Weight != 3 || *db.ComputeShare != 82.5 || *db.ComputeLimit != 82.5 ||
		*db.Utilization != 0 || len(db.Processes) != 0 {
		t.Fatalf("db: %+v", db)
	}
	if ghost.Container != nil || !ghost.Orphan || ghost.ComputeShare != nil || ghost.ComputeLimit != nil || ghost.Utilization != nil {
		t.Fatalf("orphan on native: %+v", ghost)
	}
}

func TestBuildWithoutDocker(t *testing.T) {
	in := stattest.Sample(t)
	in.Containers, in.DockerErr = nil, errors.New("Cannot connect to the Docker daemon")
	s := stat.Build(in)
	if s.DockerError != "Cannot connect to the Docker daemon" {
		t.Fatalf("docker_error %q", s.DockerError)
	}
	for _, g := range s.GPUs {
		for _, in := range g.Instances {
			if in.Container != nil || in.Orphan {
				t.Errorf("%s: container %v orphan %v, want unknown and no orphan", in.ID, in.Container, in.Orphan)
			}
		}
	}
}

func TestBuildSkipsInstanceGoneWhileRead(t *testing.T) {
	in := stattest.Sample(t)
	delete(in.Meminfo, stat.MeminfoKey{GPU: 0, ID: stattest.IDDB[:12]})
	s := stat.Build(in)
	if len(s.GPUs[0].Instances) != 1 || s.GPUs[0].Instances[0].ID != stattest.IDWeb[:12] {
		t.Fatalf("instances %+v", s.GPUs[0].Instances)
	}
}

func TestBuildUtilisationCapped(t *testing.T) {
	in := stattest.Sample(t)
	in.Util[0] = stat.Utilization{GPU: 100, PerPID: map[int]float64{100: 70, 101: 60}}
	if u := *stat.Build(in).GPUs[0].Instances[0].Utilization; u != 100 {
		t.Fatalf("utilisation %v, want 100", u)
	}
	in.Util[0] = stat.Utilization{GPU: 10}
	if u := stat.Build(in).GPUs[0].Instances[0].Utilization; u != nil {
		t.Fatalf("utilisation without per-process samples %v, want unknown", *u)
	}
}

// The scheduler's figure: last_second_used_ns of 1e9 is 100 %, per instance (preferred to
// NVML's), the GPU's NVML's when known, else the instances' sum, at most 100; under
// native none, the counters still shown.
func TestBuildSchedulerUtilisation(t *testing.T) {
	in := stattest.Sample(t)
	web, db := stat.MeminfoKey{GPU: 0, ID: stattest.IDWeb[:12]}, stat.MeminfoKey{GPU: 0, ID: stattest.IDDB[:12]}
	fig := func(last, used uint64) uapi.InstStat {
		return uapi.InstStat{Sched: uapi.SchedStat{Policy: uapi.PolicyWeight, Used_ns: used, Charged_ns: used + 1000,
			Grants: 7, Takebacks: 2}, Last_second_used_ns: last}
	}
	in.Sched[web], in.Sched[db] = fig(333333333, 12345678901), fig(600000000, 0)
	g := stat.Build(in).GPUs[0]
	w, d := g.Instances[0], g.Instances[1]
	if *w.Utilization != 33.33 || w.UtilizationSource != stat.SourceScheduler || *d.Utilization != 60 ||
		d.UtilizationSource != stat.SourceScheduler {
		t.Fatalf("web %v %q, db %v %q", *w.Utilization, w.UtilizationSource, *d.Utilization, d.UtilizationSource)
	}
	if *w.Sched != (stat.Sched{GPUSeconds: 12.345678, ChargedSeconds: 12.345679, Grants: 7, Takebacks: 2}) {
		t.Fatalf("web sched %+v", *w.Sched)
	}
	if *g.Utilization != 80 || g.UtilizationSource != stat.SourceNVML {
		t.Fatalf("GPU with NVML: %v %q", *g.Utilization, g.UtilizationSource)
	}
	delete(in.Util, 0)
	if g := stat.Build(in).GPUs[0]; *g.Utilization != 93.33 || g.UtilizationSource != stat.SourceScheduler {
		t.Fatalf("GPU without NVML: %v %q", *g.Utilization, g.UtilizationSource)
	}
	// A slice over a second boundary can put more than a second in one: capped.
	in.Sched[web] = fig(1200000000, 0)
	g = stat.Build(in).GPUs[0]
	if *g.Instances[0].Utilization != 100 || *g.Utilization != 100 {
		t.Fatalf("capped: instance %v, GPU %v", *g.Instances[0].Utilization, *g.Utilization)
	}
	// Only one instance known: the GPU's figure is the known ones' sum.
	delete(in.Sched, web)
	g = stat.Build(in).GPUs[0]
	if g.Instances[0].Utilization != nil || g.Instances[0].Sched != nil || *g.Utilization != 60 {
		t.Fatalf("web unknown: %v, GPU %v", g.Instances[0].Utilization, *g.Utilization)
	}
	// Native: nobody reports used time, so utilisation is not known.
	in.Sched[web] = fig(500000000, 9)
	st := in.Sched[web]
	st.Sched.Policy = uapi.PolicyNative
	in.Sched[web] = st
	in.Sched[db] = st
	g = stat.Build(in).GPUs[0]
	if g.Instances[0].Utilization != nil || g.Instances[0].UtilizationSource != "" || g.Utilization != nil ||
		g.Instances[0].Sched == nil || g.Instances[0].Sched.Grants != 7 {
		t.Fatalf("native: %+v, GPU %v", g.Instances[0], g.Utilization)
	}
}
