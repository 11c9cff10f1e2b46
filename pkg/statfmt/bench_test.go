package statfmt

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// benchStat: one stat in-process, reading a full simulated node of 16 GPUs x 25
// instances (every instance's value files and meminfo) and printing it; Docker's list is
// given, its own cost is the daemon's.
func benchStat(b *testing.B, format string) {
	root := filepath.Join(b.TempDir(), "proc")
	ids := stattest.Fill(b, root, 16, uapi.MaxInstMax)
	containers := make([]stat.Container, len(ids))
	for i, id := range ids {
		containers[i] = stat.Container{ID: id, Name: fmt.Sprintf("c%d", i), State: "running"}
	}
	tr, _ := procfs.Open(root, 16)
	gpus, _ := gpu.Sim{Count: 16, MemMiB: 40960}.GPUs()
	src := stat.Source{Tree: tr, GPUs: gpus, Simulated: true, Now: time.Now,
		Containers: func(context.Context) ([]stat.Container, error) { return containers, nil }}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := src.Gather(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if err := Write(io.Discard, s, Options{Format: format}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/stat")
}

func BenchmarkStat16x25Table(b *testing.B) { benchStat(b, "") }
func BenchmarkStat16x25JSON(b *testing.B)  { benchStat(b, "json") }
