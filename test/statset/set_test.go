package statset

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/alloc"
)

// value reads one file of the tree.
func value(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fx.tr.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestSetEveryField(t *testing.T) {
	fixture(t)
	web, db := fx.web.ID[:12], fx.db.ID[:12]
	for _, tc := range []struct {
		args []string
		want map[string]string
	}{
		{[]string{"--gpu", "0", "--policy", "weight"}, map[string]string{"0/policy": "2", "1/policy": "1"}},
		{[]string{"--gpu", "all", "--policy", "5"}, map[string]string{"0/policy": "5", "1/policy": "5"}},
		{[]string{"--gpu", "1", "--max-inst", "25"}, map[string]string{"1/max_inst": "25", "1/free_weight": "22", "0/max_inst": "16"}},
		{[]string{"--gpu", "0,1", "--prio-ratio", "99"}, map[string]string{"0/prio_ratio": "99", "1/prio_ratio": "99"}},
		{[]string{"--gpu", "0", "--prio-ratio", "20"}, map[string]string{"0/prio_ratio": "20", "1/prio_ratio": "99"}},
		{[]string{"--default-memsize", "6"}, map[string]string{"default_memsize": strconv.FormatUint(alloc.MemBytes(6, 15, 15109<<20), 10)}},
		{[]string{"--default-memsize", "0"}, map[string]string{"default_memsize": "0"}},
		{[]string{"web", "--weight", "14"}, map[string]string{"0/" + web + "/weight": "14", "0/free_weight": "0"}},
		{[]string{"web", "--weight", "0"}, map[string]string{"0/" + web + "/weight": "0", "0/free_weight": "14"}},
		{[]string{fx.db.ID[:5], "--gpu", "1", "--weight", "3"}, map[string]string{"1/" + db + "/weight": "3", "0/" + db + "/weight": "2"}},
		{[]string{"web", "--memsize", "11"}, map[string]string{"0/" + web + "/memsize": strconv.FormatUint(alloc.MemBytes(11, 15, 15109<<20), 10)}},
		{[]string{"web", "--memsize", "1"}, map[string]string{"0/" + web + "/memsize": strconv.FormatUint(alloc.MemBytes(1, 15, 15109<<20), 10)}},
		{[]string{"db", "--high-prio=false"}, map[string]string{"0/" + db + "/highprio": "0", "1/" + db + "/highprio": "0"}},
		{[]string{"db", "web", "--high-prio"}, map[string]string{"0/" + db + "/highprio": "1", "0/" + web + "/highprio": "1"}},
	} {
		must(t, append([]string{"cgpu", "set"}, tc.args...)...)
		for rel, want := range tc.want {
			if got := value(t, rel); got != want {
				t.Errorf("set %v: %s = %s, want %s", tc.args, rel, got, want)
			}
		}
	}
	// What set prints is what it changed, one line each; a value already so is no change.
	if out := must(t, "cgpu", "set", "--gpu", "1", "--policy", "fair-share", "--prio-ratio", "50"); out != "GPU 1: policy 5 (native) -> 0 (fair-share)\nGPU 1: prio_ratio 99 -> 50\n" {
		t.Errorf("set printed %q", out)
	}
	if out := must(t, "cgpu", "set", "--gpu", "1", "--policy", "0"); out != "nothing to change: every value is already so\n" {
		t.Errorf("set of the same value printed %q", out)
	}
}

// Every rejected edge: status 1, one line naming the value and the rule, the tree as it was.
func TestSetRefusals(t *testing.T) {
	fixture(t)
	T4 := "GPU 0 (Tesla T4 GPU-c6a1d000-0000-4000-8000-000000000000): "
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"nothing to change", nil},
		{"--policy, --max-inst and --prio-ratio need --gpu N|LIST|all", []string{"--policy", "1"}},
		{"--weight, --memsize and --high-prio need a CONTAINER", []string{"--weight", "1"}},
		{"a CONTAINER is changed with --weight, --memsize or --high-prio", []string{"web"}},
		{"No such container: nosuch", []string{"nosuch", "--weight", "1"}},
		{"container plain (" + fx.pln.ID[:12] + ") has no cgpu instance on any GPU", []string{"plain", "--weight", "1"}},
		{"container web (" + fx.web.ID[:12] + ") has no cgpu instance on --gpu 1", []string{"web", "--gpu", "1", "--weight", "1"}},
		{"--gpu=2: unknown GPU 2; the cgpu tree has GPUs 0..1", []string{"--gpu", "2", "--policy", "1"}},
		{`--gpu="x": item "x" is not a GPU index`, []string{"--gpu", "x", "--policy", "1"}},
		{`--policy="6": not a policy; want 0..5 or one of fair-share, preemptive, weight, fixed, soft, native`, []string{"--gpu", "0", "--policy", "6"}},
		{`--policy="Weight": not a policy`, []string{"--gpu", "0", "--policy", "Weight"}},
		{"--max-inst=0: outside 1..25", []string{"--gpu", "0", "--max-inst", "0"}},
		{"--max-inst=26: outside 1..25", []string{"--gpu", "0", "--max-inst", "26"}},
		{T4 + "--max-inst=1: below the GPU's 2 instances", []string{"--gpu", "0", "--max-inst", "1"}},
		{T4 + "--max-inst=2: the GPU's weights would sum to 3, above max_inst (2)", []string{"--gpu", "0", "--max-inst", "2"}},
		{"--prio-ratio=19: outside 20..99", []string{"--gpu", "0", "--prio-ratio", "19"}},
		{"--prio-ratio=100: outside 20..99", []string{"--gpu", "0", "--prio-ratio", "100"}},
		{`--prio-ratio="3x": not a whole number`, []string{"--gpu", "0", "--prio-ratio", "3x"}},
		{T4 + "--default-memsize=16: above the GPU's size (15 GiB, as nvidia-smi shows 15109 MiB)", []string{"--default-memsize", "16"}},
		{`--default-memsize="-1": not a whole number`, []string{"--default-memsize=-1"}},
		{`--weight="-1": not a whole number`, []string{"web", "--weight=-1"}},
		{T4 + "--weight=17 for web (" + fx.web.ID[:12] + "): outside 0..max_inst (16)", []string{"web", "--weight", "17"}},
		{T4 + "--weight=15: the GPU's weights would sum to 17, above max_inst (16)", []string{"web", "--weight", "15"}},
		{`--memsize="0": must be at least 1`, []string{"web", "--memsize", "0"}},
		{T4 + "--memsize=16 for web (" + fx.web.ID[:12] + "): above the GPU's size (15 GiB", []string{"web", "--memsize", "16"}},
		{"memory may not be overbooked", []string{"web", "--memsize", "13"}},
		{"--memsize=1 for db (" + fx.db.ID[:12] + "): below the 1610612736 bytes its processes hold now", []string{"db", "--gpu", "1", "--memsize", "1"}},
		{"--remove-orphan=" + fx.web.ID[:12] + ": container web has this ID; it is no orphan", []string{"--remove-orphan", fx.web.ID[:12]}},
		{"--remove-orphan=0bad: not an instance name", []string{"--remove-orphan", "0bad"}},
		{"--remove-orphan goes alone", []string{"--remove-orphan", orphan, "--gpu", "0", "--policy", "1"}},
	} {
		refused(t, fx.tr, tc.want, append([]string{"cgpu", "set"}, tc.args...)...)
	}
	// A value the flag parser refuses is docker's usage error (125), also changing nothing.
	before := dump(t, fx.tr)
	if r := docker("cgpu", "set", "db", "--high-prio=maybe"); r.code != 125 || !strings.Contains(r.err, `invalid argument "maybe" for "--high-prio"`) {
		t.Errorf("--high-prio=maybe: exit %d %q", r.code, r.err)
	}
	if dump(t, fx.tr) != before {
		t.Error("--high-prio=maybe changed the tree")
	}
}

