package specmod

import (
	"reflect"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/oci"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

func spec(t *testing.T) *oci.Spec {
	t.Helper()
	s, err := oci.Parse([]byte(`{"process": {"args": ["sh"], "env": []}}`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func plan(t *testing.T, env []string) alloc.Plan {
	t.Helper()
	in, err := alloc.ParseEnv(alloc.EnvMap(env))
	if err != nil {
		t.Fatal(err)
	}
	gpus, _ := gpu.Sim{Count: 2, MemMiB: gpu.SimDefaultMemMiB}.GPUs()
	p, err := alloc.Decide(in, gpus, procfs.NewState(2))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"placed GPU and MEM_DEV are written", []string{"PATH=/bin", "ALIYUN_COM_GPU_MEM_CONTAINER=6"},
			[]string{"PATH=/bin", "ALIYUN_COM_GPU_MEM_CONTAINER=6", "ALIYUN_COM_GPU_MEM_DEV=15",
				"ALIYUN_COM_GPU_VISIBLE_DEVICES=0", "NVIDIA_VISIBLE_DEVICES=0"}},
		{"given values stay", []string{"ALIYUN_COM_GPU_MEM_CONTAINER=6", "ALIYUN_COM_GPU_MEM_DEV=15", "NVIDIA_VISIBLE_DEVICES=all"},
			[]string{"ALIYUN_COM_GPU_MEM_CONTAINER=6", "ALIYUN_COM_GPU_MEM_DEV=15", "NVIDIA_VISIBLE_DEVICES=all",
				"ALIYUN_COM_GPU_VISIBLE_DEVICES=0,1"}},
		{"disabled is untouched", []string{"ALIYUN_COM_GPU_MEM_CONTAINER=0"}, []string{"ALIYUN_COM_GPU_MEM_CONTAINER=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(t)
			s.SetEnv(tc.env)
			if err := Apply(s, plan(t, tc.env)); err != nil {
				t.Fatal(err)
			}
			got, _ := s.Env()
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("env %v\nwant %v", got, tc.want)
			}
		})
	}
}
