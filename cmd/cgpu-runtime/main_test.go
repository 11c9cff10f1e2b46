package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/inject/injecttest"
	"github.com/cgpu-project/cgpu/pkg/oci"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/version"
)

// These tests drive the built cgpu-runtime with the real runc on a busybox bundle, as
// containerd does: the same global options, create, state and delete.

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cgpu-runtime-test")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "cgpu-runtime")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type rig struct {
	t                        *testing.T
	dir, root, tree, cfgPath string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("runc needs root")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		t.Skip("no runc")
	}
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no busybox")
	}
	dir := t.TempDir()
	r := &rig{t: t, dir: dir, root: filepath.Join(dir, "runc"), tree: filepath.Join(dir, "proc"), cfgPath: filepath.Join(dir, "runtime.json")}
	hook, drv := injecttest.Built(t)
	cfg, _ := json.Marshal(map[string]any{"sim": true, "sim_gpus": 2, "procfs_root": r.tree, "next_runtime": "runc",
		"hook": hook, "sim_driver": drv, "sim_state": filepath.Join(dir, "sim-state")})
	os.WriteFile(r.cfgPath, cfg, 0o644)
	os.MkdirAll(filepath.Join(dir, "bundle", "rootfs", "bin"), 0o755)
	b, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "bundle", "rootfs", "bin", "busybox"), b, 0o755)
	cmd := exec.Command("runc", "spec")
	cmd.Dir = filepath.Join(dir, "bundle")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("runc spec: %s", out)
	}
	return r
}

func (r *rig) bundle(args []string, env ...string) string {
	b := filepath.Join(r.dir, "bundle")
	raw, _ := os.ReadFile(filepath.Join(b, "config.json"))
	var c map[string]any
	json.Unmarshal(raw, &c)
	p := c["process"].(map[string]any)
	p["terminal"] = false
	p["args"] = args
	p["env"] = append([]string{"PATH=/bin"}, env...)
	raw, _ = json.Marshal(c)
	os.WriteFile(filepath.Join(b, "config.json"), raw, 0o644)
	return b
}