// Several changes apply all or nothing: one value refused, none written.
func TestSetAllOrNothing(t *testing.T) {
	fixture(t)
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"--prio-ratio=10: outside 20..99", []string{"--gpu", "all", "--policy", "weight", "--max-inst", "20", "--prio-ratio", "10"}},
		{"--weight=9: the GPU's weights would sum to 18", []string{"web", "db", "--weight", "9", "--high-prio=false"}},
		{"memory may not be overbooked", []string{"web", "db", "--gpu", "0", "--memsize", "8", "--weight", "3"}},
		{"--weight=20 with --max-inst=20: the GPU's weights would sum to 40", []string{"web", "db", "--gpu", "0", "--max-inst", "20", "--weight", "20", "--default-memsize", "1"}},
	} {
		refused(t, fx.tr, tc.want, append([]string{"cgpu", "set"}, tc.args...)...)
	}
}

// Orders that a naive apply would have the kernel refuse: each goes through whole.
func TestSetOrder(t *testing.T) {
	fixture(t)
	web, db := fx.web.ID[:12], fx.db.ID[:12]
	// db takes 14 of GPU 0's 16; then web and db are both set to 8: db must come down
	// before web goes up (web first would sum to 22).
	must(t, "cgpu", "set", "db", "--gpu", "0", "--weight", "14")
	out := must(t, "cgpu", "set", "web", "db", "--gpu", "0", "--weight", "8")
	if want := "db (" + db + ") on GPU 0: weight 14 -> 8\nweb (" + web + ") on GPU 0: weight 1 -> 8\n"; out != want {
		t.Errorf("order:\n%s\nwant\n%s", out, want)
	}
	if value(t, "0/"+web+"/weight") != "8" || value(t, "0/"+db+"/weight") != "8" || value(t, "0/free_weight") != "0" {
		t.Error("weights not 8 and 8")
	}
	// max_inst up before the weight that needs it, and down after the weights that free it.
	must(t, "cgpu", "set", "web", "db", "--gpu", "0", "--weight", "12", "--max-inst", "25")
	if value(t, "0/max_inst") != "25" || value(t, "0/free_weight") != "1" {
		t.Error("raise: max_inst or weights not as asked")
	}
	out = must(t, "cgpu", "set", "web", "db", "--gpu", "0", "--weight", "1", "--max-inst", "2")
	if !strings.HasSuffix(out, "GPU 0: max_inst 25 -> 2\n") || value(t, "0/free_weight") != "0" {
		t.Errorf("lower: %q free_weight %s", out, value(t, "0/free_weight"))
	}
}

