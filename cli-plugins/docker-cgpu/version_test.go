package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/inject/injecttest"
	"github.com/cgpu-project/cgpu/pkg/node"
	"github.com/cgpu-project/cgpu/pkg/version"
)

func TestRuntimeVersion(t *testing.T) {
	for _, tc := range []struct {
		out, want string
		ok        bool
	}{
		{"cgpu-runtime version 7.1.0\nrunc version 1.1.12\ncommit: v1.1.12\n", "7.1.0", true},
		{"cgpu-runtime version 7.1.0", "7.1.0", true},
		{"cgpu-runtime version " + version.Unknown + "\nrunc version 1.1.12\n", version.Unknown, true},
		// A runtime from before it printed its own line passes --version on to runc.
		{"runc version 1.1.12\ncommit: v1.1.12\n", "", false},
		{"cgpu-runtime version \n", "", false},
		{"", "", false},
	} {
		v, err := runtimeVersion([]byte(tc.out))
		if v != tc.want || (err == nil) != tc.ok {
			t.Errorf("%q: %q %v, want %q ok=%v", tc.out, v, err, tc.want, tc.ok)
		}
	}
}

func TestRuntimePart(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, script, version, problem string }{
		// The next runtime missing: the runtime's own line is there all the same.
		{"no next runtime", "echo 'cgpu-runtime version 7.1.0'; echo 'cgpu: no runc' >&2; exit 1", "7.1.0", ""},
		{"an old runtime", "echo 'runc version 1.1.12'", "", `unknown: --version begins "runc version 1.1.12"`},
		{"fails", "echo 'cgpu: bad config' >&2; exit 1", "", "unknown: --version failed: exit status 1: cgpu: bad config"},
		{"gets docker's arguments", `[ "$1 $2 $3" = "--cgpu-config /c --version" ] && echo "cgpu-runtime version 7.1.0"`, "7.1.0", ""},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		os.WriteFile(path, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755)
		p := runtimePart(context.Background(), path, []string{"--cgpu-config", "/c"})
		if p.Version != tc.version || !strings.HasPrefix(p.Problem, tc.problem) || (tc.problem == "") != (p.Problem == "") {
			t.Errorf("%s: %+v", tc.name, p)
		}
	}
	if p := runtimePart(context.Background(), filepath.Join(dir, "none"), nil); p.Problem != "not installed" {
		t.Errorf("a missing runtime: %+v", p)
	}
}

// dkmsVersion is PACKAGE_VERSION of kmod/dkms.conf, which the build stamps everywhere.
func dkmsVersion(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "kmod", "dkms.conf"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PACKAGE_VERSION="(.+)"$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("dkms.conf has no PACKAGE_VERSION")
	}
	return string(m[1])
}

func TestLibcgpuVersion(t *testing.T) {
	hook, sim := injecttest.Built(t)
	if v, err := libcgpuVersion(hook); err != nil || v != dkmsVersion(t) {
		t.Errorf("libcgpu.so: %q %v, want dkms.conf's %q", v, err, dkmsVersion(t))
	}
	if _, err := libcgpuVersion(filepath.Join(sim, "libcuda.so.1")); err == nil || !strings.Contains(err.Error(), "no cgpu_version") {
		t.Errorf("a library without the symbol: %v", err)
	}
	notELF := filepath.Join(t.TempDir(), "libcgpu.so")
	os.WriteFile(notELF, []byte("not a library\n"), 0o644)
	if _, err := libcgpuVersion(notELF); err == nil {
		t.Error("a file that is no ELF gave a version")
	}
	missing := filepath.Join(t.TempDir(), "libcgpu.so")
	if _, err := libcgpuVersion(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if p := hookPart(node.Config{Hook: missing}, nil); p.Problem != "not installed" || p.Version != "" || p.Path != missing {
		t.Errorf("a missing hook: %+v", p)
	}
}

func TestModulePart(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proc")
	cfg := node.Config{Sim: true, SimGPUs: 1, SimMemMiB: 100, ProcfsRoot: root}
	if p := modulePart(cfg, nil); p.Version != "" || !strings.HasPrefix(p.Problem, "not created yet") {
		t.Errorf("a simulated tree not made yet: %+v", p)
	}
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "version"), []byte("7.1.0\n"), 0o444)
	if p := modulePart(cfg, nil); p.Version != "7.1.0" || p.Path != filepath.Join(root, "version") {
		t.Errorf("a simulated tree: %+v", p)
	}
	if p := modulePart(node.Config{}, errors.New("/etc/cgpu/runtime.json: bad")); p.Problem != "/etc/cgpu/runtime.json: bad" {
		t.Errorf("no configuration: %+v", p)
	}
}

func testReport(module string) versionReport {
	return newVersionReport(
		part{Name: "docker-cgpu", Path: "/p/docker-cgpu"}.with("7.1.0", nil),
		part{Name: "cgpu-runtime", Path: "/usr/local/bin/cgpu-runtime"}.with("7.1.0", nil),
		part{Name: "cgpu_km", Path: "/proc/cgpu_km/version"}.with(module, nil),
		part{Name: "libcgpu", Path: "/usr/local/lib/cgpu/libcgpu.so"}.with("", errors.New("not installed")),
		nil)
}

func TestVersionReport(t *testing.T) {
	r := testReport("7.1.0")
	if r.Mixed || len(r.Notes) != 0 {
		t.Errorf("one version and a missing part: mixed=%v %q", r.Mixed, r.Notes)
	}
	r = testReport("7.0.0")
	if !r.Mixed || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "(7.0.0, 7.1.0)") {
		t.Errorf("two versions: mixed=%v %q", r.Mixed, r.Notes)
	}
	if p := (part{}).with(version.Unknown, nil); p.Version != "" || p.Problem != version.Unknown {
		t.Errorf("a build without make: %+v", p)
	}
	unknown := newVersionReport(part{}.with(version.Unknown, nil), part{}.with("7.1.0", nil), part{}, part{}, nil)
	if unknown.Mixed {
		t.Error("a build without make counts as a version")
	}
}

func TestVersionOutput(t *testing.T) {
	r := testReport("7.0.0")
	for _, tc := range []struct{ format, want string }{
		{"", `PART          VERSION        PATH
docker-cgpu   7.1.0          /p/docker-cgpu
cgpu-runtime  7.1.0          /usr/local/bin/cgpu-runtime
cgpu_km       7.0.0          /proc/cgpu_km/version
libcgpu       not installed  /usr/local/lib/cgpu/libcgpu.so
note: the parts are of different versions (7.0.0, 7.1.0): a node upgraded halfway; from the tree of one release, upgrade.sh replaces cgpu_km and install.sh the others
`},
		{"{{.Module.Version}} {{.Hook.Problem}} {{.Mixed}}", "7.0.0 not installed true\n"},
	} {
		tmpl, err := versionTemplate(tc.format)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := r.write(&b, tmpl); err != nil || b.String() != tc.want {
			t.Errorf("%q: %v\n%s\nwant\n%s", tc.format, err, b.String(), tc.want)
		}
	}
	tmpl, _ := versionTemplate("json")
	var b bytes.Buffer
	if err := r.write(&b, tmpl); err != nil {
		t.Fatal(err)
	}
	var back versionReport
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Module.Version != "7.0.0" || back.Hook.Problem != "not installed" || !back.Mixed {
		t.Errorf("json: %v %s", err, b.String())
	}
	if _, err := versionTemplate("{{.Nope"); err == nil {
		t.Error("a broken template was taken")
	}
}
