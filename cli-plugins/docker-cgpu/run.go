package main

import (
	"fmt"
	"os"
	"sort"
	_ "unsafe" // for go:linkname

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/docker/cli/cli"
	"github.com/docker/cli/cli/command"
	// Its init registers docker's container commands, run among them, in dockerCommands.
	_ "github.com/docker/cli/cli/command/container"
	dockeropts "github.com/docker/cli/opts"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newRunCommand is docker's own "run" with the cgpu flags in front: every docker run
// flag is docker's own flag object, parsed and applied by docker's code, so "docker cgpu
// run" accepts exactly what "docker run" does. Only --gpus is cgpu's (all, N or a list).
func newRunCommand(dockerCLI command.Cli) *cobra.Command {
	dockerRun := dockerRunCommand(dockerCLI)
	var o options
	cmd := &cobra.Command{
		Use:   "run [cgpu options] [docker run options] IMAGE [COMMAND] [ARG...]",
		Short: "Create and run a container with a share of GPU memory and compute",
		Long: `Create and run a container with a share of GPU memory and compute.

Every "docker run" option works; -e ALIYUN_COM_GPU_* variables ask for cGPU as the
cgpu options do. The plan is checked against the node's GPUs and /proc/cgpu_km before
anything is created.`,
		Args:                  cli.RequiresMinArgs(1),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, dockerRun, o, args)
		},
	}
	flags := cmd.Flags()
	flags.SetInterspersed(false)
	flags.StringVar(&o.gpuMem, "gpu-mem", "", "GiB of GPU memory per GPU, or a list (as ALIYUN_COM_GPU_MEM_CONTAINER)")
	flags.StringVar(&o.gpus, "gpus", "", `GPUs: "all", a count N placed by best fit, or a list of indexes or UUIDs`)
	flags.StringVar(&o.weight, "weight", "", "Scheduling weight, 1..max_inst (as ALIYUN_COM_GPU_SCHD_WEIGHT)")
	flags.BoolVar(&o.highPrio, "high-prio", false, "High priority (as ALIYUN_COM_GPU_HIGH_PRIO=1)")
	flags.BoolVar(&o.noCGPU, "no-cgpu", false, "Run without cGPU: plain NVIDIA container (as CGPU_DISABLE=true)")
	flags.BoolVar(&o.dryRun, "dry-run", false, "Print the plan and create nothing")
	flags.StringVar(&o.format, "format", "", `With --dry-run: "json" prints the plan as JSON`)
	dockerRun.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "gpus" {
			flags.AddFlag(f)
		}
	})
	return cmd
}

// dockerCommands is the docker CLI's registry of command constructors, filled by the
// init of each command package linked in. The docker CLI's only public way to its run
// command, commands.AddCommands, links and builds every docker command (stack, swarm,
// compose schemas...): their package init and construction cost every start of this
// plugin, docker-cli-plugin-metadata included, about 14 ms (docs/cli.md, "Where the time
// goes"). Linking the container package alone keeps docker's own run command.
//
//go:linkname dockerCommands github.com/docker/cli/internal/commands.commands
var dockerCommands []func(command.Cli) *cobra.Command

// dockerRunCommand builds the docker CLI's own run command for this CLI instance.
func dockerRunCommand(dockerCLI command.Cli) *cobra.Command {
	for _, newCommand := range dockerCommands {
		if c := newCommand(dockerCLI); c.Name() == "run" {
			return c
		}
	}
	panic("the docker CLI has no run command")
}

