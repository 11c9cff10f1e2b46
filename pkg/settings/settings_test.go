package settings

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

const (
	idA = "aaaaaaaaaaaa0000000000000000000000000000000000000000000000000000"
	idB = "bbbbbbbbbbbb0000000000000000000000000000000000000000000000000000"
	idC = "cccccccccccc0000000000000000000000000000000000000000000000000000"
)

var (
	web = Container{ID: idA, Name: "web"}
	db  = Container{ID: idB, Name: "db"}
	gi6 = alloc.MemBytes(6, 15, 15109*gpu.MiB) // what ALIYUN_COM_GPU_MEM_CONTAINER=6 gives a T4
)

func nodeGPUs() []gpu.GPU {
	gpus, _ := gpu.Sim{Count: 2, MemMiB: 15109}.GPUs()
	return gpus
}

func tBool(b bool) *bool { return &b }

// register opens a simulated tree of two GPUs at root with web (6 GiB on GPU 0 with
// webWeight, 1 GiB on GPU 1) and db (2 GiB on GPU 0) in it.
func register(t *testing.T, root string, webWeight int) procfs.Tree {
	tr, err := procfs.Open(root, 2)
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Update(func(tx procfs.Tx) error {
		return errors.Join(
			tx.Add(procfs.AddRequest{GPU: 0, ID: idA, Memsize: gi6, Weight: webWeight}),
			tx.Add(procfs.AddRequest{GPU: 0, ID: idB, Memsize: 2 << 30, Weight: 1}),
			tx.Add(procfs.AddRequest{GPU: 1, ID: idA, Memsize: 1 << 30, Weight: 1}))
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// node is a simulated tree of two T4s: web (6 GiB, weight 2) and db (2 GiB) on GPU 0,
// web (1 GiB) on GPU 1; db's process holds 1 GiB.
func node(t *testing.T) (procfs.Tree, []gpu.GPU) {
	gpus := nodeGPUs()
	tr := register(t, filepath.Join(t.TempDir(), "proc"), 2)
	mi := filepath.Join(tr.Root(), "0", idB[:12], "meminfo")
	if err := os.WriteFile(mi, []byte("Free: 1073741824\nPID: 42 Mem: 1073741824\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tr, gpus
}

// files is every file of the tree and its content.
func files(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func value(t *testing.T, root string, rel string) string {
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func whats(c []Change) []string {
	out := make([]string, len(c))
	for i, x := range c {
		out[i] = x.What
	}
	return out
}

func TestSetEveryField(t *testing.T) {
	tr, gpus := node(t)
	root := tr.Root()
	for _, tc := range []struct {
		r    Request
		want map[string]string
	}{
		{Request{GPUs: "0", Policy: "weight"}, map[string]string{"0/policy": "2", "1/policy": "1"}},
		{Request{GPUs: "all", Policy: "4"}, map[string]string{"0/policy": "4", "1/policy": "4"}},
		{Request{GPUs: "1", MaxInst: "25"}, map[string]string{"1/max_inst": "25", "1/free_weight": "24", "0/max_inst": "16"}},
		{Request{GPUs: "0,1", PrioRatio: "99"}, map[string]string{"0/prio_ratio": "99", "1/prio_ratio": "99"}},
		{Request{DefaultMemsize: "6"}, map[string]string{"default_memsize": "6337173913"}},
		{Request{DefaultMemsize: "0"}, map[string]string{"default_memsize": "0"}},
		{Request{Containers: []Container{web}, Weight: "5"},
			map[string]string{"0/aaaaaaaaaaaa/weight": "5", "1/aaaaaaaaaaaa/weight": "5", "0/free_weight": "10"}},
		{Request{Containers: []Container{web}, GPUs: "1", Weight: "0"},
			map[string]string{"0/aaaaaaaaaaaa/weight": "5", "1/aaaaaaaaaaaa/weight": "0", "1/free_weight": "25"}},
		{Request{Containers: []Container{db}, Memsize: "6"}, map[string]string{"0/bbbbbbbbbbbb/memsize": "6337173913"}},
		{Request{Containers: []Container{db, web}, HighPrio: tBool(true)},
			map[string]string{"0/bbbbbbbbbbbb/highprio": "1", "0/aaaaaaaaaaaa/highprio": "1", "1/aaaaaaaaaaaa/highprio": "1"}},
		{Request{Containers: []Container{web}, HighPrio: tBool(false)},
			map[string]string{"0/bbbbbbbbbbbb/highprio": "1", "0/aaaaaaaaaaaa/highprio": "0"}},
	} {
		if _, err := Set(tr, gpus, tc.r); err != nil {
			t.Fatalf("%+v: %v", tc.r, err)
		}
		for rel, want := range tc.want {
			if got := value(t, root, rel); got != want {
				t.Errorf("%+v: %s = %s, want %s", tc.r, rel, got, want)
			}
		}
	}
}

// Each refusal names the value and the rule, and leaves every file as it was.
func TestSetRefusals(t *testing.T) {
	tr, gpus := node(t)
	before := files(t, tr.Root())
	t4 := "GPU 0 (Tesla T4 GPU-c6a1d000-0000-4000-8000-000000000000): "
	for _, tc := range []struct {
		r    Request
		want string
	}{
		{Request{}, "nothing to change"},
		{Request{GPUs: "0"}, "nothing to change"},
		{Request{Policy: "1"}, "--policy, --max-inst and --prio-ratio need --gpu N|LIST|all"},
		{Request{Weight: "1"}, "--weight, --memsize and --high-prio need a CONTAINER"},
		{Request{Containers: []Container{web}}, "a CONTAINER is changed with --weight, --memsize or --high-prio"},
		{Request{RemoveOrphans: []string{"cccccccccccc"}, Containers: []Container{web}, Weight: "1"}, "--remove-orphan goes alone: removing an instance is not undone with other changes"},
		{Request{GPUs: "2", Policy: "1"}, "--gpu=2: unknown GPU 2; the cgpu tree has GPUs 0..1"},
		{Request{GPUs: "0,0", Policy: "1"}, "--gpu=0,0: GPU 0 is listed twice"},
		{Request{GPUs: "-1", Policy: "1"}, `--gpu="-1": item "-1" is not a GPU index; want N, a list such as 0,2, or all`},
		{Request{GPUs: "0", Policy: "6"}, `--policy="6": not a policy; want 0..5 or one of fair-share, preemptive, weight, fixed, soft, native`},
		{Request{GPUs: "0", Policy: "weight-based"}, `--policy="weight-based": not a policy; want 0..5 or one of fair-share, preemptive, weight, fixed, soft, native`},
		{Request{GPUs: "0", MaxInst: "0"}, "--max-inst=0: outside 1..25"},
		{Request{GPUs: "0", MaxInst: "26"}, "--max-inst=26: outside 1..25"},
		{Request{GPUs: "0", MaxInst: "+3"}, `--max-inst="+3": not a whole number (digits 0-9 only)`},
		{Request{GPUs: "0", MaxInst: "1"}, t4 + "--max-inst=1: below the GPU's 2 instances"},
		{Request{GPUs: "0", MaxInst: "2"}, t4 + "--max-inst=2: the GPU's weights would sum to 3, above max_inst (2)"},
		{Request{GPUs: "0", PrioRatio: "19"}, "--prio-ratio=19: outside 20..99"},
		{Request{GPUs: "0", PrioRatio: "100"}, "--prio-ratio=100: outside 20..99"},
		{Request{GPUs: "0", PrioRatio: "1.5"}, `--prio-ratio="1.5": not a whole number (digits 0-9 only)`},
		{Request{DefaultMemsize: "16"}, t4 + "--default-memsize=16: above the GPU's size (15 GiB, as nvidia-smi shows 15109 MiB)"},
		{Request{DefaultMemsize: "-1"}, `--default-memsize="-1": not a whole number (digits 0-9 only)`},
		{Request{Containers: []Container{web}, Weight: "17"}, t4 + "--weight=17 for web (aaaaaaaaaaaa): outside 0..max_inst (16)"},
		{Request{Containers: []Container{web}, Weight: "16"}, t4 + "--weight=16: the GPU's weights would sum to 17, above max_inst (16)"},
		{Request{Containers: []Container{web}, GPUs: "0", MaxInst: "4", Weight: "4"}, t4 + "--weight=4 with --max-inst=4: the GPU's weights would sum to 5, above max_inst (4)"},
		{Request{Containers: []Container{web}, Weight: "abc"}, `--weight="abc": not a whole number (digits 0-9 only)`},
		{Request{Containers: []Container{web}, Memsize: "0"}, `--memsize="0": must be at least 1`},
		{Request{Containers: []Container{web}, Memsize: "16"}, t4 + "--memsize=16 for web (aaaaaaaaaaaa): above the GPU's size (15 GiB, as nvidia-smi shows 15109 MiB)"},
		{Request{Containers: []Container{web}, Memsize: "14"}, t4 + "--memsize=14 for web (aaaaaaaaaaaa) needs 14786739131 bytes (13.77 GiB): only 13695451136 bytes (12.75 GiB) left after 1 instance(s); memory may not be overbooked"},
		// Both new sizes count: 8 + 8 of 15 GiB do not fit, though each fits beside the other's old size.
		{Request{Containers: []Container{db, web}, GPUs: "0", Memsize: "8"}, t4 + "--memsize=8 for db (bbbbbbbbbbbb) needs 8449565218 bytes (7.87 GiB): only 7393369566 bytes (6.89 GiB) left after 1 instance(s); memory may not be overbooked"},
		{Request{Containers: []Container{db}, Memsize: "1"}, "below the 1073741824 bytes its processes hold now"},
		{Request{Containers: []Container{{ID: idC, Name: "plain"}}, Weight: "1"}, "container plain (cccccccccccc) has no cgpu instance on any GPU (it runs without cGPU, or is not running)"},
		{Request{Containers: []Container{db}, GPUs: "1", Weight: "1"}, "container db (bbbbbbbbbbbb) has no cgpu instance on --gpu 1"},
		{Request{RemoveOrphans: []string{"cccccccccccc"}}, "--remove-orphan=cccccccccccc: the tree has no instance of that name"},
		// A later value's refusal stops the earlier ones too.
		{Request{GPUs: "all", Policy: "2", PrioRatio: "10"}, "--prio-ratio=10: outside 20..99"},
		{Request{DefaultMemsize: "1", Containers: []Container{web}, Weight: "99"}, "--weight=99 for web (aaaaaaaaaaaa): outside 0..max_inst (16)"},
	} {
		changes, err := Set(tr, gpus, tc.r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v (changes %q), want %q", tc.r, err, whats(changes), tc.want)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: the message is more than one line: %q", tc.r, err)
		}
		if after := files(t, tr.Root()); !reflect.DeepEqual(after, before) {
			t.Fatalf("%+v changed the tree", tc.r)
		}
	}
}
