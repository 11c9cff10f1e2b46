// Command cgpu-runtime is the cgpu OCI runtime, a wrapper in the manner of
// nvidia-container-runtime: on create it decides the container's cGPU instances from its
// environment, registers them in the cgpu tree and adds the hook (libcgpu, preloaded),
// /dev/cgpu and, on the simulated node, the simulated driver (and the stand-in kernel
// driver's device nodes where it is loaded) to the container; on delete
// it removes the instances; every command goes on to the next runtime
// (nvidia-container-runtime or runc) with the same arguments.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/inject"
	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/oci"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/register"
	"github.com/cgpu-project/cgpu/pkg/runcargs"
	"github.com/cgpu-project/cgpu/pkg/specmod"
	"github.com/cgpu-project/cgpu/pkg/version"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

type runtime struct {
	args runcargs.Args
	cfg  node.Config
	next string
}

func run(argv []string) int {
	a, err := runcargs.Parse(argv)
	if err != nil {
		return fail(a, err)
	}
	if a.Version {
		// Its own line first, then the next runtime's (the exec below), as
		// nvidia-container-runtime does: docker cgpu version reads the first line, which
		// is there even when the next runtime cannot be found.
		fmt.Println(version.RuntimePrefix + version.Version)
	}
	cfg, err := node.Load(a.Config, os.Getenv)
	if err != nil {
		return fail(a, err)
	}
	next, err := cfg.NextRuntimePath()
	if err != nil {
		return fail(a, err)
	}
	r := runtime{args: a, cfg: cfg, next: next}
	switch {
	case a.Command == "create" && a.ID != "":
		return r.create()
	case a.Command == "delete" && a.ID != "":
		return r.delete()
	}
	return r.exec()
}

// exec hands the whole command to the next runtime, which replaces this process.
func (r runtime) exec() int {
	err := syscall.Exec(r.next, append([]string{r.next}, r.args.Pass...), os.Environ())
	return fail(r.args, fmt.Errorf("running %s: %w", r.next, err))
}

// child runs the next runtime and waits for it, for the commands cgpu has work after.
func (r runtime) child(args ...string) (int, error) {
	cmd := exec.Command(r.next, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 1, fmt.Errorf("running %s: %w", r.next, err)
	}
	return 0, nil
}

func (r runtime) create() int {
	bundle := r.args.Bundle
	if bundle == "" {
		bundle = "."
	}
	spec, err := oci.Load(bundle)
	if err != nil {
		return fail(r.args, fmt.Errorf("reading the bundle: %w", err))
	}
	env, err := spec.Env()
	if err != nil {
		return fail(r.args, err)
	}
	vars := alloc.EnvMap(env)
	in, err := alloc.ParseEnv(vars)
	if err != nil {
		return fail(r.args, err)
	}
	if in.Off != "" {
		return r.plain(bundle, spec, vars)
	}
	if in.Mem == nil {
		on, err := r.defaultMemsizeSet()
		if err != nil {
			return fail(r.args, err)
		}
		if !on {
			return r.plain(bundle, spec, vars)
		}
	}
	n, err := node.Open(r.cfg)
	if errors.Is(err, procfs.ErrNoModule) {
		err = r.noModule()
	}
	if err != nil {
		return fail(r.args, err)
	}
	parts, err := inject.Check(r.cfg, n.Tree)
	if err != nil {
		return fail(r.args, err)
	}
	plan, err := register.Register(n.Tree, n.GPUs, r.args.ID, in)
	if err != nil {
		return fail(r.args, err)
	}
	if !plan.Enabled {
		return r.plain(bundle, spec, vars)
	}
	logf(r.args, "info", "registered container %s: %s", procfs.ShortID(r.args.ID), summary(plan))
	inj, err := parts.For(bundle, spec, plan.Indexes())
	if err == nil {
		err = specmod.Apply(spec, plan, inj)
	}
	if err == nil {
		err = spec.Save(bundle)
	}
	if err != nil {
		return r.undo(n.Tree, 1, fmt.Errorf("updating the bundle: %w", err))
	}
	code, err := r.child(r.args.Pass...)
	if code != 0 || err != nil {
		return r.undo(n.Tree, code, err)
	}
	// The container's cgroup exists now and its init waits in it for start: no process
	// of the container has run yet, so none can have been taken for another.
	pid, err := r.initPID()
	if err == nil {
		err = register.Bind(n.Tree, r.args.ID, pid)
	}
	if err != nil {
		r.forceDelete()
		return r.undo(n.Tree, 1, err)
	}
	return 0
}

