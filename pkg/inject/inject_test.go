package inject

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/inject/injecttest"
	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/oci"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/specmod"
)

// simNode is a simulated node of 2 GPUs of 1000 MiB with a directory tree, the real
// libcgpu and simulated driver, and a state file not made yet.
func simNode(t *testing.T) (node.Config, procfs.Tree) {
	t.Helper()
	hook, drv := injecttest.Built(t)
	dir := t.TempDir()
	cfg := node.Config{Sim: true, SimGPUs: 2, SimMemMiB: 1000, ProcfsRoot: filepath.Join(dir, "proc"),
		Hook: hook, SimDriver: drv, SimState: filepath.Join(dir, "state", "sim")}
	tree, err := procfs.Open(cfg.Root(), 2)
	if err != nil {
		t.Fatal(err)
	}
	// Whatever the machine running the tests has loaded: no stand-in driver.
	fakeStandIn(t, filepath.Join(dir, "no-driver"), nil)
	return cfg, tree
}

func TestCheckRefusesMissingParts(t *testing.T) {
	cfg, tree := simNode(t)
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		edit func(*node.Config)
		want string
	}{
		{"no libcgpu", func(c *node.Config) { c.Hook = filepath.Join(empty, "libcgpu.so") }, "libcgpu " + empty + "/libcgpu.so: no such file or directory; install cgpu on this node with install.sh"},
		{"libcgpu a directory", func(c *node.Config) { c.Hook = empty }, "libcgpu " + empty + ": not a regular file"},
		{"no simulated driver", func(c *node.Config) { c.SimDriver = empty }, "the simulated driver's " + empty + "/libcuda.so.1: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			tc.edit(&c)
			_, err := Check(c, tree)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Dir(c.SimState)); !os.IsNotExist(err) {
				t.Fatal("a refused check created the simulated state")
			}
		})
	}
}

func TestCheckMakesTheSimulatedState(t *testing.T) {
	cfg, tree := simNode(t)
	n, err := Check(cfg, tree)
	if err != nil {
		t.Fatal(err)
	}
	if n.device != nil {
		t.Fatal("a directory tree got /dev/cgpu")
	}
	smi := func() string {
		cmd := exec.Command(filepath.Join(cfg.SimDriver, "nvidia-smi"), "--query-gpu=index,memory.total", "--format=csv,noheader")
		cmd.Env = []string{"LD_LIBRARY_PATH=" + cfg.SimDriver, "CGPU_SIM_STATE=" + cfg.SimState}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("nvidia-smi: %v %s", err, out)
		}
		return string(out)
	}
	if got, want := smi(), "0, 1000 MiB\n1, 1000 MiB\n"; got != want {
		t.Fatalf("the node's simulated GPUs:\n%s\nwant\n%s", got, want)
	}
	before, _ := os.ReadFile(cfg.SimState)
	// Another node size in the config must not re-make a state the driver has set up.
	cfg.SimGPUs = 4
	if _, err := Check(cfg, tree); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(cfg.SimState); !reflect.DeepEqual(before, after) {
		t.Fatal("a second check changed the state file")
	}
}