// runtime runs cgpu-runtime with containerd's global options and returns its exit code
// and standard error. Output goes to files: a container's init keeps a pipe open.
func (r *rig) runtime(args ...string) (int, string) {
	r.t.Helper()
	errf, _ := os.CreateTemp(r.dir, "stderr")
	defer errf.Close()
	full := append([]string{"--cgpu-config", r.cfgPath, "--root", r.root, "--log", filepath.Join(r.dir, "log.json"), "--log-format", "json"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Stderr = errf
	err := cmd.Run()
	b, _ := os.ReadFile(errf.Name())
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(b)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return 0, string(b)
}

func (r *rig) state() *procfs.State {
	r.t.Helper()
	tr, err := procfs.Open(r.tree, 2)
	if err != nil {
		r.t.Fatal(err)
	}
	st, err := tr.Read()
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}

func (r *rig) runcKnows(id string) bool {
	return exec.Command("runc", "--root", r.root, "state", id).Run() == nil
}

const id = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"

func TestCreateRegistersDeleteUnregisters(t *testing.T) {
	r := newRig(t)
	b := r.bundle([]string{"/bin/busybox", "sleep", "60"}, "ALIYUN_COM_GPU_MEM_CONTAINER=6", "ALIYUN_COM_GPU_HIGH_PRIO=1")
	// As containerd asks: the init's pid is read from the file runc writes (the other
	// tests pass none, and the runtime asks runc's state).
	if code, stderr := r.runtime("create", "--bundle", b, "--pid-file", filepath.Join(b, "init.pid"), id); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	defer exec.Command("runc", "--root", r.root, "delete", "--force", id).Run()
	if !r.runcKnows(id) {
		t.Fatal("runc did not create the container")
	}
	in := r.state().GPU(0).Instance(id)
	if in == nil || in.Memsize != 6337173913 || !in.HighPrio || in.Weight != 1 {
		t.Fatalf("GPU 0 instance %+v", in)
	}
	spec, _ := oci.Load(b)
	env, _ := spec.Env()
	for _, want := range []string{"ALIYUN_COM_GPU_VISIBLE_DEVICES=0", "NVIDIA_VISIBLE_DEVICES=0", "ALIYUN_COM_GPU_MEM_DEV=15"} {
		if !slices.Contains(env, want) {
			t.Errorf("bundle env %v lacks %s", env, want)
		}
	}
	if code, stderr := r.runtime("delete", "--force", id); code != 0 {
		t.Fatalf("delete: %d %s", code, stderr)
	}
	if r.runcKnows(id) || r.state().GPU(0).Instance(id) != nil {
		t.Fatal("delete left the container or its instance")
	}
	// A second delete (containerd retries) changes nothing and registers nothing.
	r.runtime("delete", id)
	if len(r.state().GPU(0).Instances) != 0 {
		t.Fatal("instances after a second delete")
	}
}

// The container gets libcgpu, an /etc/ld.so.preload naming it before the image's own
// entries, and the simulated driver with the node's state; the spec's own mounts stay.
func TestCreateInjects(t *testing.T) {
	r := newRig(t)
	b := r.bundle([]string{"/bin/busybox", "sleep", "60"}, "ALIYUN_COM_GPU_MEM_CONTAINER=1")
	os.MkdirAll(filepath.Join(b, "rootfs", "etc"), 0o755)
	os.WriteFile(filepath.Join(b, "rootfs", "etc", "ld.so.preload"), []byte("/lib/libown.so\n"), 0o644)
	defer os.RemoveAll(filepath.Join(b, "rootfs", "etc"))
	if code, stderr := r.runtime("create", "--bundle", b, id); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	defer exec.Command("runc", "--root", r.root, "delete", "--force", id).Run()
	if out, err := exec.Command("runc", "--root", r.root, "start", id).CombinedOutput(); err != nil {
		t.Fatalf("start: %v %s", err, out)
	}
	in := func(args ...string) string {
		out, err := exec.Command("runc", append([]string{"--root", r.root, "exec", id, "/bin/busybox"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("exec %v: %v %s", args, err, out)
		}
		return string(out)
	}
	if got := in("cat", "/etc/ld.so.preload"); got != "/usr/local/lib/cgpu/libcgpu.so\n/lib/libown.so\n" {
		t.Errorf("/etc/ld.so.preload in the container: %q", got)
	}
	hook, drv := injecttest.Built(t)
	for file, host := range map[string]string{
		"/usr/local/lib/cgpu/libcgpu.so":              hook,
		"/usr/lib/x86_64-linux-gnu/libcuda.so.1":      filepath.Join(drv, "libcuda.so.1"),
		"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1": filepath.Join(drv, "libnvidia-ml.so.1"),
		"/usr/bin/nvidia-smi":                         filepath.Join(drv, "nvidia-smi"),
		"/run/cgpu-sim/state":                         filepath.Join(r.dir, "sim-state"),
	} {
		want, _ := exec.Command("sha256sum", host).Output()
		if got := in("sha256sum", file); strings.Fields(got)[0] != strings.Fields(string(want))[0] {
			t.Errorf("%s in the container is not %s", file, host)
		}
	}
	if got := in("sh", "-c", "echo x >/usr/local/lib/cgpu/libcgpu.so 2>&1; echo $?"); got == "0\n" {
		t.Error("libcgpu is writable in the container")
	}
	spec, _ := oci.Load(b)
	var mounts []map[string]any
	json.Unmarshal(spec.Raw("mounts"), &mounts)
	if len(mounts) < 7 || mounts[0]["destination"] != "/proc" {
		t.Errorf("the spec's own mounts are not kept first: %v", mounts)
	}
}

func TestRefusedCreateReachesTheUser(t *testing.T) {
	r := newRig(t)
	b := r.bundle([]string{"/bin/busybox", "sleep", "60"}, "ALIYUN_COM_GPU_MEM_CONTAINER=16")
	code, stderr := r.runtime("create", "--bundle", b, id)
	if code == 0 {
		exec.Command("runc", "--root", r.root, "delete", "--force", id).Run()
		t.Fatal("16 GiB on a 15 GiB GPU was created")
	}
	want := "ALIYUN_COM_GPU_MEM_CONTAINER=16: above the GPU's size"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	log, _ := os.ReadFile(filepath.Join(r.dir, "log.json"))
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	var last map[string]string
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["level"] != "error" || !strings.Contains(last["msg"], want) {
		t.Errorf("runtime log's last line %q is not the error containerd reports", lines[len(lines)-1])
	}
	if r.runcKnows(id) || len(r.state().GPU(0).Instances) != 0 {
		t.Fatal("a refused create left a container or an instance")
	}
}

func TestFailedRuncCreateUnregisters(t *testing.T) {
	r := newRig(t)
	b := r.bundle([]string{"/bin/no-such-program"}, "ALIYUN_COM_GPU_MEM_CONTAINER=2")
	if code, _ := r.runtime("create", "--bundle", b, id); code == 0 {
		t.Fatal("runc created a container without its program")
	}
	for _, g := range r.state().GPUs {
		if len(g.Instances) != 0 {
			t.Fatalf("GPU %d kept %+v after runc failed", g.Index, g.Instances)
		}
	}
}

func TestDisabledPassesThrough(t *testing.T) {
	r := newRig(t)
	for _, env := range [][]string{{"CGPU_DISABLE=true", "ALIYUN_COM_GPU_MEM_CONTAINER=abc"}, {"ALIYUN_COM_GPU_MEM_CONTAINER=0"}, nil} {
		b := r.bundle([]string{"/bin/busybox", "true"}, env...)
		before, _ := os.ReadFile(filepath.Join(b, "config.json"))
		if code, stderr := r.runtime("create", "--bundle", b, id); code != 0 {
			t.Fatalf("%v: create %d %s", env, code, stderr)
		}
		if !r.runcKnows(id) {
			t.Fatalf("%v: not passed to runc", env)
		}
		after, _ := os.ReadFile(filepath.Join(b, "config.json"))
		if _, err := os.Stat(filepath.Join(b, "cgpu-ld.so.preload")); string(after) != string(before) || !os.IsNotExist(err) {
			t.Fatalf("%v: something was injected", env)
		}
		if code, stderr := r.runtime("delete", "--force", id); code != 0 {
			t.Fatalf("%v: delete %d %s", env, code, stderr)
		}
		for _, g := range r.state().GPUs {
			if len(g.Instances) != 0 {
				t.Fatalf("%v: registered %+v", env, g.Instances)
			}
		}
	}
}

// On the simulated node a container with cGPU off that asks for GPUs gets the simulated
// driver, as NVIDIA's toolkit would give it the real one, and nothing of cgpu.
func TestDisabledGetsOnlyTheSimulatedDriver(t *testing.T) {
	r := newRig(t)
	b := r.bundle([]string{"/bin/busybox", "true"}, "CGPU_DISABLE=true", "ALIYUN_COM_GPU_MEM_CONTAINER=6", "NVIDIA_VISIBLE_DEVICES=all")
	if code, stderr := r.runtime("create", "--bundle", b, id); code != 0 {
		t.Fatalf("create %d %s", code, stderr)
	}
	defer r.runtime("delete", "--force", id)
	spec, _ := oci.Load(b)
	var mounts []struct{ Destination string }
	json.Unmarshal(spec.Raw("mounts"), &mounts)
	var added []string
	for _, m := range mounts {
		if strings.Contains(m.Destination, "nvidia") || strings.Contains(m.Destination, "cuda") || strings.Contains(m.Destination, "cgpu") || m.Destination == "/etc/ld.so.preload" {
			added = append(added, m.Destination)
		}
	}
	want := []string{"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "/usr/bin/nvidia-smi", "/run/cgpu-sim/state"}
	if !slices.Equal(added, want) {
		t.Fatalf("mounts %v, want %v", added, want)
	}
	if len(r.state().GPU(0).Instances) != 0 {
		t.Fatal("registered")
	}
}

// A container with cGPU off that names a GPU the simulated node does not have is refused,
// as NVIDIA's toolkit refuses an unknown device, before anything is made.
func TestDisabledUnknownGPURefused(t *testing.T) {
	r := newRig(t)
	b := r.bundle([]string{"/bin/busybox", "true"}, "NVIDIA_VISIBLE_DEVICES=5")
	code, stderr := r.runtime("create", "--bundle", b, id)
	if code == 0 {
		r.runtime("delete", "--force", id)
		t.Fatal("created")
	}
	if want := "NVIDIA_VISIBLE_DEVICES=5: unknown GPU 5; the node has GPUs 0..1"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	if r.runcKnows(id) {
		t.Fatal("a refused create left a container")
	}
}

// On a node with neither GPU nor simulator a container that asks for nothing runs as with
// runc, and one that asks for memory is refused with the line that names the simulator.
func TestNoGPUNode(t *testing.T) {
	r := newRig(t)
	if _, err := os.Stat("/proc/cgpu_km"); err == nil {
		t.Skip("this machine has the cgpu_km module loaded")
	}
	if _, err := gpu.NewNVML().GPUs(); err == nil {
		t.Skip("NVML finds GPUs on this machine")
	}
	cfg, _ := json.Marshal(map[string]any{"next_runtime": "runc"})
	os.WriteFile(r.cfgPath, cfg, 0o644)
	b := r.bundle([]string{"/bin/busybox", "true"})
	if code, stderr := r.runtime("create", "--bundle", b, id); code != 0 {
		t.Fatalf("plain container on a GPU-less node: %d %s", code, stderr)
	}
	r.runtime("delete", "--force", id)
	b = r.bundle([]string{"/bin/busybox", "true"}, "ALIYUN_COM_GPU_MEM_CONTAINER=1")
	code, stderr := r.runtime("create", "--bundle", b, id)
	if code == 0 || !strings.Contains(stderr, "set CGPU_SIM=1 to use the simulated node") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("cGPU container on a GPU-less node: exit %d, stderr %q", code, stderr)
	}
	if r.runcKnows(id) {
		t.Fatal("refused container was created")
	}
}

// A node whose module is not loaded refuses a cGPU container with how to load it, and a
// node without libcgpu refuses it before registering anything.
func TestMissingPartsRefuse(t *testing.T) {
	r := newRig(t)
	raw, _ := os.ReadFile(r.cfgPath)
	write := func(key, value string) {
		var c map[string]any
		json.Unmarshal(raw, &c)
		c[key] = value
		b, _ := json.Marshal(c)
		os.WriteFile(r.cfgPath, b, 0o644)
	}
	b := r.bundle([]string{"/bin/busybox", "true"}, "ALIYUN_COM_GPU_MEM_CONTAINER=1")
	write("procfs_root", "/proc/cgpu_km_not_loaded")
	code, stderr := r.runtime("create", "--bundle", b, id)
	if code == 0 || !strings.Contains(stderr, "cgpu: the cgpu_km kernel module is not loaded (/proc/cgpu_km_not_loaded is missing): load it with `modprobe cgpu_km ngpus=2`; install.sh") {
		t.Fatalf("no module: exit %d, stderr %q", code, stderr)
	}
	write("hook", filepath.Join(r.dir, "nowhere.so"))
	code, stderr = r.runtime("create", "--bundle", b, id)
	if code == 0 || !strings.Contains(stderr, "libcgpu "+r.dir+"/nowhere.so: no such file or directory; install cgpu on this node with install.sh") {
		t.Fatalf("no libcgpu: exit %d, stderr %q", code, stderr)
	}
	if r.runcKnows(id) || len(r.state().GPU(0).Instances) != 0 {
		t.Fatal("a refused create left a container or an instance")
	}
	if _, err := os.Stat(filepath.Join(b, "cgpu-ld.so.preload")); !os.IsNotExist(err) {
		t.Fatal("a refused create wrote into the bundle")
	}
}

func TestOtherCommandsAreRuncs(t *testing.T) {
	r := newRig(t)
	var stderr strings.Builder
	cmd := exec.Command(bin, "--cgpu-config", r.cfgPath, "--version")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() != 0 {
		t.Fatalf("--version: %v %q", err, stderr.String())
	}
	// The test's build is a plain go build, which does not know its release.
	first, rest, _ := strings.Cut(string(out), "\n")
	if first != "cgpu-runtime version "+version.Unknown || !strings.HasPrefix(rest, "runc version ") {
		t.Fatalf("--version printed %q, want its own line, then runc's", out)
	}
	if code, _ := r.runtime("state", "nonexistent"); code == 0 {
		t.Fatal("state of an unknown container succeeded")
	}
}
