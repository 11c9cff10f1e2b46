// Package e2e runs docker cgpu run and the cgpu runtime through a real dockerd on the
// simulated node. test/suites/40-docker-e2e.sh starts the daemon (test/lib/dockerd.sh)
// and sets the variables below; without CGPU_E2E=1 every test here skips.
//
//	DOCKER_HOST, DOCKER_CONFIG  the private daemon, and the config dir holding the plugin
//	CGPU_RUNTIME_CONFIG         the cgpu config the daemon's runtime uses (sim, tree root)
//	CGPU_E2E_IMAGE              a local busybox image
//	CGPU_E2E_MEMLOCK            the --ulimit memlock value this machine allows (-1 when it can)
//	DOCKER_BIN                  the docker client (default docker)
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

func setup(t *testing.T) {
	t.Helper()
	if os.Getenv("CGPU_E2E") != "1" {
		t.Skip("needs the private dockerd of test/suites/40-docker-e2e.sh (CGPU_E2E=1)")
	}
	t.Cleanup(func() { removeAll(t) })
}

type result struct {
	out, err string
	code     int
}

func dockerEnv(env []string, args ...string) result {
	bin := os.Getenv("DOCKER_BIN")
	if bin == "" {
		bin = "docker"
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out: out.String(), err: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code, r.err = -1, err.Error()
	}
	return r
}

func docker(args ...string) result { return dockerEnv(os.Environ(), args...) }

