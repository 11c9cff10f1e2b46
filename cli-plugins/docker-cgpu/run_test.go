package main

import (
	"testing"

	"github.com/docker/cli/cli/command"
)

// The run command comes from docker's command registry through a go:linkname: a docker
// CLI update that moves the registry must fail here, not in a user's docker cgpu run.
func TestRunCommandHasDockerRunFlags(t *testing.T) {
	dockerCLI, err := command.NewDockerCli()
	if err != nil {
		t.Fatal(err)
	}
	cmd := newRunCommand(dockerCLI)
	for _, name := range []string{"detach", "env", "env-file", "runtime", "label", "rm", "name", "gpu-mem"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("docker cgpu run has no --%s", name)
		}
	}
	// docker's own --gpus is a gpu-request; cgpu's takes all, N or a list.
	if f := cmd.Flags().Lookup("gpus"); f == nil || f.Value.Type() != "string" {
		t.Errorf("--gpus is not cgpu's: %+v", f)
	}
}
