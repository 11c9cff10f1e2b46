package stat_test

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
)

var update = flag.Bool("update", false, "rewrite testdata/snapshot.golden.json")

// The document of the sample node is the golden file: a field renamed, retyped, added or
// dropped shows in review as a diff of it, and the schema test below refuses it unless
// stat.schema.json (and stat.SchemaVersion) changed with it.
func TestGoldenDocument(t *testing.T) {
	got, err := json.MarshalIndent(stat.Build(stattest.Sample(t)), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	const golden = "testdata/snapshot.golden.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("the document changed (go test -run Golden -update rewrites %s):\n%s", golden, got)
	}
	if err := stattest.Validate(got); err != nil {
		t.Fatalf("the golden document breaks the schema: %v", err)
	}
}

// The schema is closed: each kind of change to the document is refused.
func TestSchemaRefusesChanges(t *testing.T) {
	doc, err := json.Marshal(stat.Build(stattest.Sample(t)))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(m map[string]any){
		"field added":            func(m map[string]any) { m["extra"] = 1 },
		"field dropped":          func(m map[string]any) { delete(m, "docker_error") },
		"stat.GPU field dropped": func(m map[string]any) { delete(gpu0(m), "free_weight") },
		"retyped":                func(m map[string]any) { gpu0(m)["max_inst"] = "16" },
		"instance renamed": func(m map[string]any) {
			in := gpu0(m)["instances"].([]any)[0].(map[string]any)
			in["mem_size_bytes"] = in["memsize_bytes"]
			delete(in, "memsize_bytes")
		},
		"percent out of range": func(m map[string]any) {
			gpu0(m)["instances"].([]any)[0].(map[string]any)["compute_limit_percent"] = 101
		},
		"version bumped":    func(m map[string]any) { m["schema_version"] = 4 },
		"unknown source":    func(m map[string]any) { gpu0(m)["utilization_source"] = "dcgm" },
		"time not RFC 3339": func(m map[string]any) { m["time"] = "yesterday" },
	} {
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		if err := stattest.Validate(b); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		} else if !strings.Contains(err.Error(), "jsonschema validation failed") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func gpu0(m map[string]any) map[string]any { return m["gpus"].([]any)[0].(map[string]any) }