// bundle makes a bundle whose rootfs has the given files (a value starting "->" is a
// symbolic link to the rest) and returns it with its spec.
func bundle(t *testing.T, files map[string]string) (string, *oci.Spec) {
	t.Helper()
	b := t.TempDir()
	for name, data := range files {
		p := filepath.Join(b, "rootfs", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		var err error
		if target, ok := strings.CutPrefix(data, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(data), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(b, "rootfs"), 0o755)
	s, err := oci.Parse([]byte(`{"process": {"env": []}, "root": {"path": "rootfs"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return b, s
}

func TestForKeepsTheImagesPreload(t *testing.T) {
	cfg, tree := simNode(t)
	n, err := Check(cfg, tree)
	if err != nil {
		t.Fatal(err)
	}
	b, s := bundle(t, map[string]string{
		"etc/ld.so.preload":   "/usr/lib/libjemalloc.so.2\n" + HookPath + "\n\n  \n/opt/trace.so",
		"usr/lib64/libc.so.6": "",
	})
	in, err := n.For(b, s, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(b, PreloadName))
	if want := HookPath + "\n/usr/lib/libjemalloc.so.2\n/opt/trace.so\n"; string(got) != want {
		t.Errorf("preload %q, want %q", got, want)
	}
	want := []specmod.Bind{
		{Source: cfg.Hook, Dest: HookPath},
		{Source: filepath.Join(b, PreloadName), Dest: PreloadPath},
		{Source: filepath.Join(cfg.SimDriver, "libcuda.so.1"), Dest: "/usr/lib64/libcuda.so.1"},
		{Source: filepath.Join(cfg.SimDriver, "libnvidia-ml.so.1"), Dest: "/usr/lib64/libnvidia-ml.so.1"},
		{Source: filepath.Join(cfg.SimDriver, "nvidia-smi"), Dest: "/usr/bin/nvidia-smi"},
		{Source: cfg.SimState, Dest: SimStatePath, Writable: true},
	}
	if !reflect.DeepEqual(in.Binds, want) || in.Devices != nil {
		t.Errorf("injection %+v\nwant binds %+v", in, want)
	}
}

// An image's links resolve inside the image: a preload linked to a node file is not read,
// and the driver goes to the multiarch directory when the image has no /usr/lib64 of its own.
func TestForStaysInTheImage(t *testing.T) {
	cfg, tree := simNode(t)
	cfg.Sim = false
	n, err := Check(cfg, tree)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "node-file")
	os.WriteFile(secret, []byte("/node/secret.so\n"), 0o644)
	b, s := bundle(t, map[string]string{"etc/ld.so.preload": "->" + secret, "usr/lib64": "->/usr/lib"})
	in, err := n.For(b, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(b, PreloadName)); string(got) != HookPath+"\n" {
		t.Errorf("preload %q read through the image's link", got)
	}
	if len(in.Binds) != 2 {
		t.Errorf("a node that is not simulated got %+v", in.Binds)
	}
	if d := libDir(filepath.Join(b, "rootfs")); d != "/usr/lib/x86_64-linux-gnu" {
		t.Errorf("library directory %s through a dangling link", d)
	}
}

func TestForNeedsARoot(t *testing.T) {
	cfg, tree := simNode(t)
	n, err := Check(cfg, tree)
	if err != nil {
		t.Fatal(err)
	}
	b := t.TempDir()
	s, _ := oci.Parse([]byte(`{"process": {"env": []}}`))
	if _, err := n.For(b, s, nil); err == nil || !strings.Contains(err.Error(), "root.path") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(b, PreloadName)); !os.IsNotExist(err) {
		t.Fatal("a refused bundle got a preload file")
	}
}

func TestPlainGetsTheDriverOnly(t *testing.T) {
	cfg, _ := simNode(t)
	n, err := Plain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, s := bundle(t, nil)
	in, err := n.For(b, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Binds) != 4 || in.Binds[0].Dest != "/usr/lib/x86_64-linux-gnu/libcuda.so.1" || in.Devices != nil {
		t.Fatalf("%+v", in)
	}
	if _, err := os.Stat(filepath.Join(b, PreloadName)); !os.IsNotExist(err) {
		t.Fatal("a container with cGPU off got a preload file")
	}
	cfg.SimDriver = t.TempDir()
	if _, err := Plain(cfg); err == nil {
		t.Fatal("a missing simulated driver was accepted")
	}
}

func TestWantsDriver(t *testing.T) {
	for env, want := range map[string]bool{"": false, "NVIDIA_VISIBLE_DEVICES=": false, "NVIDIA_VISIBLE_DEVICES=void": false,
		"NVIDIA_VISIBLE_DEVICES=none": true, "NVIDIA_VISIBLE_DEVICES=all": true, "NVIDIA_VISIBLE_DEVICES=0,1": true} {
		if got := WantsDriver(alloc.EnvMap([]string{env})); got != want {
			t.Errorf("%q: %v", env, got)
		}
	}
}
