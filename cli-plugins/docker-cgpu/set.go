package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/settings"
	"github.com/cgpu-project/cgpu/pkg/uapi"
	"github.com/docker/cli/cli/command"
	"github.com/moby/moby/client"
	"github.com/spf13/cobra"
)

func newSetCommand(dockerCLI command.Cli) *cobra.Command {
	var r settings.Request
	var highPrio bool
	cmd := &cobra.Command{
		Use:   "set [OPTIONS] [CONTAINER...]",
		Short: "Change a GPU's policy, max_inst, prio_ratio, the default memory, or a container's weight, memory and priority",
		Long: `Change the cgpu tree's tunable values, all or nothing.

GPU level (with --gpu N|LIST|all): --policy, --max-inst, --prio-ratio.
Node level: --default-memsize.
Instance level (with CONTAINER: a name, an ID or a unique ID prefix): --weight, --memsize,
--high-prio; on every GPU the container has an instance, or on the --gpu GPUs only.

Every value is checked against the node first, with the rules docker cgpu run applies;
nothing is written unless all of it can be. The writes are then made in an order the
kernel accepts step by step, and undone if the kernel refuses one anyway. Changing the
kernel's tree (/proc/cgpu_km) needs root.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("high-prio") {
				r.HighPrio = &highPrio
			}
			return runSet(cmd.Context(), dockerCLI, r, args)
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&r.GPUs, "gpu", "", `GPUs to change: an index, a list such as 0,2, or "all"`)
	flags.StringVar(&r.Policy, "policy", "", fmt.Sprintf("Scheduling policy: 0..%d or fair-share, preemptive, weight, fixed, soft, native", uapi.PolicyMax))
	flags.StringVar(&r.MaxInst, "max-inst", "", fmt.Sprintf("Most instances on the GPU, %d..%d", uapi.MaxInstMin, uapi.MaxInstMax))
	flags.StringVar(&r.PrioRatio, "prio-ratio", "", fmt.Sprintf("Most compute high priority may preempt, %d..%d (percent)", uapi.PrioRatioMin, uapi.PrioRatioMax))
	flags.StringVar(&r.DefaultMemsize, "default-memsize", "", "GiB a container that asks for no memory gets on each GPU (0: none, cGPU off for it)")
	flags.StringVar(&r.Weight, "weight", "", "Scheduling weight, 0..max_inst (0: no compute)")
	flags.StringVar(&r.Memsize, "memsize", "", "GPU memory in GiB as nvidia-smi shows them (as ALIYUN_COM_GPU_MEM_CONTAINER)")
	flags.BoolVar(&highPrio, "high-prio", false, "High priority: --high-prio or --high-prio=false")
	flags.StringSliceVar(&r.RemoveOrphans, "remove-orphan", nil, "Remove the instances of this 12-character name, whose container Docker no longer has")
	return cmd
}

func runSet(ctx context.Context, dockerCLI command.Cli, r settings.Request, args []string) error {
	for _, a := range args {
		c, err := dockerCLI.Client().ContainerInspect(ctx, a, client.ContainerInspectOptions{})
		if err != nil {
			return cgpuStatusErr(err)
		}
		r.Containers = append(r.Containers, settings.Container{ID: c.Container.ID, Name: strings.TrimPrefix(c.Container.Name, "/")})
	}
	if err := checkOrphans(ctx, dockerCLI, r.RemoveOrphans); err != nil {
		return cgpuStatusErr(err)
	}
	cfg, err := node.Load("", os.Getenv)
	if err != nil {
		return cgpuStatusErr(err)
	}
	n, err := node.Open(cfg)
	if err != nil {
		return cgpuStatusErr(err)
	}
	if n.Tree.Kernel() && os.Geteuid() != 0 {
		return cgpuStatusErr(fmt.Errorf("changing %s needs root; run docker cgpu set as root (sudo)", n.Tree.Root()))
	}
	changes, err := settings.Set(n.Tree, n.GPUs, r)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		return cgpuStatusErr(fmt.Errorf("changing %s needs root (CAP_SYS_ADMIN): %w", n.Tree.Root(), err))
	}
	if err != nil {
		return cgpuStatusErr(err)
	}
	if len(changes) == 0 {
		fmt.Fprintln(dockerCLI.Out(), "nothing to change: every value is already so")
	}
	for _, c := range changes {
		fmt.Fprintln(dockerCLI.Out(), c.What)
	}
	return nil
}

// checkOrphans refuses to remove an instance whose container Docker still has: its
// runtime removes it when the container goes.
func checkOrphans(ctx context.Context, dockerCLI command.Cli, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	containers, err := dockerContainers(ctx, dockerCLI)
	if err != nil {
		return fmt.Errorf("--remove-orphan needs Docker's containers to tell orphans: %w", err)
	}
	for _, id := range ids {
		if len(id) != uapi.IDLen || !procfs.ValidID(id) {
			return fmt.Errorf("--remove-orphan=%s: not an instance name (12 lowercase hex characters, as docker cgpu stat shows)", id)
		}
		for _, c := range containers {
			if strings.HasPrefix(c.ID, id) {
				return fmt.Errorf("--remove-orphan=%s: container %s has this ID; it is no orphan (docker rm removes it and its instances)", id, c.Name)
			}
		}
	}
	return nil
}
