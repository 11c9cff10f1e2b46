package runcargs

import (
	"reflect"
	"strings"
	"testing"
)

const id = "5d41402abc4b2a76b9719d911017c592aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want Args
	}{
		{"containerd create",
			[]string{"--cgpu-config", "/t/runtime.json", "--root", "/var/run/docker/runtime-runc/moby", "--log", "/run/x/log.json", "--log-format", "json", "--systemd-cgroup",
				"create", "--bundle", "/run/b", "--pid-file", "/run/b/init.pid", "--console-socket", "/tmp/pty.sock", id},
			Args{Config: "/t/runtime.json", Command: "create", ID: id, Bundle: "/run/b", PidFile: "/run/b/init.pid", Log: "/run/x/log.json", LogFormat: "json",
				Global: []string{"--root", "/var/run/docker/runtime-runc/moby", "--log", "/run/x/log.json", "--log-format", "json", "--systemd-cgroup"},
				Pass: []string{"--root", "/var/run/docker/runtime-runc/moby", "--log", "/run/x/log.json", "--log-format", "json", "--systemd-cgroup",
					"create", "--bundle", "/run/b", "--pid-file", "/run/b/init.pid", "--console-socket", "/tmp/pty.sock", id}}},
		{"inline values and short bundle",
			[]string{"--log=/l", "--cgpu-config=/c", "create", "-b", "/b", "--no-pivot", id},
			Args{Config: "/c", Command: "create", ID: id, Bundle: "/b", Log: "/l",
				Global: []string{"--log=/l"}, Pass: []string{"--log=/l", "create", "-b", "/b", "--no-pivot", id}}},
		{"bundle by =", []string{"create", "--bundle=/b", id},
			Args{Command: "create", ID: id, Bundle: "/b", Pass: []string{"create", "--bundle=/b", id}}},
		{"no bundle", []string{"create", id},
			Args{Command: "create", ID: id, Pass: []string{"create", id}}},
		{"delete force", []string{"--root", "/r", "delete", "--force", id},
			Args{Command: "delete", ID: id, Global: []string{"--root", "/r"}, Pass: []string{"--root", "/r", "delete", "--force", id}}},
		{"exec keeps its own args", []string{"exec", "--process", "/p.json", "--detach", id},
			Args{Command: "exec", ID: id, Pass: []string{"exec", "--process", "/p.json", "--detach", id}}},
		{"version", []string{"--cgpu-config", "/c", "--version"},
			Args{Config: "/c", Global: []string{"--version"}, Pass: []string{"--version"}, Version: true}},
		{"version, short", []string{"-v"},
			Args{Global: []string{"-v"}, Pass: []string{"-v"}, Version: true}},
		{"double dash", []string{"delete", "--", id},
			Args{Command: "delete", ID: id, Pass: []string{"delete", "--", id}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, args := range [][]string{{"--cgpu-config"}, {"--root"}, {"create", "--bundle"}} {
		if _, err := Parse(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// FuzzParse: the next runtime sees exactly the arguments given, in order, less cgpu's own
// option and its value.
func FuzzParse(f *testing.F) {
	f.Add("--root\x00/r\x00create\x00--bundle\x00/b\x00" + id)
	f.Add("--cgpu-config=/c\x00delete\x00-f\x00" + id)
	f.Add("--cgpu-config\x00/c\x00--log\x00/l\x00create\x00" + id)
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		a, err := Parse(args)
		if err != nil {
			return
		}
		p := 0
		for i := 0; i < len(args); i++ {
			if p < len(a.Pass) && args[i] == a.Pass[p] {
				p++
				continue
			}
			name, _, inline, ok := option(args[i])
			if !ok || name != ConfigFlag {
				t.Fatalf("%q dropped from %q (next runtime gets %q)", args[i], args, a.Pass)
			}
			if !inline {
				i++
			}
		}
		if p != len(a.Pass) {
			t.Fatalf("next runtime gets %q, not a subsequence of %q", a.Pass, args)
		}
	})
}
