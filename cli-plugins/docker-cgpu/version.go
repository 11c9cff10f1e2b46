package main

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"text/template"
	"time"

	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/version"
	"github.com/docker/cli/cli"
	"github.com/docker/cli/cli/command"
	"github.com/docker/cli/cli/command/formatter"
	"github.com/docker/cli/templates"
	"github.com/moby/moby/client"
	"github.com/spf13/cobra"
)

// libcgpuVersionSymbol is the data symbol libcgpu carries its version in
// (libcgpu/src/version.c).
const libcgpuVersionSymbol = "cgpu_version"

func newVersionCommand(dockerCLI command.Cli) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version [OPTIONS]",
		Short: "Show the version of each part of cgpu installed on this node",
		Long: `Show the version of each part of cgpu as installed on this node: this plugin; the cgpu
runtime (the path Docker has for its "cgpu" runtime, else /usr/local/bin/cgpu-runtime);
the loaded cgpu_km module (the version file of the node's cgpu tree, /proc/cgpu_km); and
libcgpu, the hook bound into containers (read from the file, which is not loaded).
A part that is missing or unreadable says why. Parts of different versions, a node
upgraded halfway, are pointed out.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVersion(cmd.Context(), dockerCLI, format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "", `Format output: "table" (default), "json" or a Go TEMPLATE applied to the report (docs/cli.md)`)
	return cmd
}

func runVersion(ctx context.Context, dockerCLI command.Cli, format string) error {
	tmpl, err := versionTemplate(format)
	if err != nil {
		return lineUsage("--format: " + err.Error())
	}
	var notes []string
	cfg, cfgErr := node.Load("", os.Getenv)
	path, args, err := dockerRuntime(ctx, dockerCLI)
	switch {
	case err != nil:
		notes = append(notes, fmt.Sprintf("Docker could not be asked for its cgpu runtime (%v): %s is the default path", err, node.DefaultRuntime))
	case path == "":
		notes = append(notes, "Docker has no cgpu runtime (daemon.json's runtimes): install.sh registers it")
	}
	if path == "" {
		path = node.DefaultRuntime
	}
	self, _ := os.Executable()
	r := newVersionReport(
		part{Name: "docker-cgpu", Path: self}.with(version.Version, nil),
		runtimePart(ctx, path, args),
		modulePart(cfg, cfgErr),
		hookPart(cfg, cfgErr),
		notes)
	return cgpuStatusErr(r.write(dockerCLI.Out(), tmpl))
}

// part is one part of cgpu as installed.
type part struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Version is "" when it is not known; Problem then says why.
	Version string `json:"version"`
	Problem string `json:"problem,omitempty"`
}

// with is p of version v, or, when v cannot be had, why: err, or v itself when it is the
// version of a build that did not go through make.
func (p part) with(v string, err error) part {
	switch {
	case err != nil:
		p.Problem = err.Error()
	case v == version.Unknown:
		p.Problem = v
	default:
		p.Version = v
	}
	return p
}

// versionReport is what docker cgpu version prints (docs/cli.md has its schema).
type versionReport struct {
	Plugin  part `json:"plugin"`
	Runtime part `json:"runtime"`
	Module  part `json:"module"`
	Hook    part `json:"hook"`
	// Mixed: the parts whose version is known are not all of one version.
	Mixed bool     `json:"mixed"`
	Notes []string `json:"notes"`
}

func newVersionReport(plugin, runtime, module, hook part, notes []string) versionReport {
	r := versionReport{Plugin: plugin, Runtime: runtime, Module: module, Hook: hook}
	var versions []string
	for _, p := range r.parts() {
		if p.Version != "" && !slices.Contains(versions, p.Version) {
			versions = append(versions, p.Version)
		}
	}
	if len(versions) > 1 {
		r.Mixed = true
		slices.Sort(versions)
		notes = append(notes, fmt.Sprintf("the parts are of different versions (%s): a node upgraded halfway; from the tree of one release, upgrade.sh replaces cgpu_km and install.sh the others",
			strings.Join(versions, ", ")))
	}
	r.Notes = append([]string{}, notes...)
	return r
}

func (r versionReport) parts() []part { return []part{r.Plugin, r.Runtime, r.Module, r.Hook} }

// versionTemplate is the template --format asks for; nil is the table.
func versionTemplate(format string) (*template.Template, error) {
	switch {
	case format == "" || format == formatter.TableFormatKey:
		return nil, nil
	case formatter.Format(format).IsJSON():
		format = formatter.JSONFormat
	}
	return templates.Parse(format)
}

func (r versionReport) write(w io.Writer, tmpl *template.Template) error {
	if tmpl != nil {
		if err := tmpl.Execute(w, r); err != nil {
			return err
		}
		_, err := fmt.Fprintln(w)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PART\tVERSION\tPATH")
	for _, p := range r.parts() {
		v := p.Version
		if v == "" {
			v = p.Problem
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, v, p.Path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		if _, err := fmt.Fprintf(w, "note: %s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// dockerRuntime is the program and arguments Docker runs as its cgpu runtime; "" when
// Docker has none.
func dockerRuntime(ctx context.Context, dockerCLI command.Cli) (string, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := dockerCLI.Client().Info(ctx, client.InfoOptions{})
	if err != nil {
		return "", nil, err
	}
	rt := info.Info.Runtimes[cgpuRuntime]
	return rt.Path, rt.Args, nil
}

// runtimePart runs the runtime as Docker would, with --version.
func runtimePart(ctx context.Context, path string, args []string) part {
	p := part{Name: "cgpu-runtime", Path: path}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, append(slices.Clone(args), "--version")...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// The first line is there even when the runtime after it fails.
	v, perr := runtimeVersion(out)
	switch {
	case perr == nil:
		return p.with(v, nil)
	case errors.Is(err, fs.ErrNotExist):
		return p.with("", errors.New("not installed"))
	case err != nil:
		if msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n"); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return p.with("", fmt.Errorf("unknown: --version failed: %w", err))
	}
	return p.with("", perr)
}

// runtimeVersion reads the version off the first line of cgpu-runtime --version.
func runtimeVersion(out []byte) (string, error) {
	first, _, _ := strings.Cut(string(out), "\n")
	v, ok := strings.CutPrefix(first, version.RuntimePrefix)
	if !ok || v == "" {
		return "", fmt.Errorf("unknown: --version begins %q, not %q (a cgpu-runtime older than its version line?)", first, version.RuntimePrefix+"X")
	}
	return v, nil
}

// modulePart is the version of the module the node's cgpu tree belongs to.
func modulePart(cfg node.Config, cfgErr error) part {
	p := part{Name: "cgpu_km"}
	if cfgErr != nil {
		return p.with("", cfgErr)
	}
	p.Path = filepath.Join(cfg.Root(), "version")
	t, err := node.OpenTree(cfg)
	if errors.Is(err, procfs.ErrNoModule) {
		return p.with("", errors.New("not loaded"))
	}
	if err != nil {
		return p.with("", err)
	}
	v, err := readModuleVersion(t.Root())
	if errors.Is(err, fs.ErrNotExist) && !t.Kernel() {
		return p.with("", errors.New("not created yet: the simulated tree is made by its first change"))
	}
	return p.with(v, err)
}

// hookPart is the version of the libcgpu the runtime binds into containers.
func hookPart(cfg node.Config, cfgErr error) part {
	p := part{Name: "libcgpu"}
	if cfgErr != nil {
		return p.with("", cfgErr)
	}
	p.Path = cfg.HookPath()
	v, err := libcgpuVersion(p.Path)
	if errors.Is(err, fs.ErrNotExist) {
		err = errors.New("not installed")
	}
	return p.with(v, err)
}

// libcgpuVersion reads the version libcgpu exports from the file: loading the library
// would run its code and hook this process.
func libcgpuVersion(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return "", fmt.Errorf("unknown: %w", err)
	}
	for _, s := range syms {
		if s.Name != libcgpuVersionSymbol {
			continue
		}
		// A version is a few bytes; a size past that is a file that is not libcgpu.
		if s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) || s.Size == 0 || s.Size > 256 {
			break
		}
		sec := f.Sections[s.Section]
		if sec.Type == elf.SHT_NOBITS || s.Value < sec.Addr {
			break
		}
		b := make([]byte, s.Size)
		if _, err := sec.ReadAt(b, int64(s.Value-sec.Addr)); err != nil {
			return "", fmt.Errorf("unknown: reading %s: %w", libcgpuVersionSymbol, err)
		}
		if v, _, ok := bytes.Cut(b, []byte{0}); ok {
			return string(v), nil
		}
		break
	}
	return "", fmt.Errorf("unknown: no %s string in the file (a libcgpu older than its version symbol?)", libcgpuVersionSymbol)
}
