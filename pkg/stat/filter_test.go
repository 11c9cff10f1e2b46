package stat

import (
	"strings"
	"testing"
)

func ids(s *Snapshot) string {
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
		f    Filter
		want string
	}{
		{Filter{}, "aaaaaaaaaaaa bbbbbbbbbbbb cccccccccccc"},
		{Filter{GPUs: []int{1}}, "cccccccccccc"},
		{Filter{Containers: []string{"db"}}, "bbbbbbbbbbbb"},
		{Filter{Containers: []string{"aaaa"}}, "aaaaaaaaaaaa"},
		{Filter{Containers: []string{idWeb}}, "aaaaaaaaaaaa"},
		{Filter{Containers: []string{"ccc", "web"}}, "aaaaaaaaaaaa cccccccccccc"},
		{Filter{GPUs: []int{0}, Containers: []string{"db"}}, "bbbbbbbbbbbb"},
	} {
		s := Build(sample(t))
		if err := tc.f.Apply(s); err != nil || ids(s) != tc.want {
			t.Errorf("%+v: %q, %v; want %q", tc.f, ids(s), err, tc.want)
		}
	}
	// A GPU shown without instances stays, with its figures.
	in := sample(t)
	in.State.GPUs[1].Instances = nil
	s := Build(in)
	if err := (Filter{GPUs: []int{1}}).Apply(s); err != nil || ids(s) != "gpu-only" {
		t.Errorf("empty GPU: %q, %v", ids(s), err)
	}
}

func TestFilterRefusals(t *testing.T) {
	for _, tc := range []struct {
		f    Filter
		want string
	}{
		{Filter{GPUs: []int{2}}, `--gpu 2: the cgpu tree has no GPU 2 (it has GPUs 0..1)`},
		{Filter{Containers: []string{"nosuch"}}, `container "nosuch": no cgpu instance on the GPUs shown`},
		{Filter{GPUs: []int{1}, Containers: []string{"web"}}, `container "web": no cgpu instance on the GPUs shown`},
		{Filter{Containers: []string{""}}, `container "": empty; give a name or an ID`},
	} {
		s := Build(sample(t))
		if err := tc.f.Apply(s); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.f, err, tc.want)
		}
	}
	in := sample(t)
	in.State.GPUs[0].Instances[1].ID = "aaaaaaaaaaab"
	in.Meminfo[MeminfoKey{0, "aaaaaaaaaaab"}] = in.Meminfo[MeminfoKey{0, idDB[:12]}]
	in.Containers[1].ID = "aaaaaaaaaaab" + idDB[12:]
	s := Build(in)
	if err := (Filter{Containers: []string{"aaaa"}}).Apply(s); err == nil || !strings.Contains(err.Error(), "matches 2 containers") {
		t.Errorf("ambiguous prefix: %v", err)
	}
}
