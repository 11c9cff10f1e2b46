package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/settings"
	"github.com/docker/cli/cli/command"
	"github.com/moby/moby/client"
	"github.com/spf13/cobra"
)

type upgradeOptions struct {
	hot, yes    bool
	source, ko  string
	timeout     int
	stopTimeout int
}

func newUpgradeCommand(dockerCLI command.Cli) *cobra.Command {
	var o upgradeOptions
	cmd := &cobra.Command{
		Use:   "upgrade [OPTIONS] [RELEASE_DIR]",
		Short: "Replace the cgpu_km kernel module: cold (containers stopped and started again) or --hot",
		Long: `Replace this node's cgpu_km kernel module by the one of RELEASE_DIR, the tree of the
cgpu release to upgrade to (default: the current directory), through its upgrade.sh.

Cold (the default): the running containers on the cgpu runtime are stopped, the module
is replaced, and exactly those containers are started again; GPU settings (policy,
max_inst, prio_ratio, default_memsize) and what docker cgpu set changed on their
instances (weight, memory, high priority) are given back.

--hot: the containers keep running. The old module hands its state (settings,
instances, every process's charges) over to the new one; processes pause at their next
allocation or launch while the module is replaced. Refused, changing nothing, when the
new module cannot take the state over.

It lists the containers concerned and asks before it changes anything (--yes does not
ask; without a terminal to ask on, --yes is needed). If the new module does not load,
the old one is loaded back (with the state, hot) and the containers are started again;
the command says what failed. Needs root.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return runUpgrade(dockerCLI, o, dir)
		},
	}
	flags := cmd.Flags()
	flags.BoolVar(&o.hot, "hot", false, "Replace the module while the containers keep running")
	flags.BoolVarP(&o.yes, "yes", "y", false, "Do not ask for confirmation")
	flags.StringVar(&o.source, "source", "", "The module's sources (default: RELEASE_DIR/kmod), built through DKMS")
	flags.StringVar(&o.ko, "ko", "", "A cgpu_km.ko built for the running kernel, loaded instead of a DKMS build (DKMS and the module loaded at boot stay as they are)")
	flags.IntVar(&o.timeout, "timeout", 30, "--hot: seconds processes get to let go of the old module")
	flags.IntVar(&o.stopTimeout, "stop-timeout", 10, "Cold: seconds each container gets to stop before it is killed")
	return cmd
}

// scriptArgs is upgrade.sh's command line for o.
func (o upgradeOptions) scriptArgs() []string {
	var args []string
	if o.hot {
		args = append(args, "--hot", "--timeout", strconv.Itoa(o.timeout))
	}
	if o.source != "" {
		args = append(args, "--source", o.source)
	}
	if o.ko != "" {
		args = append(args, "--ko", o.ko)
	}
	return args
}

// cgpuContainer is a running container on the cgpu runtime.
type cgpuContainer = settings.Container

// confirm asks on in (a terminal) whether to go ahead; yes skips the question.
func confirm(in io.Reader, terminal bool, out io.Writer, yes bool) error {
	if yes {
		return nil
	}
	if !terminal {
		return errors.New("no terminal to ask for confirmation on: pass --yes to go ahead")
	}
	fmt.Fprint(out, "Go ahead? [y/N] ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errors.New("cancelled: nothing was changed")
}

func runUpgrade(dockerCLI command.Cli, o upgradeOptions, dir string) error {
	ctx := context.Background()
	out := dockerCLI.Out()
	say := func(format string, a ...any) { fmt.Fprintf(out, "docker cgpu upgrade: "+format+"\n", a...) }
	script := filepath.Join(dir, "upgrade.sh")
	if _, err := os.Stat(script); err != nil {
		return lineUsage(fmt.Sprintf("%s: no upgrade.sh there: name the tree of the cgpu release to upgrade to", dir))
	}
	if o.source != "" && o.ko != "" {
		return lineUsage("--source and --ko do not go together: a module is built or given")
	}
	if o.stopTimeout < 0 {
		return lineUsage(fmt.Sprintf("--stop-timeout=%d: want 0 or more seconds", o.stopTimeout))
	}
	if os.Geteuid() != 0 {
		return cgpuStatusErr(errors.New("replacing the kernel module needs root; run docker cgpu upgrade as root (sudo)"))
	}
	cfg, err := node.Load("", os.Getenv)
	if err != nil {
		return cgpuStatusErr(err)
	}
	tree, err := node.OpenTree(cfg)
	if err != nil {
		return cgpuStatusErr(err)
	}
	if !tree.Kernel() {
		return cgpuStatusErr(fmt.Errorf("this node has no cgpu_km kernel module (its tree is the simulated %s): nothing to upgrade", tree.Root()))
	}
	before, err := tree.Read()
	if err != nil {
		return cgpuStatusErr(fmt.Errorf("reading %s (is cgpu_km loaded? install.sh loads it): %w", tree.Root(), err))
	}
	containers, err := cgpuContainers(ctx, dockerCLI)
	if err != nil {
		return cgpuStatusErr(fmt.Errorf("listing the containers on the cgpu runtime: %w", err))
	}

	mode := "cold: they are stopped now and started again after it"
	if o.hot {
		mode = "hot: they keep running; their processes pause while the module is replaced"
	}
	say("replacing cgpu_km %s with the module of %s (%s)", moduleVersion(tree), dir, map[bool]string{false: "cold", true: "hot"}[o.hot])
	if len(containers) == 0 {
		say("no container runs on the cgpu runtime")
	} else {
		say("%d container(s) on the cgpu runtime, %s:", len(containers), mode)
		for _, c := range containers {
			fmt.Fprintf(out, "  %s\n", c)
		}
	}
	// What upgrade.sh can refuse while the containers run is refused before any stops.
	if err := runScript(dockerCLI, script, append([]string{"--check"}, o.scriptArgs()...)); err != nil {
		return cgpuStatusErr(fmt.Errorf("upgrade.sh --check refused the update (%w): what it says above; nothing was changed", err))
	}
	in := dockerCLI.In()
	if err := confirm(in, in.IsTerminal(), out, o.yes); err != nil {
		return cgpuStatusErr(err)
	}
	saved := settings.Save(before, containers)

	var stopped []cgpuContainer
	if !o.hot {
		for _, c := range containers {
			t := o.stopTimeout
			if _, err := dockerCLI.Client().ContainerStop(ctx, c.ID, client.ContainerStopOptions{Timeout: &t}); err != nil {
				problems := startAll(ctx, dockerCLI, stopped, say)
				return cgpuStatusErr(errors.Join(append([]error{fmt.Errorf("stopping %s: %w; the module was not touched", c, err)}, problems...)...))
			}
			stopped = append(stopped, c)
			say("  stopped    %s", c)
		}
	}

	var problems []error
	if err := runScript(dockerCLI, script, o.scriptArgs()); err != nil {
		problems = append(problems, fmt.Errorf("upgrade.sh failed (%w): what it says above; cgpu_km %s runs now", err, moduleVersion(tree)))
	}
	problems = append(problems, startAll(ctx, dockerCLI, stopped, say)...)
	changes, err := settings.Restore(tree, saved)
	switch {
	case err != nil:
		problems = append(problems, fmt.Errorf("giving the settings back: %w", err))
	case len(changes) == 0:
		say("the %d instance(s) of the containers carried their values over (upgrade.sh carries the GPU settings)", len(saved.Instances))
	default:
		for _, c := range changes {
			say("  restored   %s", c.What)
		}
	}
	if o.hot {
		for _, c := range containers {
			r, err := dockerCLI.Client().ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
			if err != nil || r.Container.State == nil || !r.Container.State.Running {
				problems = append(problems, fmt.Errorf("container %s is not running after the update", c))
			}
		}
	}
	if len(problems) > 0 {
		return cgpuStatusErr(errors.Join(problems...))
	}
	say("done: cgpu_km %s; %d container(s) %s", moduleVersion(tree), len(containers),
		map[bool]string{false: "started again", true: "kept running"}[o.hot])
	return nil
}

// cgpuContainers lists the running containers whose runtime is cgpu.
func cgpuContainers(ctx context.Context, dockerCLI command.Cli) ([]cgpuContainer, error) {
	res, err := dockerCLI.Client().ContainerList(ctx, client.ContainerListOptions{})
	if err != nil {
		return nil, err
	}
	var out []cgpuContainer
	for _, item := range res.Items {
		r, err := dockerCLI.Client().ContainerInspect(ctx, item.ID, client.ContainerInspectOptions{})
		if err != nil {
			return nil, err
		}
		if r.Container.HostConfig != nil && r.Container.HostConfig.Runtime == cgpuRuntime {
			out = append(out, cgpuContainer{ID: r.Container.ID, Name: strings.TrimPrefix(r.Container.Name, "/")})
		}
	}
	return out, nil
}

// startAll starts the containers again, saying so; what failed comes back.
func startAll(ctx context.Context, dockerCLI command.Cli, cs []cgpuContainer, say func(string, ...any)) []error {
	var problems []error
	for _, c := range cs {
		if _, err := dockerCLI.Client().ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
			problems = append(problems, fmt.Errorf("starting %s again: %w", c, err))
			continue
		}
		say("  started    %s", c)
	}
	return problems
}

// runScript runs upgrade.sh with the plugin's output. An interrupt reaches the script
// (which undoes what it changed) while the plugin goes on to start the containers again.
func runScript(dockerCLI command.Cli, script string, args []string) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Stdout, cmd.Stderr = dockerCLI.Out(), dockerCLI.Err()
	return cmd.Run()
}

// moduleVersion is the loaded module's version, or a note that none is.
func moduleVersion(t procfs.Tree) string {
	v, err := readModuleVersion(t.Root())
	if err != nil {
		return "(none loaded)"
	}
	return v
}

// readModuleVersion reads the version file of the tree at root.
func readModuleVersion(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "version"))
	return strings.TrimSpace(string(b)), err
}
