package statset

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
)

// BenchmarkDockerCgpuStat16x25: the whole command as a user runs it, "docker cgpu stat"
// through the docker client (which starts the plugin) and the private dockerd, on a
// simulated node of 16 GPUs x 25 instances; beside it "docker cgpu --help", the cost of
// starting the client and the plugin alone.
func BenchmarkDockerCgpuStat16x25(b *testing.B) {
	if os.Getenv("CGPU_STATSET") != "1" {
		b.Skip("needs the private dockerd of test/suites/45-stat-set.sh (CGPU_STATSET=1)")
	}
	root := filepath.Join(b.TempDir(), "proc")
	stattest.Fill(b, root, 16, 25)
	env := append(os.Environ(), "CGPU_PROCFS_ROOT="+root, "CGPU_SIM_GPUS=16", "CGPU_SIM_MEM_MIB=40960")
	for _, args := range [][]string{{"cgpu", "stat"}, {"cgpu", "stat", "--format", "json"}, {"cgpu", "--help"}} {
		b.Run(args[len(args)-1], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(dockerBin(), args...)
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
		})
	}
}
