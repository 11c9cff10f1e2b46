package stat_test

import (
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
)

func ids(s *stat.Snapshot) string {
	var out []string
	for _, g := range s.GPUs {
		for _, in := range g.Instances {
			out = append(out, in.ID)
		}
		if len(g.Instances) == 0 {
			out = append(out, "gpu-only")
		}
	}
	return strings.Join(out, " ")
}

func TestFilter(t *testing.T) {
	for _, tc := range []struct {
		f    stat.Filter
		want string
	}{
		{stat.Filter{}, "aaaaaaaaaaaa bbbbbbbbbbbb cccccccccccc"},
		{stat.Filter{GPUs: []int{1}}, "cccccccccccc"},
		{stat.Filter{Containers: []string{"db"}}, "bbbbbbbbbbbb"},
		{stat.Filter{Containers: []string{"aaaa"}}, "aaaaaaaaaaaa"},
		{stat.Filter{Containers: []string{stattest.IDWeb}}, "aaaaaaaaaaaa"},
		{stat.Filter{Containers: []string{"ccc", "web"}}, "aaaaaaaaaaaa cccccccccccc"},
		{stat.Filter{GPUs: []int{0}, Containers: []string{"db"}}, "bbbbbbbbbbbb"},
	} {
		s := stat.Build(stattest.Sample(t))
		if err := tc.f.Apply(s); err != nil || ids(s) != tc.want {
			t.Errorf("%+v: %q, %v; want %q", tc.f, ids(s), err, tc.want)
		}
	}
	// A GPU shown without instances stays, with its figures.
	in := stattest.Sample(t)
	in.State.GPUs[1].Instances = nil
	s := stat.Build(in)
	if err := (stat.Filter{GPUs: []int{1}}).Apply(s); err != nil || ids(s) != "gpu-only" {
		t.Errorf("empty GPU: %q, %v", ids(s), err)
	}
}

func TestFilterRefusals(t *testing.T) {
	for _, tc := range []struct {
		f    stat.Filter
		want string
	}{
		{stat.Filter{GPUs: []int{2}}, `--gpu=2: unknown GPU 2; the cgpu tree has GPUs 0..1`},
		{stat.Filter{Containers: []string{"nosuch"}}, `container "nosuch": no cgpu instance on the GPUs shown`},
		{stat.Filter{GPUs: []int{1}, Containers: []string{"web"}}, `container "web": no cgpu instance on the GPUs shown`},
		{stat.Filter{Containers: []string{""}}, `container "": empty; give a name or an ID`},
	} {
		s := stat.Build(stattest.Sample(t))
		if err := tc.f.Apply(s); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.f, err, tc.want)
		}
	}
	in := stattest.Sample(t)
	in.State.GPUs[0].Instances[1].ID = "aaaaaaaaaaab"
	in.Meminfo[stat.MeminfoKey{GPU: 0, ID: "aaaaaaaaaaab"}] = in.Meminfo[stat.MeminfoKey{GPU: 0, ID: stattest.IDDB[:12]}]
	in.Containers[1].ID = "aaaaaaaaaaab" + stattest.IDDB[12:]
	s := stat.Build(in)
	if err := (stat.Filter{Containers: []string{"aaaa"}}).Apply(s); err == nil || !strings.Contains(err.Error(), "matches 2 containers") {
		t.Errorf("ambiguous prefix: %v", err)
	}
}
