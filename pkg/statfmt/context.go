package statfmt

import (
	"strconv"
	"strings"

	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/docker/cli/cli/command/formatter"
	"github.com/docker/go-units"
)

// barWidth is the memory bar's inside, in characters.
const barWidth = 10

var instanceHeader = formatter.SubHeaderContext{
	"ID": formatter.ContainerIDHeader, "Name": formatter.NameHeader, "GPU": "GPU", "Memsize": "MEMSIZE",
	"MemUsed": "MEM USED", "MemUsage": "MEM USAGE / LIMIT", "MemPerc": "MEM %", "MemBar": "MEM",
	"Procs": "PROCS", "Weight": "WEIGHT", "HighPrio": "HIGH PRIO", "Compute": "COMPUTE", "Util": "GPU %",
	"State": formatter.StateHeader, "Policy": "POLICY", "Instance": "INSTANCE",
}

// instanceContext is one row: an instance, with its GPU. Its methods are the template's
// fields ({{.Name}}), its header the table's.
type instanceContext struct {
	formatter.HeaderContext
	g       *stat.GPU
	in      *stat.Instance
	noTrunc bool
}

func (c *instanceContext) MarshalJSON() ([]byte, error) { return formatter.MarshalJSON(c) }

// ID is the container's ID, 12 characters unless --no-trunc; an orphan's is its
// instance name, all that is left of it.
func (c *instanceContext) ID() string {
	if c.in.Container == nil {
		return c.in.ID
	}
	if c.noTrunc {
		return c.in.Container.ID
	}
	return formatter.TruncateID(c.in.Container.ID)
}

// Instance is the instance's name in the tree.
func (c *instanceContext) Instance() string { return c.in.ID }

func (c *instanceContext) Name() string {
	switch {
	case c.in.Container != nil:
		return c.in.Container.Name
	case c.in.Orphan:
		return "<orphan>"
	}
	return noValue
}

func (c *instanceContext) State() string {
	switch {
	case c.in.Container != nil:
		return c.in.Container.State
	case c.in.Orphan:
		return "orphan"
	}
	return noValue
}

func (c *instanceContext) GPU() string     { return strconv.Itoa(c.in.GPU) }
func (c *instanceContext) Policy() string  { return c.g.PolicyName }
func (c *instanceContext) Memsize() string { return size(c.in.Memsize) }
func (c *instanceContext) MemUsed() string { return size(c.in.Used) }
func (c *instanceContext) MemUsage() string {
	return size(c.in.Used) + " / " + size(c.in.Memsize)
}

func (c *instanceContext) MemPerc() string {
	return strconv.FormatFloat(c.memFraction()*100, 'f', 2, 64) + "%"
}

// MemBar is memory used against memsize, as a bar.
func (c *instanceContext) MemBar() string {
	n := int(c.memFraction()*barWidth + 0.5)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", barWidth-n) + "] " + c.MemPerc()
}

func (c *instanceContext) memFraction() float64 {
	if c.in.Memsize == 0 {
		return 0
	}
	return min(float64(c.in.Used)/float64(c.in.Memsize), 1)
}

func (c *instanceContext) Procs() string  { return strconv.Itoa(len(c.in.Processes)) }
func (c *instanceContext) Weight() string { return strconv.Itoa(c.in.Weight) }
func (c *instanceContext) HighPrio() string {
	return strconv.FormatBool(c.in.HighPrio)
}

// Compute is the share when all are busy, then the limit when they differ ("33.33%..100%").
func (c *instanceContext) Compute() string {
	if c.in.ComputeShare == nil {
		return noValue
	}
	if *c.in.ComputeShare == *c.in.ComputeLimit {
		return pct(c.in.ComputeShare)
	}
	return pct(c.in.ComputeShare) + ".." + pct(c.in.ComputeLimit)
}

func (c *instanceContext) Util() string { return pct(c.in.Utilization) }

// gpuContext is one row of the GPU table.
type gpuContext struct {
	formatter.HeaderContext
	g *stat.GPU
}

func (c *gpuContext) MarshalJSON() ([]byte, error) { return formatter.MarshalJSON(c) }
func (c *gpuContext) Index() string                { return strconv.Itoa(c.g.Index) }
func (c *gpuContext) Name() string {
	if c.g.Name == "" {
		return noValue
	}
	return c.g.Name
}
func (c *gpuContext) Policy() string     { return strconv.Itoa(c.g.Policy) + " " + c.g.PolicyName }
func (c *gpuContext) MaxInst() string    { return strconv.Itoa(c.g.MaxInst) }
func (c *gpuContext) FreeWeight() string { return strconv.Itoa(c.g.FreeWeight) }
func (c *gpuContext) PrioRatio() string  { return strconv.Itoa(c.g.PrioRatio) + "%" }
func (c *gpuContext) MemGiven() string {
	return size(c.g.MemoryGiven) + " / " + size(c.g.MemoryTotal)
}
func (c *gpuContext) MemUsed() string   { return size(c.g.MemoryUsed) }
func (c *gpuContext) Instances() string { return strconv.Itoa(len(c.g.Instances)) }
func (c *gpuContext) Util() string      { return pct(c.g.Utilization) }

// size prints bytes as docker stats does (binary units).
func size(b uint64) string { return units.BytesSize(float64(b)) }