func TestRemoveOrphan(t *testing.T) {
	fixture(t)
	t.Cleanup(func() {
		if err := addOrphan(); err != nil {
			t.Error(err)
		}
	})
	if out := must(t, "cgpu", "set", "--remove-orphan", orphan); out != "orphan "+orphan+" on GPU 1: removed\n" {
		t.Errorf("printed %q", out)
	}
	st, err := fx.tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if st.GPU(1).Instance(orphan) != nil || st.GPU(1).FreeWeight != 14 {
		t.Errorf("after removal: %+v", st.GPU(1))
	}
	if strings.Contains(must(t, "cgpu", "stat"), "orphan") {
		t.Error("stat still shows an orphan")
	}
	refused(t, fx.tr, "--remove-orphan="+orphan+": the tree has no instance of that name", "cgpu", "set", "--remove-orphan", orphan)
}

// Without root: one line saying so, nothing changed. The plugin runs as nobody, straight
// (the docker client's own config is root's).
func TestSetNeedsRoot(t *testing.T) {
	fixture(t)
	before := dump(t, fx.tr)
	plugin := filepath.Join(os.Getenv("DOCKER_CONFIG"), "cli-plugins", "docker-cgpu")
	cmd := exec.Command(plugin, "cgpu", "set", "--gpu", "0", "--policy", "2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	line := strings.TrimSpace(string(out))
	want := "needs root"
	if fx.tr.Kernel() {
		want = "cgpu: changing /proc/cgpu_km needs root; run docker cgpu set as root (sudo)"
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(line, want) || strings.Contains(line, "\n") {
		t.Errorf("as nobody: %v, %q; want status 1 and one line with %q", err, line, want)
	}
	if dump(t, fx.tr) != before {
		t.Error("the tree changed")
	}
}
