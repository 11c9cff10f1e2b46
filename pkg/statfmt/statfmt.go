// Package statfmt prints a stat snapshot the way docker's own commands print theirs,
// through the docker CLI's formatter: a table by default, "json", or a Go template
// ("table TEMPLATE" for a table of it) applied to each instance, as docker stats does.
package statfmt

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/docker/cli/cli/command/formatter"
)

const (
	// DefaultInstanceFormat is the instance table's columns.
	DefaultInstanceFormat = "table {{.ID}}\t{{.Name}}\t{{.GPU}}\t{{.MemUsage}}\t{{.MemPerc}}\t{{.Procs}}\t{{.Weight}}\t{{.HighPrio}}\t{{.Compute}}\t{{.Util}}\t{{.State}}"
	// WatchInstanceFormat puts a bar of memory used against memsize in the table.
	WatchInstanceFormat = "table {{.ID}}\t{{.Name}}\t{{.GPU}}\t{{.MemBar}}\t{{.MemUsage}}\t{{.Procs}}\t{{.Weight}}\t{{.HighPrio}}\t{{.Compute}}\t{{.Util}}\t{{.State}}"
	// DefaultGPUFormat is the GPU table's columns.
	DefaultGPUFormat = "table {{.Index}}\t{{.Name}}\t{{.Policy}}\t{{.MaxInst}}\t{{.FreeWeight}}\t{{.PrioRatio}}\t{{.MemGiven}}\t{{.MemUsed}}\t{{.Instances}}\t{{.Util}}"
	// noValue stands where no figure is known or none applies; nothing is made up.
	noValue = "-"
)

// Options say how to print.
type Options struct {
	// Format is "", "table", "json", "table TEMPLATE" or "TEMPLATE".
	Format string
	// NoTrunc prints full container IDs.
	NoTrunc bool
	// Watch prints the memory bars (the --watch screen).
	Watch bool
}

// Validate refuses a format that cannot print before anything is read.
func (o Options) Validate() error {
	if o.Format == "" || o.Format == formatter.TableFormatKey || formatter.Format(o.Format).IsJSON() {
		return nil
	}
	var b strings.Builder
	ctx := formatter.Context{Output: &b, Format: formatter.Format(o.Format)}
	return ctx.Write(&instanceContext{}, func(func(formatter.SubContext) error) error { return nil })
}

// Write prints s.
func Write(w io.Writer, s *stat.Snapshot, o Options) error {
	switch {
	case formatter.Format(o.Format).IsJSON():
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case o.Format == "" || o.Format == formatter.TableFormatKey:
		return writeDefault(w, s, o)
	}
	return writeInstances(w, s, o.Format, o.NoTrunc)
}

// writeDefault is the GPU table, the instance table, then a line for each thing an
// operator must know: Docker could not be asked, or an orphan and how to remove it.
func writeDefault(w io.Writer, s *stat.Snapshot, o Options) error {
	if err := writeGPUs(w, s); err != nil {
		return err
	}
	fmt.Fprintln(w)
	format := DefaultInstanceFormat
	if o.Watch {
		format = WatchInstanceFormat
	}
	if err := writeInstances(w, s, format, o.NoTrunc); err != nil {
		return err
	}
	for _, line := range Notes(s) {
		fmt.Fprintln(w, line)
	}
	return nil
}

// Notes are the lines below the tables.
func Notes(s *stat.Snapshot) []string {
	var out []string
	if s.DockerError != "" {
		out = append(out, "Docker could not list containers, so names are unknown and no orphan is told: "+s.DockerError)
	}
	for _, g := range s.GPUs {
		for _, in := range g.Instances {
			if !in.Orphan {
				continue
			}
			line := fmt.Sprintf("orphan %s on GPU %d: no container has this ID (its runtime delete never ran); "+
				"remove it with: docker cgpu set --remove-orphan %s", in.ID, g.Index, in.ID)
			if s.Kernel {
				line += fmt.Sprintf(", or: echo %q > %s", strings.TrimSpace(procfs.InstCtlDel(g.Index, in.ID)), filepath.Join(s.Root, "inst_ctl"))
			}
			out = append(out, line)
		}
	}
	return out
}

func writeGPUs(w io.Writer, s *stat.Snapshot) error {
	ctx := formatter.Context{Output: w, Format: DefaultGPUFormat}
	hdr := &gpuContext{}
	hdr.Header = formatter.SubHeaderContext{"Index": "GPU", "Name": "NAME", "Policy": "POLICY", "MaxInst": "MAX INST",
		"FreeWeight": "FREE WEIGHT", "PrioRatio": "PRIO RATIO", "MemGiven": "MEM GIVEN / TOTAL", "MemUsed": "MEM USED",
		"Instances": "INSTANCES", "Util": "GPU %"}
	return ctx.Write(hdr, func(format func(formatter.SubContext) error) error {
		for i := range s.GPUs {
			if err := format(&gpuContext{g: &s.GPUs[i]}); err != nil {
				return err
			}
		}
		return nil
	})
}

func writeInstances(w io.Writer, s *stat.Snapshot, format string, noTrunc bool) error {
	ctx := formatter.Context{Output: w, Format: formatter.Format(format)}
	return ctx.Write(&instanceContext{HeaderContext: formatter.HeaderContext{Header: instanceHeader}},
		func(format func(formatter.SubContext) error) error {
			for gi := range s.GPUs {
				g := &s.GPUs[gi]
				for ii := range g.Instances {
					if err := format(&instanceContext{g: g, in: &g.Instances[ii], noTrunc: noTrunc}); err != nil {
						return err
					}
				}
			}
			return nil
		})
}

// pct prints a percentage known, or noValue.
func pct(v *float64) string {
	if v == nil {
		return noValue
	}
	return strconv.FormatFloat(*v, 'f', -1, 64) + "%"
}
