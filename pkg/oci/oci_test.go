package oci

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const sample = `{
  "ociVersion": "1.0.2-dev",
  "process": {"terminal": false, "user": {"uid": 0, "gid": 0}, "args": ["sh"], "env": ["PATH=/bin", "A=1"],
              "cwd": "/", "futureProcessField": {"x": [1, 2.5e300]}},
  "root": {"path": "/rootfs"},
  "hooks": {"prestart": [{"path": "/bin/true"}]},
  "linux": {"resources": {"devices": [{"allow": false, "access": "rwm"}]}},
  "org.example.unknown": 12345678901234567890
}`

func TestRoundTripKeepsUnknownFields(t *testing.T) {
	s, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	env, _ := s.Env()
	if !reflect.DeepEqual(env, []string{"PATH=/bin", "A=1"}) {
		t.Fatalf("env %v", env)
	}
	if err := s.SetEnv(append(env, "B=2")); err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]any
	dec := func(b []byte, v *map[string]any) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	dec([]byte(sample), &before)
	dec(out, &after)
	before["process"].(map[string]any)["env"] = []any{"PATH=/bin", "A=1", "B=2"}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("rewrite changed more than env:\n%s", out)
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{``, `[]`, `null`, `{"process": 3}`, `{"process": {"env": "A=1"}}`} {
		s, err := Parse([]byte(bad))
		if err == nil {
			_, err = s.Env()
		}
		if err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	s, err := Parse([]byte(`{"root": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	if env, err := s.Env(); err != nil || env != nil {
		t.Fatalf("no process: %v %v", env, err)
	}
	if err := s.SetEnv([]string{"A=1"}); err == nil {
		t.Fatal("SetEnv without process accepted")
	}
}

func TestLoadSave(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ConfigName), []byte(sample), 0o600)
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.SetEnv([]string{"X=1"})
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, ConfigName))
	again, err := Load(dir)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("reload: %v, mode %v", err, fi.Mode())
	}
	if env, _ := again.Env(); !reflect.DeepEqual(env, []string{"X=1"}) {
		t.Fatalf("env after save %v", env)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(m) != 0 {
		t.Fatalf("left %v", m)
	}
}

func TestRawFields(t *testing.T) {
	s, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Raw("root")) != `{"path": "/rootfs"}` || s.Raw("mounts") != nil {
		t.Fatalf("root %s, mounts %s", s.Raw("root"), s.Raw("mounts"))
	}
	s.SetRaw("mounts", json.RawMessage(`[{"destination":"/x"}]`))
	out, _ := s.Marshal()
	back, err := Parse(out)
	if err != nil || string(back.Raw("mounts")) != `[{"destination":"/x"}]` || string(back.Raw("hooks")) != `{"prestart":[{"path":"/bin/true"}]}` {
		t.Fatalf("after SetRaw: %s", out)
	}
}
