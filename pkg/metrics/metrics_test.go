package metrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/metrics/metricstest"
	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func sampleCollector(t *testing.T) Collector {
	return Collector{Gather: func(context.Context) (*stat.Snapshot, error) { return stat.Build(stattest.Sample(t)), nil },
		Log: log.New(io.Discard, "", 0)}
}

func TestScrape(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, NewRegistry(sampleCollector(t))); err != nil {
		t.Fatal(err)
	}
	got := metricstest.Parse(t, &b)
	web := "{container=web,gpu=0,id=aaaaaaaaaaaa}"
	db := "{container=db,gpu=0,id=bbbbbbbbbbbb}"
	orphan := "{container=,gpu=1,id=cccccccccccc}"
	want := map[string]float64{
		"cgpu_up{}": 1, "cgpu_docker_up{}": 1, "cgpu_default_memsize_bytes{}": 1 << 30,
		"cgpu_gpu_info{gpu=0,name=Tesla T4,policy=weight,uuid=GPU-c6a1d000-0000-4000-8000-000000000000}": 1,
		"cgpu_gpu_info{gpu=1,name=Tesla T4,policy=native,uuid=GPU-c6a1d000-0000-4000-8000-000000000001}": 1,
		"cgpu_gpu_policy{gpu=0}": 2, "cgpu_gpu_policy{gpu=1}": 5,
		"cgpu_gpu_max_instances{gpu=0}": 16, "cgpu_gpu_max_instances{gpu=1}": 16,
		"cgpu_gpu_free_weight{gpu=0}": 12, "cgpu_gpu_free_weight{gpu=1}": 14,
		"cgpu_gpu_prio_ratio{gpu=0}": 0.3, "cgpu_gpu_prio_ratio{gpu=1}": 0.3,
		"cgpu_gpu_instances{gpu=0}": 2, "cgpu_gpu_instances{gpu=1}": 1,
		"cgpu_gpu_memory_total_bytes{gpu=0}": 15109 << 20, "cgpu_gpu_memory_total_bytes{gpu=1}": 15109 << 20,
		"cgpu_gpu_memory_given_bytes{gpu=0}": 10 << 30, "cgpu_gpu_memory_given_bytes{gpu=1}": 1 << 30,
		"cgpu_gpu_memory_used_bytes{gpu=0}": 3 << 30, "cgpu_gpu_memory_used_bytes{gpu=1}": 256 << 20,
		"cgpu_gpu_utilization_ratio{gpu=0}":      0.8,
		"cgpu_instance_memory_limit_bytes" + web: 6 << 30, "cgpu_instance_memory_limit_bytes" + db: 4 << 30, "cgpu_instance_memory_limit_bytes" + orphan: 1 << 30,
		"cgpu_instance_memory_used_bytes" + web: 3 << 30, "cgpu_instance_memory_used_bytes" + db: 0, "cgpu_instance_memory_used_bytes" + orphan: 256 << 20,
		"cgpu_instance_processes" + web: 2, "cgpu_instance_processes" + db: 0, "cgpu_instance_processes" + orphan: 1,
		"cgpu_instance_weight" + web: 1, "cgpu_instance_weight" + db: 3, "cgpu_instance_weight" + orphan: 2,
		"cgpu_instance_high_priority" + web: 0, "cgpu_instance_high_priority" + db: 1, "cgpu_instance_high_priority" + orphan: 0,
		"cgpu_instance_orphan" + web: 0, "cgpu_instance_orphan" + db: 0, "cgpu_instance_orphan" + orphan: 1,
		"cgpu_instance_compute_share_ratio" + web: 0.175, "cgpu_instance_compute_share_ratio" + db: 0.825,
		"cgpu_instance_compute_limit_ratio" + web: 1, "cgpu_instance_compute_limit_ratio" + db: 0.825,
		"cgpu_instance_utilization_ratio" + web: 0.555, "cgpu_instance_utilization_ratio" + db: 0,
		"cgpu_instance_gpu_seconds_total" + orphan: 1.5, "cgpu_instance_charged_seconds_total" + orphan: 2,
		"cgpu_instance_slices_total" + orphan: 500, "cgpu_instance_takebacks_total" + orphan: 1,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s = %v (a figure not known must be absent)", k, got[k])
		}
	}
}

func TestScrapeWithoutTree(t *testing.T) {
	var logged bytes.Buffer
	c := Collector{Gather: func(context.Context) (*stat.Snapshot, error) { return nil, errors.New("no tree") },
		Log: log.New(&logged, "", 0)}
	var b bytes.Buffer
	if err := WriteText(&b, NewRegistry(c)); err != nil {
		t.Fatal(err)
	}
	if got := metricstest.Parse(t, &b); len(got) != 1 || got["cgpu_up{}"] != 0 {
		t.Errorf("scrape %v, want cgpu_up 0 alone", got)
	}
	if logged.String() != "cgpu: scrape: no tree\n" {
		t.Errorf("logged %q", logged.String())
	}
}

// Over HTTP, as Prometheus scrapes an exporter.
func TestScrapeHTTP(t *testing.T) {
	srv := httptest.NewServer(promhttp.HandlerFor(NewRegistry(sampleCollector(t)), promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := metricstest.Parse(t, resp.Body); got["cgpu_instance_weight{container=db,gpu=0,id=bbbbbbbbbbbb}"] != 3 || len(got) < 40 {
		t.Errorf("scrape: %d series, db weight %v", len(got), got["cgpu_instance_weight{container=db,gpu=0,id=bbbbbbbbbbbb}"])
	}
}
