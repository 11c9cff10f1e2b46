package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/gpu"
	"github.com/cgpu-project/cgpu/pkg/procfs"
)

func TestNewRequest(t *testing.T) {
	for _, tc := range []struct {
		name      string
		o         options
		env       map[string]string
		fromFlags map[string]string
		sel       *alloc.Selection
		err       string
	}{
		{"flags become variables", options{gpuMem: "3,1", weight: "2", highPrio: true}, nil,
			map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "3,1", "ALIYUN_COM_GPU_SCHD_WEIGHT": "2", "ALIYUN_COM_GPU_HIGH_PRIO": "1"}, nil, ""},
		{"env alone", options{}, map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "6"}, map[string]string{}, nil, ""},
		{"--gpus count", options{gpuMem: "2", gpus: "2"}, nil, map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "2"},
			&alloc.Selection{Mode: alloc.SelectCount, Count: 2, From: "--gpus 2"}, ""},
		{"--no-cgpu", options{noCGPU: true}, map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "6"},
			map[string]string{"CGPU_DISABLE": "true"}, nil, ""},
		{"mem twice", options{gpuMem: "2"}, map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "6"}, nil, nil,
			"--gpu-mem and -e ALIYUN_COM_GPU_MEM_CONTAINER are both given"},
		{"weight twice", options{weight: "2"}, map[string]string{"ALIYUN_COM_GPU_SCHD_WEIGHT": "2"}, nil, nil, "--weight and -e"},
		{"gpus twice", options{gpus: "all"}, map[string]string{"ALIYUN_COM_GPU_VISIBLE_DEVICES": "0"}, nil, nil, "--gpus and -e ALIYUN_COM_GPU_VISIBLE_DEVICES"},
		{"bad --gpu-mem", options{gpuMem: "3,,4"}, nil, nil, nil, `ALIYUN_COM_GPU_MEM_CONTAINER="3,,4": item 2: empty`},
		{"bad --gpus", options{gpuMem: "1", gpus: "lots"}, nil, nil, nil, "--gpus lots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := newRequest(tc.o, tc.env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.fromFlags, tc.fromFlags) {
				t.Errorf("fromFlags %v, want %v", r.fromFlags, tc.fromFlags)
			}
			if tc.sel != nil && !reflect.DeepEqual(r.intent.GPUs, *tc.sel) {
				t.Errorf("GPUs %+v, want %+v", r.intent.GPUs, *tc.sel)
			}
			for k, v := range tc.env {
				if r.given[k] != v {
					t.Errorf("given lost %s", k)
				}
			}
		})
	}
}

func TestRuntimeFor(t *testing.T) {
	on, off := alloc.Plan{Enabled: true}, alloc.Plan{Reason: "off"}
	for _, tc := range []struct {
		p    alloc.Plan
		user string
		want string
	}{
		{on, "", "cgpu"}, {on, "cgpu", "cgpu"}, {off, "", "cgpu"}, {off, "runc", "runc"}, {on, "runc", ""},
	} {
		got, err := runtimeFor(tc.p, tc.user)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("runtimeFor(enabled=%v, %q) = %q, %v; want %q", tc.p.Enabled, tc.user, got, err, tc.want)
		}
	}
}

func TestDeviceRequest(t *testing.T) {
	on := alloc.Plan{Enabled: true, GPUs: []alloc.Assignment{{Index: 2}, {Index: 0}}}
	for _, tc := range []struct {
		p    alloc.Plan
		sel  *alloc.Selection
		want string
	}{
		{on, nil, `"device=2,0"`},
		{alloc.Plan{}, nil, ""},
		{alloc.Plan{}, &alloc.Selection{Mode: alloc.SelectAll}, "all"},
		{alloc.Plan{}, &alloc.Selection{Mode: alloc.SelectCount, Count: 2}, "2"},
		{alloc.Plan{}, &alloc.Selection{Mode: alloc.SelectList, List: []string{"GPU-a"}}, `"device=GPU-a"`},
	} {
		if got := deviceRequest(tc.p, tc.sel); got != tc.want {
			t.Errorf("deviceRequest = %q, want %q", got, tc.want)
		}
	}
}

// The --dry-run --format json document: the fields docs/cli.md promises, with their types.
func TestPlanJSONSchema(t *testing.T) {
	gpus, _ := gpu.Sim{Count: 2, MemMiB: gpu.SimDefaultMemMiB}.GPUs()
	r, err := newRequest(options{gpuMem: "6"}, map[string]string{"ALIYUN_COM_GPU_MEM_DEV": "15"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := alloc.Decide(r.intent, gpus, procfs.NewState(2))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := newPlanOutput(p, "cgpu", p.Visible(r.given), "", true).writeJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["cgpu"] != true || doc["runtime"] != "cgpu" || doc["simulated"] != true || doc["device_request"] != "" {
		t.Errorf("top level %v", doc)
	}
	env := doc["env"].(map[string]any)
	for k, v := range map[string]string{"ALIYUN_COM_GPU_MEM_CONTAINER": "6", "ALIYUN_COM_GPU_MEM_DEV": "15",
		"ALIYUN_COM_GPU_VISIBLE_DEVICES": "0", "NVIDIA_VISIBLE_DEVICES": "0"} {
		if env[k] != v {
			t.Errorf("env[%s] = %v, want %s", k, env[k], v)
		}
	}
	g := doc["gpus"].([]any)[0].(map[string]any)
	if g["index"] != 0.0 || g["uuid"] != gpu.SimUUID(0) || g["memory_bytes"] != 6337173913.0 {
		t.Errorf("gpus[0] = %v", g)
	}
	if label := doc["labels"].(map[string]any)[planLabel].(string); !strings.Contains(label, `"memory_bytes":6337173913`) {
		t.Errorf("label %s", label)
	}
	buf.Reset()
	newPlanOutput(alloc.Plan{Reason: "off"}, "cgpu", map[string]string{}, "", true).writeJSON(&buf)
	if !strings.Contains(buf.String(), `"gpus": []`) || !strings.Contains(buf.String(), `"reason": "off"`) {
		t.Errorf("disabled plan: %s", buf.String())
	}
}

func TestDockerSettings(t *testing.T) {
	got := dockerSettings("cgpu", map[string]string{planLabel: "{}"},
		map[string]string{"NVIDIA_VISIBLE_DEVICES": "0", "ALIYUN_COM_GPU_MEM_CONTAINER": "6"}, `"device=0"`)
	want := [][2]string{{"runtime", "cgpu"}, {"label", planLabel + "={}"}, {"env", "ALIYUN_COM_GPU_MEM_CONTAINER=6"},
		{"env", "NVIDIA_VISIBLE_DEVICES=0"}, {"gpus", `"device=0"`}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}
