// Package stat gathers what "docker cgpu stat" shows: one snapshot of a node's cgpu tree,
// each instance's meminfo, the GPUs' names, the containers Docker knows and utilisation:
// cgpu_km's scheduler's (root on a kernel tree) or NVML's, when either can tell. Build is the pure part (the figures from what was read); Gather
// reads. The snapshot's JSON has a published schema (stattest/stat.schema.json).
package stat

import (
	"math"
	"time"

	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/policy"
	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// SchemaVersion changes whenever a field of the JSON document changes meaning, type or
// name, or goes away; added fields raise it too, as the schema is closed.
const SchemaVersion = 3

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
	// Enforcement is cgpu_km's enforcement at the NVIDIA driver's boundary as its tree
	// says it ("on (driver V)", "off (why)"); "" when not asked for (enforce=0) or not
	// cgpu_km's tree.
	Enforcement string `json:"enforcement"`
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
	// Utilization is NVML's GPU utilisation, else the sum of its instances' from the
	// scheduler (at most 100); nil when not known. UtilizationSource says which:
	// "nvml", "scheduler", or "" when not known.
	Utilization       *float64   `json:"utilization_percent"`
	UtilizationSource string     `json:"utilization_source"`
	Instances         []Instance `json:"instances"`
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
	// Utilization is the GPU utilisation of the instance's processes: the scheduler's
	// (the GPU time they reported at slice ends in the last complete second, at most
	// 100), else NVML's; nil when not known. UtilizationSource: "scheduler", "nvml" or "".
	Utilization       *float64 `json:"utilization_percent"`
	UtilizationSource string   `json:"utilization_source"`
	// Sched is what cgpu_km's scheduler counted since the instance was added; nil when
	// it could not be read (not root, another tree, a module without the call).
	Sched *Sched `json:"sched"`
}

// Sched is an instance's counters in cgpu_km's scheduler.
type Sched struct {
	// GPUSeconds is the GPU time its processes reported at slice ends, ChargedSeconds
	// the time it held the GPU, drains included.
	GPUSeconds     float64 `json:"gpu_seconds"`
	ChargedSeconds float64 `json:"charged_seconds"`
	Grants         uint64  `json:"grants"`
	Takebacks      uint64  `json:"takebacks"`
}

// Utilisation sources.
const (
	SourceNVML      = "nvml"
	SourceScheduler = "scheduler"
)

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
	// Enforcement is procfs.ReadEnforcement's reading.
	Enforcement string
	State       *procfs.State
	// Meminfo is each instance's meminfo, by GPU and instance name; an instance without
	// one was removed while the tree was read, and is left out.
	Meminfo map[MeminfoKey]procfs.Meminfo
	GPUs    []gpu.GPU
	// Containers is Docker's list, nil with DockerErr when it could not be had.
	Containers []Container
	DockerErr  error
	// Util is NVML's reading by GPU index; a GPU missing from it is not known.
	Util map[int]Utilization
	// Sched is the scheduler's figures by instance; an instance missing from it is not
	// known.
	Sched map[MeminfoKey]uapi.InstStat
}

// MeminfoKey names an instance across GPUs.
type MeminfoKey struct {
	GPU int
	ID  string
}

// Build turns what was read into the snapshot.
func Build(in Input) *Snapshot {
	s := &Snapshot{SchemaVersion: SchemaVersion, Time: in.Time, Root: in.Root, Kernel: in.Kernel,
		Simulated: in.Simulated, DefaultMemsize: in.State.DefaultMemsize, Enforcement: in.Enforcement, GPUs: []GPU{}}
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
			g.Utilization, g.UtilizationSource = percent(util.GPU), SourceNVML
		}
		schedSum, schedKnown := 0.0, false
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
			st, stKnown := in.Sched[MeminfoKey{gs.Index, pin.ID}]
			if stKnown {
				inst.Sched = &Sched{GPUSeconds: seconds(st.Sched.Used_ns), ChargedSeconds: seconds(st.Sched.Charged_ns),
					Grants: st.Sched.Grants, Takebacks: st.Sched.Takebacks}
			}
			switch {
			case stKnown && st.Sched.Policy != uapi.PolicyNative:
				// Exact and per container: preferred to NVML's per-process samples.
				u := math.Min(float64(st.Last_second_used_ns)/1e7, 100)
				inst.Utilization, inst.UtilizationSource = percent(u), SourceScheduler
				schedSum, schedKnown = schedSum+u, true
			case utilKnown && util.PerPID != nil:
				sum := 0.0
				for _, p := range mi.Procs {
					sum += util.PerPID[p.PID]
				}
				inst.Utilization, inst.UtilizationSource = percent(math.Min(sum, 100)), SourceNVML
			}
			g.MemoryUsed += inst.Used
			g.Instances = append(g.Instances, inst)
		}
		if !utilKnown && schedKnown {
			g.Utilization, g.UtilizationSource = percent(math.Min(schedSum, 100)), SourceScheduler
		}
		s.GPUs = append(s.GPUs, g)
	}
	return s
}

// seconds rounds ns to microseconds, in seconds.
func seconds(ns uint64) float64 {
	return float64(ns/1000) / 1e6
}

// percent rounds to 2 decimals, so the JSON reads 33.33 rather than 33.333333333333336.
func percent(v float64) *float64 {
	r := math.Round(v*100) / 100
	return &r
}
