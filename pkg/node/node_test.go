package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/gpu"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "runtime.json")
	os.WriteFile(file, []byte(`{"procfs_root": "/x", "sim": true, "sim_gpus": 2, "next_runtime": "/usr/bin/runc"}`), 0o644)
	for _, tc := range []struct {
		name string
		path string
		env  map[string]string
		want Config
		err  string
	}{
		{"file", file, nil, Config{ProcfsRoot: "/x", Sim: true, SimGPUs: 2, SimMemMiB: 15109, NextRuntime: "/usr/bin/runc"}, ""},
		{"file from env", "", map[string]string{EnvConfig: file}, Config{ProcfsRoot: "/x", Sim: true, SimGPUs: 2, SimMemMiB: 15109, NextRuntime: "/usr/bin/runc"}, ""},
		{"env overrides", file, map[string]string{EnvSim: "0", EnvSimGPUs: "8", EnvSimMemMiB: "40960", EnvRoot: "/y"},
			Config{ProcfsRoot: "/y", SimGPUs: 8, SimMemMiB: 40960, NextRuntime: "/usr/bin/runc"}, ""},
		{"missing explicit file", filepath.Join(dir, "nope.json"), nil, Config{}, "no such file"},
		{"bad sim", file, map[string]string{EnvSim: "perhaps"}, Config{}, "CGPU_SIM"},
		{"bad gpus", file, map[string]string{EnvSimGPUs: "0"}, Config{}, "at least 1 GPU"},
		{"bad mem", file, map[string]string{EnvSimMemMiB: "-5"}, Config{}, "CGPU_SIM_MEM_MIB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(tc.path, env(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestLoadRefusesUnknownFields(t *testing.T) {
	file := filepath.Join(t.TempDir(), "runtime.json")
	os.WriteFile(file, []byte(`{"procfs_rot": "/x"}`), 0o644)
	if _, err := Load(file, env(nil)); err == nil || !strings.Contains(err.Error(), "procfs_rot") {
		t.Fatalf("err = %v, want the misspelt field named", err)
	}
}

func TestRootAndInventory(t *testing.T) {
	if r := (Config{}).Root(); r != KernelRoot {
		t.Errorf("default root %s", r)
	}
	if r := (Config{Sim: true}).Root(); r != SimRoot {
		t.Errorf("sim root %s", r)
	}
	c := Config{Sim: true, SimGPUs: 2, SimMemMiB: 100, ProcfsRoot: filepath.Join(t.TempDir(), "p")}
	n, err := Open(c)
	if err != nil || len(n.GPUs) != 2 || n.GPUs[1].MemoryBytes != 100*gpu.MiB || n.Tree.Kernel() {
		t.Fatalf("open sim node: %+v %v", n, err)
	}
}

// Without a GPU, NVML or CGPU_SIM the node fails with the one line that names the simulator.
func TestNoGPUNamesSimulator(t *testing.T) {
	if _, err := gpu.NewNVML().GPUs(); err == nil {
		t.Skip("NVML finds GPUs on this machine")
	}
	_, err := Open(Config{ProcfsRoot: t.TempDir(), SimGPUs: 1, SimMemMiB: 1})
	if !errors.Is(err, gpu.ErrNoGPU) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "CGPU_SIM=1") {
		t.Fatalf("err = %v", err)
	}
}

func TestNextRuntimePath(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "myruntime")
	os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755)
	if p, err := (Config{NextRuntime: fake}).NextRuntimePath(); err != nil || p != fake {
		t.Fatalf("%s, %v", p, err)
	}
	if _, err := (Config{NextRuntime: filepath.Join(dir, "missing")}).NextRuntimePath(); err == nil {
		t.Fatal("missing next runtime accepted")
	}
	t.Setenv("PATH", dir)
	os.Rename(fake, filepath.Join(dir, "runc"))
	if p, err := (Config{}).NextRuntimePath(); err != nil || p != filepath.Join(dir, "runc") {
		t.Fatalf("default: %s, %v", p, err)
	}
}

func TestInjectedPaths(t *testing.T) {
	c := Config{}
	if c.HookPath() != "/usr/local/lib/cgpu/libcgpu.so" || c.SimDriverDir() != "/usr/local/lib/cgpu/sim" || c.SimStatePath() != "/run/cgpu-sim/state" {
		t.Fatalf("defaults %s %s %s", c.HookPath(), c.SimDriverDir(), c.SimStatePath())
	}
	file := filepath.Join(t.TempDir(), "runtime.json")
	os.WriteFile(file, []byte(`{"hook": "/h.so", "sim_driver": "/d", "sim_state": "/s"}`), 0o644)
	c, err := Load(file, env(nil))
	if err != nil || c.HookPath() != "/h.so" || c.SimDriverDir() != "/d" || c.SimStatePath() != "/s" {
		t.Fatalf("from the file: %+v %v", c, err)
	}
	c, err = Load(file, env(map[string]string{EnvSimState: "/t"}))
	if err != nil || c.SimStatePath() != "/t" {
		t.Fatalf("CGPU_SIM_STATE: %+v %v", c, err)
	}
}