// initPID is the pid of the container's init: from the file the next runtime wrote it
// to (containerd always asks for one; it lies in containerd's state, out of the
// container's reach), else as the next runtime's state says (one more run of it).
func (r runtime) initPID() (int, error) {
	if r.args.PidFile != "" {
		b, err := os.ReadFile(r.args.PidFile)
		if err != nil {
			return 0, fmt.Errorf("reading the container's pid: %w", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid < 1 {
			return 0, fmt.Errorf("%s wrote no pid to %s: %q", r.next, r.args.PidFile, b)
		}
		return pid, nil
	}
	cmd := exec.Command(r.next, append(append([]string(nil), r.args.Global...), "state", r.args.ID)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("asking %s for the container's state: %w", r.next, err)
	}
	var st struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal(out, &st); err != nil || st.Pid < 1 {
		return 0, fmt.Errorf("%s state gave no pid for the container: %q", r.next, out)
	}
	return st.Pid, nil
}

// forceDelete removes a container whose create cannot be completed, so that nothing of
// it runs without its limits.
func (r runtime) forceDelete() {
	cmd := exec.Command(r.next, append(append([]string(nil), r.args.Global...), "delete", "--force", r.args.ID)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		logf(r.args, "error", "removing container %s after a failed create: %v", procfs.ShortID(r.args.ID), err)
	}
}

// plain runs a container cGPU leaves alone: nothing of cgpu goes into it. On the
// simulated node one that asks for GPUs still gets the simulated driver (and the
// stand-in driver's nodes of the GPUs it names), as NVIDIA's toolkit gives it the real
// one on a real node.
func (r runtime) plain(bundle string, spec *oci.Spec, env map[string]string) int {
	if !r.cfg.Sim || !inject.WantsDriver(env) {
		return r.exec()
	}
	gpus, err := r.cfg.Inventory().GPUs()
	if err != nil {
		return fail(r.args, err)
	}
	visible, err := alloc.NvidiaVisible(env, gpus)
	if err != nil {
		return fail(r.args, err)
	}
	n, err := inject.Plain(r.cfg)
	if err != nil {
		return fail(r.args, err)
	}
	inj, err := n.For(bundle, spec, visible)
	if err == nil {
		err = specmod.Inject(spec, inj)
	}
	if err == nil {
		err = spec.Save(bundle)
	}
	if err != nil {
		return fail(r.args, fmt.Errorf("updating the bundle: %w", err))
	}
	return r.exec()
}

// noModule is the refusal of a container that asks for GPU memory on a node whose
// module is not loaded: it says how to load it.
func (r runtime) noModule() error {
	n := "N"
	if gpus, err := r.cfg.Inventory().GPUs(); err == nil {
		n = fmt.Sprint(len(gpus))
	}
	return fmt.Errorf("the cgpu_km kernel module is not loaded (%s is missing): load it with `modprobe cgpu_km ngpus=%s`; install.sh installs it and loads it at every boot", r.cfg.Root(), n)
}

// defaultMemsizeSet tells whether a container that names no memory still gets cGPU. It
// needs the tree only, so that such containers run on a node without GPUs or module, as
// they would without cgpu.
func (r runtime) defaultMemsizeSet() (bool, error) {
	t, err := node.OpenTree(r.cfg)
	if errors.Is(err, procfs.ErrNoModule) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st, err := t.Read()
	if err != nil {
		return false, err
	}
	return st.DefaultMemsize != 0, nil
}

// undo unregisters a container whose create failed after registration, and passes the
// failure on.
func (r runtime) undo(t procfs.Tree, code int, cause error) int {
	if err := register.Unregister(t, r.args.ID); err != nil {
		cause = fmt.Errorf("%v; unregistering: %w", cause, err)
	}
	if cause != nil {
		fail(r.args, cause)
	}
	return max(code, 1)
}

// delete unregisters once the next runtime has removed the container, or when it no
// longer knows the container at all: a container it still holds keeps its limits.
func (r runtime) delete() int {
	code, err := r.child(r.args.Pass...)
	if err != nil {
		return fail(r.args, err)
	}
	if code != 0 && r.exists() {
		return code
	}
	t, err := node.OpenTree(r.cfg)
	if err == nil {
		err = register.Unregister(t, r.args.ID)
	}
	if err != nil && !errors.Is(err, procfs.ErrNoModule) {
		return fail(r.args, err)
	}
	return code
}

func (r runtime) exists() bool {
	cmd := exec.Command(r.next, append(append([]string(nil), r.args.Global...), "state", r.args.ID)...)
	return cmd.Run() == nil
}

func summary(p alloc.Plan) string {
	s := ""
	for _, a := range p.GPUs {
		s += fmt.Sprintf("[GPU %d memsize=%d weight=%d highprio=%t] ", a.Index, a.MemoryBytes, a.Weight, a.HighPrio)
	}
	return s
}

// fail reports err where the docker user sees it: containerd passes the last error of
// the runtime's --log file on to dockerd, which prints it after "OCI runtime create failed".
func fail(a runcargs.Args, err error) int {
	logf(a, "error", "%v", err)
	fmt.Fprintf(os.Stderr, "cgpu: %v\n", err)
	return 1
}

func logf(a runcargs.Args, level, format string, args ...any) {
	if a.Log == "" {
		return
	}
	f, err := os.OpenFile(a.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	msg := "cgpu: " + fmt.Sprintf(format, args...)
	now := time.Now().Format(time.RFC3339Nano)
	if a.LogFormat == "json" {
		b, _ := json.Marshal(map[string]string{"level": level, "msg": msg, "time": now})
		fmt.Fprintf(f, "%s\n", b)
		return
	}
	fmt.Fprintf(f, "time=%q level=%s msg=%q\n", now, level, msg)
}
