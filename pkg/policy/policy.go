// Package policy is the compute scheduler's contract as an operator sees it: the names of
// the six policies, and the share of a GPU's time each instance gets under its GPU's
// policy, weights and high-priority flags (docs/scheduler.md, "Each policy's exact rule"
// and "High priority").
package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cgpu-project/cgpu/pkg/procfs"
	"github.com/cgpu-project/cgpu/pkg/uapi"
)

// Sized by the header, so a policy added there without a name here does not build.
var names = [uapi.PolicyMax + 1]string{"fair-share", "preemptive", "weight", "fixed", "soft", "native"}

// Name is the policy's name; a number the tool does not know is shown as the number, so a
// newer kernel's policy is never mislabelled.
func Name(p int) string {
	if p >= 0 && p < len(names) {
		return names[p]
	}
	return strconv.Itoa(p)
}

// Parse reads a policy given as its number or its name.
func Parse(s string) (int, error) {
	for i, n := range names {
		if s == n || s == strconv.Itoa(i) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("not a policy; want 0..%d or one of %s", uapi.PolicyMax, strings.Join(names[:], ", "))
}

// Compute is an instance's share of its GPU's time, in percent.
type Compute struct {
	// Share is what the instance gets when every instance of the GPU is busy.
	Share float64
	// Limit is the most it can get: when the others are idle, or have no work.
	Limit float64
	// Known is false when the scheduler sets no figure: under native the driver's own
	// time slicing decides, and a policy this tool does not know is not guessed at.
	// Weight 0 is always known: no compute.
	Known bool
}

// Shares gives each instance of g, in g.Instances order, its compute by the scheduler's
// rule for g's policy:
//
//	policy          Share (all busy)       Limit (others idle)
//	0 fair-share    1/max_inst             1/max_inst (a hard cap)
//	1 preemptive    1/N                    100%
//	2 weight        w/Σw                   w/(w + Σw of the others that are not high priority)
//	3 fixed         w/max_inst             w/max_inst (a hard cap)
//	4 soft          w/Σw                   100%
//	5 native        -                      -
//
// N and Σw count the instances of weight > 0; weight 0 gets nothing under every policy.
// High priority (prio_ratio p, H instances of weight > 0 flagged): each of them gets p/H
// of the time ahead of the rotation and the rotation shares the rest, so it gets
// p/H + (1-p) x its share when all are busy and p + (1-p) x its limit alone; the others
// get (1-p) x their share when all are busy. An idle high-priority instance takes no part
// in scheduling, hence the weight policy's limit leaving the others out.
func Shares(g *procfs.GPUState) []Compute {
	out := make([]Compute, len(g.Instances))
	n, sum, normalSum, hp := 0, 0, 0, 0
	for _, in := range g.Instances {
		if in.Weight <= 0 {
			continue
		}
		n++
		sum += in.Weight
		if in.HighPrio {
			hp++
		} else {
			normalSum += in.Weight
		}
	}
	p := 0.0
	if hp > 0 {
		p = float64(g.PrioRatio) / 100
	}
	for i, in := range g.Instances {
		if in.Weight <= 0 {
			out[i].Known = true
			continue
		}
		w := float64(in.Weight)
		var share, limit float64
		switch g.Policy {
		case uapi.PolicyFair:
			share, limit = 1/float64(g.MaxInst), 1/float64(g.MaxInst)
		case uapi.PolicyPreempt:
			share, limit = 1/float64(n), 1
		case uapi.PolicyWeight:
			others := normalSum
			if !in.HighPrio {
				others -= in.Weight
			}
			share, limit = w/float64(sum), w/(w+float64(others))
		case uapi.PolicyFixed:
			share, limit = w/float64(g.MaxInst), w/float64(g.MaxInst)
		case uapi.PolicySoft:
			share, limit = w/float64(sum), 1
		default:
			continue
		}
		if in.HighPrio {
			share, limit = p/float64(hp)+(1-p)*share, p+(1-p)*limit
		} else {
			share *= 1 - p
		}
		out[i] = Compute{Share: 100 * share, Limit: 100 * limit, Known: true}
	}
	return out
}
