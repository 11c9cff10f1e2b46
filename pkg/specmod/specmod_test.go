package specmod

import (
	"encoding/json"
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
				"ALIYUN_COM_GPU_VISIBLE_DEVICES=0", "CGPU_MEM_LIMIT_BYTES=6337173913", "NVIDIA_VISIBLE_DEVICES=0"}},
		{"given values stay", []string{"ALIYUN_COM_GPU_MEM_CONTAINER=6", "ALIYUN_COM_GPU_MEM_DEV=15", "NVIDIA_VISIBLE_DEVICES=all"},
			[]string{"ALIYUN_COM_GPU_MEM_CONTAINER=6", "ALIYUN_COM_GPU_MEM_DEV=15", "NVIDIA_VISIBLE_DEVICES=all",
				"ALIYUN_COM_GPU_VISIBLE_DEVICES=0,1", "CGPU_MEM_LIMIT_BYTES=6337173913,6337173913"}},
		// getenv takes the first entry: every one of the image's must go.
		{"the plan's bytes replace the image's", []string{"CGPU_MEM_LIMIT_BYTES=1", "ALIYUN_COM_GPU_MEM_CONTAINER=6", "CGPU_MEM_LIMIT_BYTES=2", "ALIYUN_COM_GPU_VISIBLE_DEVICES=1"},
			[]string{"ALIYUN_COM_GPU_MEM_CONTAINER=6", "ALIYUN_COM_GPU_VISIBLE_DEVICES=1",
				"ALIYUN_COM_GPU_MEM_DEV=15", "CGPU_MEM_LIMIT_BYTES=6337173913", "NVIDIA_VISIBLE_DEVICES=1"}},
		{"disabled is untouched", []string{"ALIYUN_COM_GPU_MEM_CONTAINER=0"}, []string{"ALIYUN_COM_GPU_MEM_CONTAINER=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(t)
			s.SetEnv(tc.env)
			if err := Apply(s, plan(t, tc.env), Injection{}); err != nil {
				t.Fatal(err)
			}
			got, _ := s.Env()
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("env %v\nwant %v", got, tc.want)
			}
		})
	}
}

