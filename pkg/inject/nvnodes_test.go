package inject

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/specmod"
)

// devFile is one device file of a fake node: its type and numbers.
type devFile struct {
	char         bool
	major, minor int64
}

// fakeStandIn points the stand-in driver at proc and the node's device files at nodes
// (a path missing from it does not exist) for the rest of the test; the kernel's list of
// regions has nvidia-uvm, of the major its node in nodes has, when nodes has that node.
func fakeStandIn(t *testing.T, proc string, nodes map[string]devFile) {
	t.Helper()
	old := standIn
	t.Cleanup(func() { standIn = old })
	standIn.proc = proc
	regions := "Character devices:\n  1 mem\n195 nvidia-frontend\n"
	if u, ok := nodes[UVM]; ok {
		regions += fmt.Sprintf("%3d nvidia-uvm\n", u.major)
	}
	regions += "\nBlock devices:\n  8 sd\n254 nvidia-uvm\n"
	standIn.devices = filepath.Join(t.TempDir(), "devices")
	if err := os.WriteFile(standIn.devices, []byte(regions), 0o644); err != nil {
		t.Fatal(err)
	}
	standIn.stat = func(path string) (bool, int64, int64, error) {
		n, ok := nodes[path]
		if !ok {
			return false, 0, 0, &os.PathError{Op: "stat", Path: path, Err: os.ErrNotExist}
		}
		return n.char, n.major, n.minor, nil
	}
}

