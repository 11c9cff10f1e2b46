// Package stat gathers what "docker cgpu stat" shows: one snapshot of a node's cgpu tree,
// each instance's meminfo, the GPUs' names, the containers Docker knows and, when NVML
// can tell, utilisation. Build is the pure part (the figures from what was read); Gather
// reads. The snapshot's JSON has a published schema (stattest/stat.schema.json).
package stat

import (
	"math"
	"time"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/policy"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

// SchemaVersion changes whenever a field of the JSON document changes meaning, type or
// name, or goes away; added fields raise it too, as the schema is closed.
const SchemaVersion = 1

// Snapshot is one reading of the node.
type Snapshot struct {
	SchemaVersion int       `json:"schema_version"`
	Time          time.Time `json:"time"`
	// Root is the tree read; Kernel tells whether cgpu_km keeps it.
	Root      string `json:"root"`
	Kernel    bool   `json:"kernel"`
	Simulated bool   `json:"simulated"`
	// DefaultMemsize is default_memsize: what a container that asks for no memory gets.
	DefaultMemsize uint64 `json:"default_memsize_bytes"`
	// DockerError says why containers could not be listed ("" when they were): names are
	// then unknown and no instance is called an orphan.
	DockerError string `json:"docker_error"`
	GPUs        []GPU  `json:"gpus"`
}

// GPU is one GPU directory of the tree, with the inventory's name for it.
type GPU struct {
	Index      int    `json:"index"`
	UUID       string `json:"uuid"`
	Name       string `json:"name"`
	Policy     int    `json:"policy"`
	PolicyName string `json:"policy_name"`
	MaxInst    int    `json:"max_inst"`
	FreeWeight int    `json:"free_weight"`
	PrioRatio  int    `json:"prio_ratio"`
	// MemoryTotal is the GPU's memory (0 when the inventory does not list the GPU),
	// MemoryGiven the sum of its instances' memsize, MemoryUsed what their processes hold.
	MemoryTotal uint64 `json:"memory_total_bytes"`
	MemoryGiven uint64 `json:"memory_given_bytes"`
	MemoryUsed  uint64 `json:"memory_used_bytes"`
	// Utilization is NVML's GPU utilisation; nil when not known.
	Utilization *float64   `json:"utilization_percent"`
	Instances   []Instance `json:"instances"`
}

// Instance is one container's instance on a GPU.
type Instance struct {
	GPU int `json:"gpu"`
	// ID is the instance's name in the tree: the container id's first 12 characters.
	ID string `json:"id"`
	// Container is Docker's container of that id; nil for an orphan or when Docker
	// could not be asked.
	Container *Container `json:"container"`
	// Orphan: Docker has no container of this id (its delete never reached the runtime).
	Orphan    bool      `json:"orphan"`
	Memsize   uint64    `json:"memsize_bytes"`
	Used      uint64    `json:"used_bytes"`
	Free      uint64    `json:"free_bytes"`
	Processes []Process `json:"processes"`
	Weight    int       `json:"weight"`
	HighPrio  bool      `json:"highprio"`
	// ComputeShare and ComputeLimit are the instance's share of the GPU's time when all
	// its instances are busy and at most (policy.Shares); nil when the policy sets none.
	ComputeShare *float64 `json:"compute_share_percent"`
	ComputeLimit *float64 `json:"compute_limit_percent"`
	// Utilization is the GPU utilisation of the instance's processes; nil when not known.
	Utilization *float64 `json:"utilization_percent"`
}

// Container is what Docker says about an instance's container.
type Container struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"`
}

// Process is one process holding memory on the instance (a meminfo PID line).
type Process struct {
	PID  int    `json:"pid"`
	Used uint64 `json:"used_bytes"`
}

// Utilization is what NVML says about one GPU.
type Utilization struct {
	GPU float64
	// PerPID is each process's share; a process missing from it used none. Nil when
	// NVML cannot tell per process.
	PerPID map[int]float64
}

// Input is everything read for one snapshot.
type Input struct {
	Time      time.Time
	Root      string
	Kernel    bool
	Simulated bool
	State     *procfs.State
	// Meminfo is each instance's meminfo, by GPU and instance name; an instance without
	// one was removed while the tree was read, and is left out.
	Meminfo map[MeminfoKey]procfs.Meminfo
	GPUs    []gpu.GPU
	// Containers is Docker's list, nil with DockerErr when it could not be had.
	Containers []Container
	DockerErr  error
	// Util is NVML's reading by GPU index; a GPU missing from it is not known.
	Util map[int]Utilization
}

// MeminfoKey names an instance across GPUs.
type MeminfoKey struct {
	GPU int
	ID  string
}

// Build turns what was read into the snapshot.
func Build(in Input) *Snapshot {
	s := &Snapshot{SchemaVersion: SchemaVersion, Time: in.Time, Root: in.Root, Kernel: in.Kernel,
		Simulated: in.Simulated, DefaultMemsize: in.State.DefaultMemsize, GPUs: []GPU{}}
	if in.DockerErr != nil {
		s.DockerError = in.DockerErr.Error()
	}
	byShort := make(map[string]*Container, len(in.Containers))
	for i := range in.Containers {
		byShort[procfs.ShortID(in.Containers[i].ID)] = &in.Containers[i]
	}
	for gi := range in.State.GPUs {
		gs := &in.State.GPUs[gi]
		g := GPU{Index: gs.Index, Policy: gs.Policy, PolicyName: policy.Name(gs.Policy), MaxInst: gs.MaxInst,
			FreeWeight: gs.FreeWeight, PrioRatio: gs.PrioRatio, MemoryGiven: gs.MemUsed(), Instances: []Instance{}}
		for _, inv := range in.GPUs {
			if inv.Index == gs.Index {
				g.UUID, g.Name, g.MemoryTotal = inv.UUID, inv.Name, inv.MemoryBytes
			}
		}
		util, utilKnown := in.Util[gs.Index]
		if utilKnown {
			g.Utilization = percent(util.GPU)
		}
		compute := policy.Shares(gs)
		for ii, pin := range gs.Instances {
			mi, ok := in.Meminfo[MeminfoKey{gs.Index, pin.ID}]
			if !ok {
				continue
			}
			inst := Instance{GPU: gs.Index, ID: pin.ID, Memsize: pin.Memsize, Used: mi.Held(), Free: mi.Free,
				Processes: make([]Process, len(mi.Procs)), Weight: pin.Weight, HighPrio: pin.HighPrio}
			for i, p := range mi.Procs {
				inst.Processes[i] = Process{PID: p.PID, Used: p.Mem}
			}
			if c := byShort[pin.ID]; c != nil {
				cc := *c
				inst.Container = &cc
			} else {
				inst.Orphan = in.DockerErr == nil
			}
			if c := compute[ii]; c.Known {
				inst.ComputeShare, inst.ComputeLimit = percent(c.Share), percent(c.Limit)
			}
			if utilKnown && util.PerPID != nil {
				sum := 0.0
				for _, p := range mi.Procs {
					sum += util.PerPID[p.PID]
				}
				inst.Utilization = percent(math.Min(sum, 100))
			}
			g.MemoryUsed += inst.Used
			g.Instances = append(g.Instances, inst)
		}
		s.GPUs = append(s.GPUs, g)
	}
	return s
}

// percent rounds to 2 decimals, so the JSON reads 33.33 rather than 33.333333333333336.
func percent(v float64) *float64 {
	r := math.Round(v*100) / 100
	return &r
}