// decode reads the rewritten spec back as plain JSON.
func decode(t *testing.T, s *oci.Spec) map[string]any {
	t.Helper()
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const docker = `{
  "process": {"args": ["sh"], "env": ["PATH=/bin", "ALIYUN_COM_GPU_MEM_CONTAINER=6"]},
  "root": {"path": "rootfs"},
  "hooks": {"prestart": [{"path": "/usr/bin/nvidia-container-runtime-hook", "args": ["prestart"]}]},
  "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"},
             {"destination": "/data", "type": "bind", "source": "/srv/data", "options": ["rbind", "rprivate"], "x-future": 1}],
  "linux": {"devices": [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}],
            "resources": {"devices": [{"allow": false, "access": "rwm"}], "memory": {"limit": 1048576}},
            "namespaces": [{"type": "mount"}]}
}`

var inj = Injection{
	Binds: []Bind{
		{Source: "/usr/local/lib/cgpu/libcgpu.so", Dest: "/usr/local/lib/cgpu/libcgpu.so"},
		{Source: "/run/b/cgpu-ld.so.preload", Dest: "/etc/ld.so.preload"},
		{Source: "/run/cgpu-sim/state", Dest: "/run/cgpu-sim/state", Writable: true},
	},
	Devices: []Device{
		{Path: "/dev/cgpu", Major: 246, Minor: 0},
		{Path: "/dev/nvidiactl", Major: 195, Minor: 255},
		{Path: "/dev/nvidia1", Major: 195, Minor: 1},
	},
}

func TestInjectAddsAfterWhatIsThere(t *testing.T) {
	s, err := oci.Parse([]byte(docker))
	if err != nil {
		t.Fatal(err)
	}
	env, _ := s.Env()
	if err := Apply(s, plan(t, env), inj); err != nil {
		t.Fatal(err)
	}
	var before map[string]any
	json.Unmarshal([]byte(docker), &before)
	got := decode(t, s)
	for _, k := range []string{"hooks", "root"} {
		if !reflect.DeepEqual(got[k], before[k]) {
			t.Errorf("%s changed: %v", k, got[k])
		}
	}
	mounts := got["mounts"].([]any)
	if !reflect.DeepEqual(mounts[:2], before["mounts"].([]any)) {
		t.Errorf("the spec's own mounts changed: %v", mounts[:2])
	}
	want := []any{
		map[string]any{"destination": "/usr/local/lib/cgpu/libcgpu.so", "type": "bind", "source": "/usr/local/lib/cgpu/libcgpu.so",
			"options": []any{"bind", "ro", "nosuid", "nodev"}},
		map[string]any{"destination": "/etc/ld.so.preload", "type": "bind", "source": "/run/b/cgpu-ld.so.preload",
			"options": []any{"bind", "ro", "nosuid", "nodev"}},
		map[string]any{"destination": "/run/cgpu-sim/state", "type": "bind", "source": "/run/cgpu-sim/state",
			"options": []any{"bind", "nosuid", "nodev", "noexec"}},
	}
	if !reflect.DeepEqual(mounts[2:], want) {
		t.Errorf("added mounts %v\nwant %v", mounts[2:], want)
	}
	linux := got["linux"].(map[string]any)
	dev := []any{
		map[string]any{"path": "/dev/fuse", "type": "c", "major": 10.0, "minor": 229.0},
		map[string]any{"path": "/dev/cgpu", "type": "c", "major": 246.0, "minor": 0.0, "fileMode": 438.0, "uid": 0.0, "gid": 0.0},
		map[string]any{"path": "/dev/nvidiactl", "type": "c", "major": 195.0, "minor": 255.0, "fileMode": 438.0, "uid": 0.0, "gid": 0.0},
		map[string]any{"path": "/dev/nvidia1", "type": "c", "major": 195.0, "minor": 1.0, "fileMode": 438.0, "uid": 0.0, "gid": 0.0},
	}
	if !reflect.DeepEqual(linux["devices"], dev) {
		t.Errorf("devices %v", linux["devices"])
	}
	res := linux["resources"].(map[string]any)
	rules := []any{
		map[string]any{"allow": false, "access": "rwm"},
		map[string]any{"allow": true, "type": "c", "major": 246.0, "minor": 0.0, "access": "rwm"},
		map[string]any{"allow": true, "type": "c", "major": 195.0, "minor": 255.0, "access": "rwm"},
		map[string]any{"allow": true, "type": "c", "major": 195.0, "minor": 1.0, "access": "rwm"},
	}
	if !reflect.DeepEqual(res["devices"], rules) || !reflect.DeepEqual(res["memory"], map[string]any{"limit": 1048576.0}) {
		t.Errorf("resources %v", res)
	}
	if !reflect.DeepEqual(linux["namespaces"], before["linux"].(map[string]any)["namespaces"]) {
		t.Errorf("namespaces changed: %v", linux["namespaces"])
	}
	env, _ = s.Env()
	if env[0] != "PATH=/bin" || env[1] != "ALIYUN_COM_GPU_MEM_CONTAINER=6" || len(env) != 6 {
		t.Errorf("env %v", env)
	}
}

// A retried create on the same bundle, or a privileged container that already has the
// host's /dev/cgpu, gets no second mount or device node.
func TestInjectTwiceAddsOnce(t *testing.T) {
	s, _ := oci.Parse([]byte(`{"process": {"env": ["ALIYUN_COM_GPU_MEM_CONTAINER=1"]},
		"linux": {"devices": [{"path": "/dev/cgpu", "type": "c", "major": 246, "minor": 0}]}}`))
	env, _ := s.Env()
	p := plan(t, env)
	for range 2 {
		if err := Apply(s, p, inj); err != nil {
			t.Fatal(err)
		}
	}
	got := decode(t, s)
	if n := len(got["mounts"].([]any)); n != len(inj.Binds) {
		t.Errorf("%d mounts, want %d", n, len(inj.Binds))
	}
	if n := len(got["linux"].(map[string]any)["devices"].([]any)); n != len(inj.Devices) {
		t.Errorf("%d devices, want the one there was and the two added", n)
	}
}

func TestInjectNothingWhenOff(t *testing.T) {
	for _, env := range [][]string{{"CGPU_DISABLE=true", "ALIYUN_COM_GPU_MEM_CONTAINER=6"}, {"ALIYUN_COM_GPU_MEM_CONTAINER=0"}} {
		s, _ := oci.Parse([]byte(docker))
		s.SetEnv(env)
		before, _ := s.Marshal()
		if err := Apply(s, plan(t, env), inj); err != nil {
			t.Fatal(err)
		}
		if after, _ := s.Marshal(); string(after) != string(before) {
			t.Errorf("%v: spec changed:\n%s", env, after)
		}
	}
}

func TestInjectMalformedSpec(t *testing.T) {
	for _, bad := range []string{
		`{"process": {"env": ["ALIYUN_COM_GPU_MEM_CONTAINER=1"]}, "mounts": {}}`,
		`{"process": {"env": ["ALIYUN_COM_GPU_MEM_CONTAINER=1"]}, "mounts": [3]}`,
		`{"process": {"env": ["ALIYUN_COM_GPU_MEM_CONTAINER=1"]}, "linux": []}`,
		`{"process": {"env": ["ALIYUN_COM_GPU_MEM_CONTAINER=1"]}, "linux": {"devices": [1]}}`,
		`{"process": {"env": ["ALIYUN_COM_GPU_MEM_CONTAINER=1"]}, "linux": {"resources": {"devices": {}}}}`,
	} {
		s, err := oci.Parse([]byte(bad))
		if err != nil {
			t.Fatal(err)
		}
		env, _ := s.Env()
		if err := Apply(s, plan(t, env), inj); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
