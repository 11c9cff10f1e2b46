package statfmt

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func sample(t *testing.T) *stat.Snapshot { return stat.Build(stattest.Sample(t)) }

func write(t *testing.T, s *stat.Snapshot, o Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := o.Validate(); err != nil {
		t.Fatalf("%+v: %v", o, err)
	}
	if err := Write(&b, s, o); err != nil {
		t.Fatalf("%+v: %v", o, err)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := "testdata/" + name + ".golden"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s changed (go test -update rewrites it):\n%s", path, got)
	}
}

// The tables are golden files: every column of every row, the orphan's hint.
func TestTables(t *testing.T) {
	golden(t, "table", write(t, sample(t), Options{}))
	if write(t, sample(t), Options{Format: "table"}) != write(t, sample(t), Options{}) {
		t.Error(`--format table is not the default`)
	}
	golden(t, "watch", write(t, sample(t), Options{Watch: true}))
	golden(t, "notrunc", write(t, sample(t), Options{NoTrunc: true, Format: "table {{.ID}}\t{{.Name}}"}))
}

func TestTemplates(t *testing.T) {
	for format, want := range map[string]string{
		"{{.Name}} {{.GPU}} {{.Compute}} {{.Util}}":          "web 0 17.5%..100% 55.5%\ndb 0 82.5% 0%\n<orphan> 1 - -\n",
		"{{.ID}}:{{.State}}:{{.Policy}}":                     "aaaaaaaaaaaa:running:weight\nbbbbbbbbbbbb:exited:weight\ncccccccccccc:orphan:native\n",
		"{{.Memsize}} {{.MemUsed}} {{.MemPerc}}":             "6GiB 3GiB 50.00%\n4GiB 0B 0.00%\n1GiB 256MiB 25.00%\n",
		"{{.MemBar}}":                                        "[#####.....] 50.00%\n[..........] 0.00%\n[###.......] 25.00%\n",
		"{{.Weight}}/{{.HighPrio}}/{{.Procs}}/{{.Instance}}": "1/false/2/aaaaaaaaaaaa\n3/true/0/bbbbbbbbbbbb\n2/false/1/cccccccccccc\n",
		"table {{.Name}}\t{{.MemUsage}}":                     "NAME       MEM USAGE / LIMIT\nweb        3GiB / 6GiB\ndb         0B / 4GiB\n<orphan>   256MiB / 1GiB\n",
	} {
		if got := write(t, sample(t), Options{Format: format}); got != want {
			t.Errorf("%q:\n%s\nwant\n%s", format, got, want)
		}
	}
	if got := write(t, sample(t), Options{Format: "{{.ID}}", NoTrunc: true}); !strings.HasPrefix(got, stattest.IDWeb+"\n") {
		t.Errorf("--no-trunc: %q", got)
	}
}

// {{json .}} is one object a row, as docker stats prints them.
func TestJSONRows(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(write(t, sample(t), Options{Format: "{{json .}}"})), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d rows", len(lines))
	}
	var row map[string]string
	if err := json.Unmarshal([]byte(lines[2]), &row); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Compute": "-", "GPU": "1", "HighPrio": "false", "ID": "cccccccccccc", "Instance": "cccccccccccc",
		"MemBar": "[###.......] 25.00%", "MemPerc": "25.00%", "MemUsage": "256MiB / 1GiB", "MemUsed": "256MiB", "Memsize": "1GiB",
		"Name": "<orphan>", "Policy": "native", "Procs": "1", "State": "orphan", "Util": "-", "Weight": "2"}
	if !reflect.DeepEqual(row, want) {
		t.Errorf("row %v\nwant %v", row, want)
	}
}

// --format json is the whole document on one line, the schema's.
func TestJSONDocument(t *testing.T) {
	out := write(t, sample(t), Options{Format: "json"})
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Errorf("not one line: %q", out)
	}
	if err := stattest.Validate([]byte(out)); err != nil {
		t.Fatal(err)
	}
	var back stat.Snapshot
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	if s := sample(t); !reflect.DeepEqual(&back, s) {
		t.Errorf("the document does not read back as the snapshot:\n%+v\n%+v", back, *s)
	}
}

func TestBadTemplate(t *testing.T) {
	for _, f := range []string{"{{.Name", "{{.NoSuchField}}"} {
		var b bytes.Buffer
		err := Options{Format: f}.Validate()
		if err == nil {
			err = Write(&b, sample(t), Options{Format: f})
		}
		if err == nil || !strings.Contains(err.Error(), "template") {
			t.Errorf("%q: %v", f, err)
		}
	}
}

func TestNotes(t *testing.T) {
	s := sample(t)
	want := []string{`orphan cccccccccccc on GPU 1: no container has this ID (its runtime delete never ran); remove it with: docker cgpu set --remove-orphan cccccccccccc, or: echo "del 1 cccccccccccc" > /proc/cgpu_km/inst_ctl`}
	if got := Notes(s); !reflect.DeepEqual(got, want) {
		t.Errorf("kernel tree: %q", got)
	}
	in := stattest.Sample(t)
	in.Kernel, in.Root = false, "/var/lib/cgpu/sim/proc"
	want[0] = want[0][:strings.Index(want[0], ", or:")]
	if got := Notes(stat.Build(in)); !reflect.DeepEqual(got, want) {
		t.Errorf("simulated tree (no inst_ctl to write): %q", got)
	}
	in.Containers, in.DockerErr = nil, errFake("Cannot connect to the Docker daemon")
	if got := Notes(stat.Build(in)); len(got) != 1 || got[0] != "Docker could not list containers, so names are unknown and no orphan is told: Cannot connect to the Docker daemon" {
		t.Errorf("without Docker: %q", got)
	}
}

type errFake string

func (e errFake) Error() string { return string(e) }