func runRun(cmd *cobra.Command, dockerRun *cobra.Command, o options, args []string) error {
	if o.format != "" && (o.format != "json" || !o.dryRun) {
		return usageErr(`--format takes "json", and goes with --dry-run`)
	}
	env, err := userEnv(dockerRun.Flags())
	if err != nil {
		return usageErr(err.Error())
	}
	req, err := newRequest(o, env)
	if err != nil {
		return cgpuErr(err)
	}
	cfg, err := node.Load("", os.Getenv)
	if err != nil {
		return cgpuErr(err)
	}
	plan, warning, err := decide(cfg, req.intent)
	if err != nil {
		return cgpuErr(err)
	}
	if warning != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "cgpu: "+warning)
	}
	userRuntime, _ := dockerRun.Flags().GetString("runtime")
	runtime, err := runtimeFor(plan, userRuntime)
	if err != nil {
		return cgpuErr(err)
	}
	added := plan.Added(req.given)
	for k, v := range req.fromFlags {
		added[k] = v
	}
	gpus := ""
	if !cfg.Sim {
		gpus = deviceRequest(plan, req.gpus)
	}
	out := newPlanOutput(plan, runtime, plan.Visible(req.given), gpus, cfg.Sim)
	if o.dryRun {
		if o.format == "json" {
			return out.writeJSON(cmd.OutOrStdout())
		}
		return out.writeTable(cmd.OutOrStdout())
	}
	for _, kv := range dockerSettings(runtime, out.Labels, added, gpus) {
		if err := dockerRun.Flags().Set(kv[0], kv[1]); err != nil {
			return cgpuErr(fmt.Errorf("setting docker run --%s %s: %w", kv[0], kv[1], err))
		}
	}
	dockerRun.SetContext(cmd.Context())
	return dockerRun.RunE(dockerRun, args)
}

// dockerSettings are the docker run options that carry the plan, as flag name and value.
func dockerSettings(runtime string, labels, env map[string]string, gpus string) [][2]string {
	out := [][2]string{{"runtime", runtime}}
	for _, k := range sortedKeys(labels) {
		out = append(out, [2]string{"label", k + "=" + labels[k]})
	}
	for _, k := range sortedKeys(env) {
		out = append(out, [2]string{"env", k + "=" + env[k]})
	}
	if gpus != "" {
		out = append(out, [2]string{"gpus", gpus})
	}
	return out
}

// decide plans against the node; a container without cGPU needs neither GPUs nor tree.
// The warning is for a limited container on a node whose cgpu_km was asked to enforce
// at the NVIDIA driver and does not (procfs.EnforcementWarning).
func decide(cfg node.Config, in alloc.Intent) (alloc.Plan, string, error) {
	if in.Off != "" {
		return alloc.Plan{Reason: in.Off}, "", nil
	}
	n, err := node.Open(cfg)
	if err != nil {
		return alloc.Plan{}, "", err
	}
	st, err := n.Tree.Read()
	if err != nil {
		return alloc.Plan{}, "", err
	}
	plan, err := alloc.Decide(in, n.GPUs, st)
	if err != nil || !plan.Enabled || !n.Tree.Kernel() {
		return plan, "", err
	}
	state, err := procfs.ReadEnforcement(n.Tree.Root())
	if err != nil {
		return alloc.Plan{}, "", err
	}
	return plan, procfs.EnforcementWarning(state), nil
}

// userEnv is the environment the user gave, read the way docker run reads it.
func userEnv(flags *pflag.FlagSet) (map[string]string, error) {
	slice := func(name string) []string {
		if v, ok := flags.Lookup(name).Value.(interface{ GetSlice() []string }); ok {
			return v.GetSlice()
		}
		return nil
	}
	env, err := dockeropts.ReadKVEnvStrings(slice("env-file"), slice("env"))
	if err != nil {
		return nil, fmt.Errorf("--env-file: %w", err)
	}
	return alloc.EnvMap(env), nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cgpuErr is a refusal: one line, docker run's exit status for errors before the
// container exists.
func cgpuErr(err error) error {
	return cli.StatusError{Status: "cgpu: " + err.Error(), StatusCode: 125}
}

func usageErr(msg string) error {
	return cli.StatusError{Status: "cgpu: " + msg + "\nSee 'docker cgpu run --help'.", StatusCode: 125}
}
