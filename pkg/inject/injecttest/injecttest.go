// Package injecttest gives tests the real libcgpu and simulated driver files that
// cgpu-runtime injects, built from this repository.
package injecttest

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Built makes (if needed) libcgpu.so and the simulated driver, and returns libcgpu's path
// and the directory holding libcuda.so.1, libnvidia-ml.so.1 and nvidia-smi.
func Built(t testing.TB) (hook, simDriver string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..", "..")
	for _, m := range [][]string{
		{"-C", filepath.Join(repo, "sim"), "build/libcuda.so.1", "build/libnvidia-ml.so.1", "build/nvidia-smi"},
		{"-C", filepath.Join(repo, "libcgpu"), "build/libcgpu.so"},
	} {
		if out, err := exec.Command("make", append([]string{"-s"}, m...)...).CombinedOutput(); err != nil {
			t.Fatalf("make %v: %v\n%s", m, err, out)
		}
	}
	return filepath.Join(repo, "libcgpu", "build", "libcgpu.so"), filepath.Join(repo, "sim", "build")
}
