// Package statset runs docker cgpu stat and set end to end: the real docker client and
// plugin, a real dockerd running containers on the cgpu runtime, and the node's tree, the
// simulated one on the host (test/suites/45-stat-set.sh) or the cgpu_km module's in the
// test VM (test/suites/55-vm-stat-set.sh). Without CGPU_STATSET=1 every test skips.
//
//	DOCKER_HOST, DOCKER_CONFIG  the private daemon, and the config dir holding the plugin
//	CGPU_RUNTIME_CONFIG         the cgpu config of the daemon's runtime and the plugin
//	CGPU_E2E_IMAGE              a local image with sh and sleep
//	CGPU_STATSET_KT             the kernel suite's kt tool (test/kmod), in the VM: real
//	                            processes charge memory to the instances through /dev/cgpu
//	CGPU_STATSET_PLUGIN         run "docker cgpu ..." as this plugin binary straight, not
//	                            through the docker client (the VM: each process started
//	                            under TCG costs a second; the host runs the client)
//	DOCKER_BIN                  the docker client (default docker)
package statset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// run is one docker command's outcome.
type run struct {
	out, err string
	code     int
}

func dockerBin() string {
	if b := os.Getenv("DOCKER_BIN"); b != "" {
		return b
	}
	return "docker"
}

func docker(args ...string) run {
	var out, errb bytes.Buffer
	cmd := exec.Command(dockerBin(), args...)
	if p := os.Getenv("CGPU_STATSET_PLUGIN"); p != "" && args[0] == "cgpu" {
		// The plugin takes the command line the client would give it: "cgpu stat ...".
		cmd = exec.Command(p, args...)
	}
	cmd.Stdout, cmd.Stderr = &out, &errb
	r := run{}
	if err := cmd.Run(); err != nil {
		r.code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		}
	}
	r.out, r.err = out.String(), errb.String()
	return r
}

func must(t *testing.T, args ...string) string {
	t.Helper()
	r := docker(args...)
	if r.code != 0 {
		t.Fatalf("docker %s: exit %d: %s", strings.Join(args, " "), r.code, r.err)
	}
	return r.out
}

// refused runs a command that must fail with one line naming want, changing nothing.
func refused(t *testing.T, tr procfs.Tree, want string, args ...string) {
	t.Helper()
	before := dump(t, tr)
	r := docker(args...)
	line := strings.TrimSuffix(r.err, "\n")
	if r.code != 1 || !strings.Contains(line, want) || strings.Contains(line, "\n") || !strings.HasPrefix(line, "cgpu: ") {
		t.Errorf("docker %s: exit %d, stderr %q; want status 1 and one line naming %q", strings.Join(args, " "), r.code, r.err, want)
	}
	if after := dump(t, tr); after != before {
		t.Errorf("docker %s changed the tree:\n%s\nwas\n%s", strings.Join(args, " "), after, before)
	}
}

// dump is every file of the tree and its content, the kernel's as the simulated one's.
func dump(t *testing.T, tr procfs.Tree) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(tr.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "inst_ctl" || d.Name() == "upgrade" {
			return err
		}
		v, err := os.ReadFile(p)
		fmt.Fprintf(&b, "%s: %s\n", p, strings.TrimSpace(string(v)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func openNode(t *testing.T) *node.Node {
	t.Helper()
	cfg, err := node.Load("", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type container struct {
	ID    string `json:"Id"`
	Name  string
	State struct {
		Status string
		Pid    int
	}
}

func inspect(t *testing.T, name string) container {
	t.Helper()
	var c []container
	if err := json.Unmarshal([]byte(must(t, "inspect", name)), &c); err != nil || len(c) != 1 {
		t.Fatalf("inspect %s: %v", name, err)
	}
	c[0].Name = strings.TrimPrefix(c[0].Name, "/")
	return c[0]
}

// holder makes a process of a container hold memory on one of its GPUs.
type holder interface {
	hold(t *testing.T, c container, gpu int, bytes uint64) (pid int)
	releaseAll()
}

// simHolder writes the meminfo a kernel would print: the simulated tree is files.
type simHolder struct{ tr procfs.Tree }

func (h simHolder) hold(t *testing.T, c container, gpu int, bytes uint64) int {
	st, err := h.tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	in := st.GPU(gpu).Instance(c.ID)
	path := filepath.Join(h.tr.Root(), fmt.Sprint(gpu), in.ID, "meminfo")
	data := fmt.Sprintf("Free: %d\nPID: %d Mem: %d\n", in.Memsize-bytes, c.State.Pid, bytes)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return c.State.Pid
}

func (simHolder) releaseAll() {}

// ktHolder runs the kernel suite's kt in the container's own cgroup (its init's, which
// the runtime bound the instance to): the module charges it to the container's instance.
type ktHolder struct {
	kt    string
	procs []*exec.Cmd
	holds []string
}

func (h *ktHolder) hold(t *testing.T, c container, gpu int, bytes uint64) int {
	cg := ownCgroup(t, c)
	// Not t.TempDir: the hold outlives the test that set the fixture up.
	f, err := os.CreateTemp("", "cgpu-statset-hold.")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	hold := f.Name()
	cmd := exec.Command(h.kt, "ops", "-c", cg, "open", "attach", "charge", fmt.Sprint(gpu), fmt.Sprint(bytes), "ready", "hold", hold)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h.procs, h.holds = append(h.procs, cmd), append(h.holds, hold)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "ready OK pid="); ok {
			var pid int
			fmt.Sscan(p, &pid)
			go io.Copy(io.Discard, out) // its last line, when released
			return pid
		}
	}
	t.Fatalf("kt did not get ready (charge %d on GPU %d for %s)", bytes, gpu, c.Name)
	return 0
}

// ownCgroup is the container's own cgroup: its init's, the one the runtime bound the
// container's instances to (a cgroup merely named like Docker's scope is no container).
func ownCgroup(t *testing.T, c container) string {
	// Its init now: a test may have restarted it since the fixture was made.
	pid, err := exec.Command(dockerBin(), "inspect", "-f", "{{.State.Pid}}", c.ID).Output()
	if err != nil {
		t.Fatalf("docker inspect %s: %v", c.Name, err)
	}
	self, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	rel, ok := strings.CutPrefix(strings.TrimSpace(string(self)), "0::")
	if !ok {
		t.Fatalf("container %s: not on cgroup v2: %q", c.Name, self)
	}
	return "/sys/fs/cgroup" + rel
}

func (h *ktHolder) releaseAll() {
	for _, f := range h.holds {
		os.Remove(f)
	}
	for _, p := range h.procs {
		p.Wait()
	}
	h.procs, h.holds = nil, nil
}

func newHolder(tr procfs.Tree) holder {
	if kt := os.Getenv("CGPU_STATSET_KT"); kt != "" {
		return &ktHolder{kt: kt}
	}
	return simHolder{tr}
}

func setup(t *testing.T) {
	t.Helper()
	if os.Getenv("CGPU_STATSET") != "1" {
		t.Skip("needs the private dockerd of test/suites/45-stat-set.sh or 55-vm-stat-set.sh (CGPU_STATSET=1)")
	}
}
