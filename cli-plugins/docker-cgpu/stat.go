package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/cgpu-project/cgpu/pkg/metrics"
	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/schedstat"
	"github.com/cgpu-project/cgpu/pkg/settings"
	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/statfmt"
	"github.com/docker/cli/cli"
	"github.com/docker/cli/cli/command"
	"github.com/moby/moby/client"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
)

type statOptions struct {
	format     string
	noTrunc    bool
	gpus       string
	watch      bool
	interval   time.Duration
	prometheus bool
	listen     string
}

func newStatCommand(dockerCLI command.Cli) *cobra.Command {
	var o statOptions
	cmd := &cobra.Command{
		Use:   "stat [OPTIONS] [CONTAINER...]",
		Short: "Show the node's GPUs, their cgpu instances and what each container gets",
		Long: `Show the node's GPUs, their cgpu instances and what each container gets.

Per GPU: policy, max_inst, free weight, prio_ratio, memory given and used. Per instance:
its container (from Docker), memory used against memsize, processes, weight, high
priority, the compute share its policy gives it (when all are busy..at most), and GPU
utilisation: as root on cgpu_km's tree the scheduler's (the GPU time the container's
processes reported in the last complete second; none under native), else NVML's when it
knows it. "-" is a figure that is not known or does not apply.
Instances whose container Docker no longer has are shown as orphans, with how to remove
them.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStat(cmd.Context(), dockerCLI, o, args)
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&o.format, "format", "", `Format output: "table" (default), "json" (one document, docs/stat-set.md), "table TEMPLATE" or a Go TEMPLATE applied to each instance`)
	flags.BoolVar(&o.noTrunc, "no-trunc", false, "Do not truncate container IDs")
	flags.StringVar(&o.gpus, "gpu", "", `Only these GPUs: an index, a list such as 0,2, or "all"`)
	flags.BoolVarP(&o.watch, "watch", "w", false, "Refresh in place until q or Ctrl-C")
	flags.DurationVar(&o.interval, "interval", time.Second, "Time between refreshes with --watch")
	flags.BoolVar(&o.prometheus, "prometheus", false, "Print the figures once in the Prometheus text format")
	flags.StringVar(&o.listen, "listen", "", "Serve the figures to Prometheus on ADDR (e.g. :9400) at /metrics until Ctrl-C")
	return cmd
}

func runStat(ctx context.Context, dockerCLI command.Cli, o statOptions, args []string) error {
	fo := statfmt.Options{Format: o.format, NoTrunc: o.noTrunc, Watch: o.watch}
	switch {
	case (o.prometheus || o.listen != "") && (o.format != "" || o.watch):
		return lineUsage("--prometheus and --listen print their own format; leave out --format and --watch")
	case o.prometheus && o.listen != "":
		return lineUsage("give --prometheus (print once) or --listen ADDR (serve), not both")
	case o.interval <= 0:
		return lineUsage(fmt.Sprintf("--interval %s: must be above 0", o.interval))
	}
	if err := fo.Validate(); err != nil {
		return lineUsage("--format: " + err.Error())
	}
	f := stat.Filter{Containers: args}
	if o.gpus != "" {
		idx, all, err := settings.ParseGPUs(o.gpus)
		if err != nil {
			return lineUsage(err.Error())
		}
		if !all {
			f.GPUs = idx
		}
	}
	src, closeNVML, err := openSource(dockerCLI)
	if err != nil {
		return cgpuStatusErr(err)
	}
	defer closeNVML()
	gather := func(ctx context.Context) (*stat.Snapshot, error) {
		s, err := src.Gather(ctx)
		if err == nil {
			err = f.Apply(s)
		}
		return s, err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case o.prometheus:
		reg := metrics.NewRegistry(metrics.Collector{Gather: gather, Log: log.New(dockerCLI.Err(), "", 0)})
		return cgpuStatusErr(metrics.WriteText(dockerCLI.Out(), reg))
	case o.listen != "":
		return cgpuStatusErr(serveMetrics(ctx, dockerCLI.Err(), o.listen, gather))
	case o.watch:
		return cgpuStatusErr(watch(ctx, dockerCLI, o.interval, func(w io.Writer) error {
			s, err := gather(ctx)
			if err != nil {
				return err
			}
			return statfmt.Write(w, s, fo)
		}))
	}
	s, err := gather(ctx)
	if err != nil {
		return cgpuStatusErr(err)
	}
	if w := procfs.EnforcementWarning(s.Enforcement); w != "" {
		fmt.Fprintln(dockerCLI.Err(), "cgpu: "+w)
	}
	// One write for the whole table: docker's tabwriter writes each cell on its own.
	out := bufio.NewWriter(dockerCLI.Out())
	if err := statfmt.Write(out, s, fo); err != nil {
		return cgpuStatusErr(err)
	}
	return cgpuStatusErr(out.Flush())
}

// openSource opens the node the cgpu configuration names (the same one the runtime uses)
// and, on a real node, NVML for utilisation, to be closed when done; on cgpu_km's tree
// the scheduler's figures are read, /dev/cgpu opened for each snapshot.
func openSource(dockerCLI command.Cli) (stat.Source, func(), error) {
	cfg, err := node.Load("", os.Getenv)
	if err != nil {
		return stat.Source{}, nil, err
	}
	var lib nvml.Interface
	if !cfg.Sim {
		// Opened before the inventory, so that the inventory's own NVML session nests in
		// this one (a reference count) instead of the driver starting up twice.
		if l := nvml.New(); l.Init() == nvml.SUCCESS {
			lib = l
		}
	}
	closeNVML := func() {
		if lib != nil {
			lib.Shutdown()
		}
	}
	n, err := node.Open(cfg)
	if err != nil {
		closeNVML()
		return stat.Source{}, nil, err
	}
	src := stat.Source{Tree: n.Tree, GPUs: n.GPUs, Simulated: cfg.Sim, Now: time.Now,
		Containers: func(ctx context.Context) ([]stat.Container, error) { return dockerContainers(ctx, dockerCLI) }}
	if n.Tree.Kernel() && os.Geteuid() == 0 {
		// Only the host's root may read the scheduler's figures (CAP_SYS_ADMIN).
		src.OpenSched = func() (stat.SchedReader, error) { return schedstat.Open() }
	}
	if lib != nil {
		src.Util = stat.NVMLUtil{Lib: lib, Now: time.Now}.Read
	}
	return src, closeNVML, nil
}

// dockerContainers is every container Docker has, running or not.
func dockerContainers(ctx context.Context, dockerCLI command.Cli) ([]stat.Container, error) {
	res, err := dockerCLI.Client().ContainerList(ctx, client.ContainerListOptions{All: true})
	if err != nil {
		return nil, err
	}
	out := make([]stat.Container, len(res.Items))
	for i, c := range res.Items {
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out[i] = stat.Container{ID: c.ID, Name: name, State: string(c.State)}
	}
	return out, nil
}

// serveMetrics serves /metrics on addr until ctx ends (Ctrl-C), then shuts down cleanly.
func serveMetrics(ctx context.Context, errOut io.Writer, addr string, gather func(context.Context) (*stat.Snapshot, error)) error {
	logger := log.New(errOut, "", 0)
	reg := metrics.NewRegistry(metrics.Collector{Gather: gather, Log: logger})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: logger}))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(errOut, "cgpu: serving Prometheus metrics on http://%s/metrics (Ctrl-C stops)\n", l.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// cgpuStatusErr is a failure: one line, status 1 (nil stays nil).
func cgpuStatusErr(err error) error {
	if err == nil {
		return nil
	}
	return cli.StatusError{Status: "cgpu: " + err.Error(), StatusCode: 1}
}

// lineUsage is a command line stat or set cannot run: one line, docker's status for it.
func lineUsage(msg string) error {
	return cli.StatusError{Status: "cgpu: " + msg, StatusCode: 125}
}
