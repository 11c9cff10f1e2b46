package main

import (
	"context"
	"fmt"
	"os"

	_ "github.com/cgpu-project/cgpu/pkg/node"
	_ "github.com/cgpu-project/cgpu/pkg/stat"
	_ "github.com/cgpu-project/cgpu/pkg/statfmt"
	_ "github.com/cgpu-project/cgpu/pkg/schedstat"
	_ "github.com/cgpu-project/cgpu/pkg/settings"
	_ "github.com/docker/cli/cli/config"
	_ "github.com/docker/cli/cli/context/docker"
	_ "github.com/docker/cli/cli/context/store"
	"github.com/moby/moby/client"
)

func main() {
	if len(os.Args) > 1 {
		return
	}
	c, err := client.New(client.FromEnv)
	if err != nil {
		panic(err)
	}
	l, err := c.ContainerList(context.Background(), client.ContainerListOptions{All: true})
	fmt.Println(len(l.Items), err)
}