func mustDocker(t *testing.T, args ...string) string {
	t.Helper()
	r := docker(args...)
	if r.code != 0 {
		t.Fatalf("docker %s: exit %d: %s", strings.Join(args, " "), r.code, r.err)
	}
	return strings.TrimSpace(r.out)
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func image() string { return os.Getenv("CGPU_E2E_IMAGE") }

func removeAll(t *testing.T) {
	if ids := strings.Fields(docker("ps", "-aq").out); len(ids) > 0 {
		docker(append([]string{"rm", "-f"}, ids...)...)
	}
}

func containerCount(t *testing.T) int {
	t.Helper()
	return len(strings.Fields(mustDocker(t, "ps", "-aq")))
}

func tree(t *testing.T) *procfs.State {
	t.Helper()
	cfg, err := node.Load("", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := n.Tree.Read()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func instances(st *procfs.State) int {
	n := 0
	for _, g := range st.GPUs {
		n += len(g.Instances)
	}
	return n
}

type inspected struct {
	ID     string `json:"Id"`
	Config struct {
		Env    []string
		Labels map[string]string
	}
	HostConfig struct {
		Runtime string
		ShmSize int64
		Binds   []string
		Ulimits []struct {
			Name       string
			Soft, Hard int64
		}
	}
	State struct{ Running bool }
}

func inspect(t *testing.T, name string) inspected {
	t.Helper()
	var v []inspected
	if err := json.Unmarshal([]byte(mustDocker(t, "inspect", name)), &v); err != nil {
		t.Fatal(err)
	}
	return v[0]
}

// The figures SPEC's example gives rise to on a 15109 MiB T4: 6 and 8 of 15 GiB.
const (
	bytes6 = 6337173913
	bytes8 = 8449565218
)

func TestPluginIsListed(t *testing.T) {
	setup(t)
	if help := mustDocker(t, "--help"); !strings.Contains(help, "cgpu*") {
		t.Errorf("docker --help does not list the plugin:\n%s", help)
	}
	if info := mustDocker(t, "info"); !strings.Contains(info, "cgpu: Share GPUs between containers with hard memory limits (cgpu project, ") || !strings.Contains(info, "Runtimes:") || !strings.Contains(info, "cgpu") {
		t.Errorf("docker info does not show the plugin and runtime:\n%s", info)
	}
	if help := mustDocker(t, "cgpu", "run", "--help"); !strings.Contains(help, "--gpu-mem") || !strings.Contains(help, "--shm-size") {
		t.Errorf("docker cgpu run --help lacks the cgpu or the docker flags:\n%s", help)
	}
	// The metadata the plugin's C constructor answers before Go starts, and what
	// plugin.Run answers (reached with "--", which the constructor does not take).
	plugin := os.Getenv("DOCKER_CONFIG") + "/cli-plugins/docker-cgpu"
	var early, late map[string]any
	for _, m := range []struct {
		args []string
		into *map[string]any
	}{{[]string{"docker-cli-plugin-metadata"}, &early}, {[]string{"docker-cli-plugin-metadata", "--"}, &late}} {
		out, err := exec.Command(plugin, m.args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", plugin, m.args, err)
		}
		if err := json.Unmarshal(out, m.into); err != nil {
			t.Fatalf("%s %v: %q: %v", plugin, m.args, out, err)
		}
	}
	if v, _ := early["Version"].(string); !reflect.DeepEqual(early, late) || v == "" || strings.Contains(v, "unknown") {
		t.Errorf("metadata before Go starts %v, from plugin.Run %v (make stamps the version in both)", early, late)
	}
}

// SPEC.md's two-container example, verbatim but for "docker cgpu run" and the image (and
// memlock where the machine forbids an unlimited one).
func TestSpecExample(t *testing.T) {
	setup(t)
	memlock := os.Getenv("CGPU_E2E_MEMLOCK")
	for _, c := range []struct{ name, gib string }{{"gpu_test1", "6"}, {"gpu_test2", "8"}} {
		mustDocker(t, "cgpu", "run", "-d", "-t", "--gpus", "all", "--shm-size=1g", "--ulimit", "memlock="+memlock,
			"--ulimit", "stack=67108864", "--name", c.name, "-v", "/mnt:/mnt",
			"-e", "ALIYUN_COM_GPU_MEM_CONTAINER="+c.gib, "-e", "ALIYUN_COM_GPU_MEM_DEV=15", image())
	}
	for _, c := range []struct {
		name, gib string
		bytes     uint64
	}{{"gpu_test1", "6", bytes6}, {"gpu_test2", "8", bytes8}} {
		v := inspect(t, c.name)
		for _, want := range []string{"ALIYUN_COM_GPU_MEM_CONTAINER=" + c.gib, "ALIYUN_COM_GPU_MEM_DEV=15",
			"ALIYUN_COM_GPU_VISIBLE_DEVICES=0,1,2,3", "NVIDIA_VISIBLE_DEVICES=0,1,2,3",
			"CGPU_MEM_LIMIT_BYTES=" + strings.Repeat(strconv.FormatUint(c.bytes, 10)+",", 3) + strconv.FormatUint(c.bytes, 10)} {
			if !slices.Contains(v.Config.Env, want) {
				t.Errorf("%s: env %v lacks %s", c.name, v.Config.Env, want)
			}
		}
		if v.HostConfig.Runtime != "cgpu" {
			t.Errorf("%s: runtime %q", c.name, v.HostConfig.Runtime)
		}
		if v.HostConfig.ShmSize != 1<<30 {
			t.Errorf("%s: shm size %d", c.name, v.HostConfig.ShmSize)
		}
		limits := map[string]int64{}
		for _, u := range v.HostConfig.Ulimits {
			if u.Soft != u.Hard {
				t.Errorf("%s: ulimit %s soft %d hard %d", c.name, u.Name, u.Soft, u.Hard)
			}
			limits[u.Name] = u.Hard
		}
		if want := map[string]int64{"memlock": mustInt(t, memlock), "stack": 67108864}; !reflect.DeepEqual(limits, want) {
			t.Errorf("%s: ulimits %v, want %v", c.name, limits, want)
		}
		if !reflect.DeepEqual(v.HostConfig.Binds, []string{"/mnt:/mnt"}) {
			t.Errorf("%s: binds %v", c.name, v.HostConfig.Binds)
		}
		if label := v.Config.Labels["io.github.cgpu-project.plan"]; !strings.Contains(label, fmt.Sprintf(`"memory_bytes":%d`, c.bytes)) {
			t.Errorf("%s: plan label %q", c.name, label)
		}
		if !v.State.Running {
			t.Errorf("%s is not running", c.name)
		}
	}
	id1, id2 := inspect(t, "gpu_test1").ID, inspect(t, "gpu_test2").ID
	st := tree(t)
	for _, g := range st.GPUs {
		a, b := g.Instance(id1), g.Instance(id2)
		if a == nil || b == nil || a.Memsize != bytes6 || b.Memsize != bytes8 || g.FreeWeight != g.MaxInst-2 {
			t.Fatalf("GPU %d holds %+v, want gpu_test1 %d and gpu_test2 %d bytes", g.Index, g.Instances, uint64(bytes6), uint64(bytes8))
		}
	}

	// A third container does not fit in the 0.98 GiB left: refused, nothing created.
	before := containerCount(t)
	r := docker("cgpu", "run", "-d", "--gpus", "all", "--name", "gpu_test3",
		"-e", "ALIYUN_COM_GPU_MEM_CONTAINER=2", "-e", "ALIYUN_COM_GPU_MEM_DEV=15", image())
	msg := strings.TrimSpace(r.err)
	if r.code != 125 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "GPU 0 (Tesla T4") ||
		!strings.Contains(msg, "ALIYUN_COM_GPU_MEM_CONTAINER=2") || !strings.Contains(msg, "overbooked") {
		t.Errorf("third container: exit %d, stderr %q; want 125 and one line naming GPU, value and rule", r.code, msg)
	}
	if after := containerCount(t); after != before {
		t.Errorf("container count %d -> %d after a refusal", before, after)
	}
	if n := instances(tree(t)); n != 8 {
		t.Errorf("%d instances after the refusal, want 8", n)
	}

	// docker rm -f removes the container's instances from every GPU.
	mustDocker(t, "rm", "-f", "gpu_test1")
	for _, g := range tree(t).GPUs {
		if g.Instance(id1) != nil || g.Instance(id2) == nil || g.FreeWeight != g.MaxInst-1 {
			t.Fatalf("GPU %d after rm -f gpu_test1: %+v free_weight %d", g.Index, g.Instances, g.FreeWeight)
		}
	}
}

// Without the plugin, the runtime decides from the container's environment the same way.
func TestPlainDockerRunRegisters(t *testing.T) {
	setup(t)
	args := []string{"-e", "ALIYUN_COM_GPU_MEM_CONTAINER=6", "-e", "ALIYUN_COM_GPU_MEM_DEV=15", "-e", "CGPU_MEM_LIMIT_BYTES=1", image(), "sleep", "600"}
	var plan struct {
		GPUs []struct {
			Index       int    `json:"index"`
			MemoryBytes uint64 `json:"memory_bytes"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal([]byte(mustDocker(t, append([]string{"cgpu", "run", "--dry-run", "--format", "json"}, args...)...)), &plan); err != nil {
		t.Fatal(err)
	}
	id := mustDocker(t, append([]string{"run", "-d", "--runtime", "cgpu"}, args...)...)
	in := tree(t).GPU(plan.GPUs[0].Index).Instance(id)
	if len(plan.GPUs) != 1 || in == nil || in.Memsize != plan.GPUs[0].MemoryBytes {
		t.Fatalf("plain docker run registered %+v; the plugin plans %+v", in, plan)
	}
	// The runtime wrote its placement into the container's environment.
	environ := mustDocker(t, "exec", id, "cat", "/proc/1/environ")
	if !strings.Contains(environ, fmt.Sprintf("ALIYUN_COM_GPU_VISIBLE_DEVICES=%d", plan.GPUs[0].Index)) {
		t.Errorf("init's environment lacks the placed GPU: %q", environ)
	}
	// ... and the registered bytes, for libcgpu, in place of the user's.
	var limits []string
	for _, kv := range strings.Split(environ, "\x00") {
		if strings.HasPrefix(kv, "CGPU_MEM_LIMIT_BYTES=") {
			limits = append(limits, kv)
		}
	}
	if want := fmt.Sprintf("CGPU_MEM_LIMIT_BYTES=%d", in.Memsize); !reflect.DeepEqual(limits, []string{want}) {
		t.Errorf("init's environment has %q, want only %s", limits, want)
	}
	// A refusal by the runtime reaches the docker run user.
	r := docker("run", "-d", "--runtime", "cgpu", "-e", "ALIYUN_COM_GPU_MEM_CONTAINER=16", image())
	if r.code == 0 || !strings.Contains(r.err, "OCI runtime create failed: cgpu: GPU") || !strings.Contains(r.err, "above the GPU's size") {
		t.Errorf("over-size docker run: exit %d, %q", r.code, r.err)
	}
}

func TestDryRunCreatesNothing(t *testing.T) {
	setup(t)
	before, inst := containerCount(t), instances(tree(t))
	r := docker("cgpu", "run", "--dry-run", "--format", "json", "--gpus", "2", "--gpu-mem", "3,1", "--weight", "2", "--high-prio", image())
	if r.code != 0 {
		t.Fatalf("dry run: %s", r.err)
	}
	var doc struct {
		CGPU    bool              `json:"cgpu"`
		Runtime string            `json:"runtime"`
		Env     map[string]string `json:"env"`
		GPUs    []struct {
			Index       int    `json:"index"`
			UUID        string `json:"uuid"`
			MemoryBytes uint64 `json:"memory_bytes"`
			Weight      int    `json:"weight"`
			HighPrio    bool   `json:"highprio"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v: %s", err, r.out)
	}
	if !doc.CGPU || doc.Runtime != "cgpu" || len(doc.GPUs) != 2 || doc.GPUs[0].MemoryBytes <= doc.GPUs[1].MemoryBytes ||
		doc.GPUs[0].Weight != 2 || !doc.GPUs[1].HighPrio || doc.Env["ALIYUN_COM_GPU_MEM_CONTAINER"] != "3,1" ||
		doc.Env["ALIYUN_COM_GPU_SCHD_WEIGHT"] != "2" || doc.Env["ALIYUN_COM_GPU_HIGH_PRIO"] != "1" {
		t.Errorf("plan %+v", doc)
	}
	if containerCount(t) != before || instances(tree(t)) != inst {
		t.Error("a dry run created something")
	}
}

func TestRefusalsCreateNothing(t *testing.T) {
	setup(t)
	before := containerCount(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gpu-mem", "16"}, "above the GPU's size"},
		{[]string{"--gpu-mem", "abc"}, `ALIYUN_COM_GPU_MEM_CONTAINER="abc": item 1: not a whole number`},
		{[]string{"--gpu-mem", "1.5"}, "not a whole number"},
		{[]string{"--gpu-mem", "3,,4"}, "item 2: empty"},
		{[]string{"--gpu-mem", "1,1,1", "--gpus", "0,1"}, "3 entries for 2 visible GPU(s)"},
		{[]string{"--gpu-mem", "1", "--gpus", "0,9"}, "unknown GPU 9"},
		{[]string{"--gpu-mem", "1", "--gpus", "GPU-00000000-0000-0000-0000-000000000000"}, "unknown GPU GPU-0000"},
		{[]string{"--gpu-mem", "1", "--weight", "17"}, "outside 1..max_inst (16)"},
		{[]string{"--gpu-mem", "1", "--gpus", "5"}, "asks for 5 GPUs; the node has 4"},
		{[]string{"--gpu-mem", "1", "-e", "ALIYUN_COM_GPU_MEM_CONTAINER=2"}, "both given"},
		{[]string{"--gpu-mem", "1", "--runtime", "runc"}, "--runtime runc"},
		{[]string{"--format", "json", "--gpu-mem", "1"}, "goes with --dry-run"},
	} {
		r := docker(append(append([]string{"cgpu", "run", "-d"}, tc.args...), image())...)
		if r.code != 125 || !strings.Contains(r.err, tc.want) || !strings.HasPrefix(r.err, "cgpu: ") {
			t.Errorf("%v: exit %d, stderr %q; want 125 and %q", tc.args, r.code, r.err, tc.want)
		}
	}
	if after := containerCount(t); after != before {
		t.Errorf("refusals created %d containers", after-before)
	}
	if n := instances(tree(t)); n != 0 {
		t.Errorf("refusals registered %d instances", n)
	}
}

// Started at once, 6 GiB containers on one 15 GiB GPU: two fit; however the runs
// interleave, the GPU is never overbooked and each loser is refused.
func TestConcurrentRunsNeverOverbook(t *testing.T) {
	setup(t)
	const n = 5
	results := make(chan result, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			results <- docker("cgpu", "run", "-d", "--name", fmt.Sprintf("race%d", i), "--gpus", "device=1", "--gpu-mem", "6", image(), "sleep", "600")
		}(i)
	}
	ok := 0
	for i := 0; i < n; i++ {
		r := <-results
		if r.code == 0 {
			ok++
		} else if !strings.Contains(r.err, "overbooked") {
			t.Errorf("a loser failed for another reason: %s", r.err)
		}
	}
	g := tree(t).GPU(1)
	running := len(strings.Fields(mustDocker(t, "ps", "-q")))
	if ok != 2 || len(g.Instances) != 2 || running != 2 || g.MemUsed() > 15109<<20 {
		t.Fatalf("%d runs succeeded, %d running, GPU 1 holds %d instances using %d bytes; want 2, 2, 2, <= %d",
			ok, running, len(g.Instances), g.MemUsed(), 15109<<20)
	}
}

// The run attaches like docker run: output, exit status, --rm, and the env inside.
func TestAttachedRun(t *testing.T) {
	setup(t)
	r := docker("cgpu", "run", "--rm", "--gpu-mem", "2", "--gpus", "1", image(), "sh", "-c", "env; exit 3")
	if r.code != 3 {
		t.Errorf("exit %d, want the container's 3 (%s)", r.code, r.err)
	}
	for _, want := range []string{"ALIYUN_COM_GPU_MEM_CONTAINER=2", "ALIYUN_COM_GPU_VISIBLE_DEVICES=", "ALIYUN_COM_GPU_MEM_DEV=15"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("container env lacks %s:\n%s", want, r.out)
		}
	}
	if n := instances(tree(t)); n != 0 || containerCount(t) != 0 {
		t.Errorf("after --rm: %d instances, %d containers", n, containerCount(t))
	}
	if out := mustDocker(t, "cgpu", "run", "--rm", "--no-cgpu", image(), "echo", "plain"); out != "plain" {
		t.Errorf("--no-cgpu output %q", out)
	}
}

func TestStopAndStart(t *testing.T) {
	setup(t)
	id := mustDocker(t, "cgpu", "run", "-d", "--gpu-mem", "4", image(), "sleep", "600")
	if instances(tree(t)) != 1 {
		t.Fatal("not registered")
	}
	mustDocker(t, "stop", "-t", "1", id)
	if instances(tree(t)) != 0 {
		t.Error("a stopped container keeps its instance")
	}
	mustDocker(t, "start", id)
	if instances(tree(t)) != 1 {
		t.Error("a restarted container is not registered")
	}
}

// The plugin reaches the daemon through a docker context as well as DOCKER_HOST.
func TestContext(t *testing.T) {
	setup(t)
	host := os.Getenv("DOCKER_HOST")
	docker("context", "rm", "-f", "cgpu-e2e")
	mustDocker(t, "context", "create", "cgpu-e2e", "--docker", "host="+host)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DOCKER_HOST=") {
			env = append(env, kv)
		}
	}
	r := dockerEnv(env, "--context", "cgpu-e2e", "cgpu", "run", "--rm", "--gpu-mem", "1", image(), "echo", "via-context")
	if r.code != 0 || strings.TrimSpace(r.out) != "via-context" {
		t.Errorf("--context: exit %d, out %q, err %q", r.code, r.out, r.err)
	}
}