// loadedStandIn makes a /proc/driver/nvidia-sim of gpus GPUs.
func loadedStandIn(t *testing.T, gpus int) string {
	t.Helper()
	proc := filepath.Join(t.TempDir(), "nvidia-sim")
	for i := range gpus {
		if err := os.MkdirAll(filepath.Join(proc, "gpus", fmt.Sprint(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return proc
}

// twoGPUs is a node whose stand-in driver made its nodes as NVIDIA's driver numbers them.
var twoGPUs = map[string]devFile{
	"/dev/nvidiactl": {true, 195, 255},
	"/dev/nvidia0":   {true, 195, 0},
	"/dev/nvidia1":   {true, 195, 1},
}

func dev(path string, minor int64) specmod.Device {
	return specmod.Device{Path: path, Major: 195, Minor: minor}
}

func TestStandInNodesOfTheVisibleGPUs(t *testing.T) {
	fakeStandIn(t, loadedStandIn(t, 2), twoGPUs)
	n, err := readStandIn()
	if err != nil {
		t.Fatal(err)
	}
	ctl := dev("/dev/nvidiactl", 255)
	for _, tc := range []struct {
		gpus []int
		want []specmod.Device
	}{
		{nil, []specmod.Device{ctl}}, // NVIDIA_VISIBLE_DEVICES=none: the driver, no GPU
		{[]int{0}, []specmod.Device{ctl, dev("/dev/nvidia0", 0)}},
		{[]int{1}, []specmod.Device{ctl, dev("/dev/nvidia1", 1)}},
		{[]int{1, 0}, []specmod.Device{ctl, dev("/dev/nvidia1", 1), dev("/dev/nvidia0", 0)}},
	} {
		got, err := n.devices(tc.gpus)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GPUs %v: %v %v, want %v", tc.gpus, got, err, tc.want)
		}
	}
	if _, err := n.devices([]int{2}); err == nil || !strings.Contains(err.Error(), "GPU 2: the stand-in NVIDIA driver serves 2 GPU(s)") {
		t.Errorf("a GPU the driver does not serve: %v", err)
	}
}

// The numbers come from the node's files, not from what NVIDIA's driver would use.
func TestStandInNumbersAreTheNodes(t *testing.T) {
	fakeStandIn(t, loadedStandIn(t, 1), map[string]devFile{"/dev/nvidiactl": {true, 195, 254}, "/dev/nvidia0": {true, 195, 7}})
	n, err := readStandIn()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := n.devices([]int{0})
	if want := []specmod.Device{dev("/dev/nvidiactl", 254), dev("/dev/nvidia0", 7)}; !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

// nvidia-uvm's nodes come last, with the major the kernel gave the region (not a block
// region of that name); a driver without the region gives none.
func TestStandInUVMNodes(t *testing.T) {
	nodes := map[string]devFile{UVM: {true, 236, 0}, UVMTools: {true, 236, 1}}
	for k, v := range twoGPUs {
		nodes[k] = v
	}
	fakeStandIn(t, loadedStandIn(t, 2), nodes)
	n, err := readStandIn()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := n.devices([]int{1})
	uvm := []specmod.Device{{Path: UVM, Major: 236, Minor: 0}, {Path: UVMTools, Major: 236, Minor: 1}}
	if want := append([]specmod.Device{dev("/dev/nvidiactl", 255), dev("/dev/nvidia1", 1)}, uvm...); !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	for _, tc := range []struct {
		name string
		node devFile
		want string
	}{
		{"another major", devFile{true, 237, 1}, "/dev/nvidia-uvm-tools is not a character device of major 236"},
		{"a regular file", devFile{false, 0, 0}, "/dev/nvidia-uvm-tools is not a character device of major 236"},
	} {
		nodes[UVMTools] = tc.node
		fakeStandIn(t, loadedStandIn(t, 2), nodes)
		if _, err := readStandIn(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	delete(nodes, UVMTools)
	fakeStandIn(t, loadedStandIn(t, 2), nodes)
	if _, err := readStandIn(); err == nil || !strings.Contains(err.Error(), "but /dev/nvidia-uvm-tools: file does not exist") {
		t.Errorf("no tools node: %v", err)
	}
	// The region gone (the nodes left behind are not the driver's): none given.
	fakeStandIn(t, loadedStandIn(t, 2), twoGPUs)
	if n, err = readStandIn(); err != nil || len(n.uvm) != 0 {
		t.Errorf("without the region: %v %v", n, err)
	}
}

func TestNoStandInNoNodes(t *testing.T) {
	fakeStandIn(t, filepath.Join(t.TempDir(), "nvidia-sim"), twoGPUs)
	if n, err := readStandIn(); n != nil || err != nil {
		t.Fatalf("%v %v on a node without the driver", n, err)
	}
}

func TestStandInBrokenNodes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes map[string]devFile
		want  string
	}{
		{"no control node", map[string]devFile{"/dev/nvidia0": {true, 195, 0}, "/dev/nvidia1": {true, 195, 1}},
			"but /dev/nvidiactl: file does not exist: reload it"},
		{"no node of GPU 1", map[string]devFile{"/dev/nvidiactl": {true, 195, 255}, "/dev/nvidia0": {true, 195, 0}},
			"but /dev/nvidia1: file does not exist"},
		{"a regular file", map[string]devFile{"/dev/nvidiactl": {true, 195, 255}, "/dev/nvidia0": {false, 0, 0}, "/dev/nvidia1": {true, 195, 1}},
			"/dev/nvidia0 is not a character device of major 195"},
		{"another major", map[string]devFile{"/dev/nvidiactl": {true, 195, 255}, "/dev/nvidia0": {true, 195, 0}, "/dev/nvidia1": {true, 10, 1}},
			"/dev/nvidia1 is not a character device of major 195"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeStandIn(t, loadedStandIn(t, 2), tc.nodes)
			if _, err := readStandIn(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// A cGPU container and a plain one get the nodes of their GPUs; a broken node refuses
// the container before anything is made (the simulated state included).
func TestCheckAndPlainGiveTheNodes(t *testing.T) {
	cfg, tree := simNode(t)
	fakeStandIn(t, loadedStandIn(t, 2), twoGPUs)
	n, err := Check(cfg, tree)
	if err != nil {
		t.Fatal(err)
	}
	b, s := bundle(t, nil)
	in, err := n.For(b, s, []int{1})
	if want := []specmod.Device{dev("/dev/nvidiactl", 255), dev("/dev/nvidia1", 1)}; err != nil || !reflect.DeepEqual(in.Devices, want) {
		t.Fatalf("cGPU container on GPU 1: %v %v", in.Devices, err)
	}
	// The driver holds the node's state: no file of it is made or given.
	for _, b := range in.Binds {
		if b.Dest == SimStatePath || b.Source == cfg.SimState {
			t.Fatalf("the simulated state is bound with the stand-in loaded: %+v", b)
		}
	}
	if _, err := os.Stat(filepath.Dir(cfg.SimState)); !os.IsNotExist(err) {
		t.Fatal("the simulated state was made with the stand-in loaded")
	}
	p, err := Plain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if in, err = p.For(b, s, []int{0, 1}); err != nil || len(in.Devices) != 3 {
		t.Fatalf("plain container on both GPUs: %v %v", in.Devices, err)
	}

	cfg, tree = simNode(t)
	fakeStandIn(t, loadedStandIn(t, 2), map[string]devFile{"/dev/nvidiactl": {true, 195, 255}})
	if _, err := Check(cfg, tree); err == nil || !strings.Contains(err.Error(), "/dev/nvidia0") {
		t.Fatalf("a missing node: %v", err)
	}
	if _, err := Plain(cfg); err == nil {
		t.Fatal("a missing node: the plain container was accepted")
	}
	if _, err := os.Stat(filepath.Dir(cfg.SimState)); !os.IsNotExist(err) {
		t.Fatal("a refused check created the simulated state")
	}
}
