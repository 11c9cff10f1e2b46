// Command docker-cgpu is the Docker CLI plugin behind "docker cgpu": it turns a request
// for a share of a GPU into a validated plan and runs the container on the cgpu runtime.
package main

import (
	"github.com/docker/cli/cli-plugins/plugin"
	"github.com/docker/cli/cli/command"
	"github.com/spf13/cobra"
)

func main() {
	plugin.Run(newCgpuCommand, pluginMetadata())
}

func newCgpuCommand(dockerCLI command.Cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cgpu",
		Short: "Share GPUs between containers with hard memory limits",
		// Without a subcommand, print the usage instead of doing nothing.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRunCommand(dockerCLI), newStatCommand(dockerCLI), newSetCommand(dockerCLI),
		newUpgradeCommand(dockerCLI), newVersionCommand(dockerCLI))
	return cmd
}
