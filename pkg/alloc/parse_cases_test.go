package alloc

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

type caseKind struct {
	rule     string
	min, max uint64
}

type parseCase struct {
	line              int
	kind, input, want string
}

// readCases reads testdata/parse-cases.txt, the table libcgpu's config-test reads too.
func readCases(t *testing.T) (map[string]caseKind, []parseCase) {
	t.Helper()
	f, err := os.Open("testdata/parse-cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]caseKind{}
	var cases []parseCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		var name string
		var k caseKind
		if _, err := fmt.Sscanf(line, "kind %s %s %d %d", &name, &k.rule, &k.min, &k.max); err == nil {
			kinds[name] = k
			continue
		}
		open, end := strings.IndexByte(line, '"'), strings.LastIndexByte(line, '"')
		c := parseCase{line: n, kind: strings.TrimSpace(line[:max(open, 0)]), want: strings.TrimSpace(line[end+1:])}
		if open < 0 || end == open || c.want == "" {
			t.Fatalf("parse-cases.txt:%d: not KIND \"INPUT\" VERDICT: %s", n, line)
		}
		c.input = line[open+1 : end]
		if _, ok := kinds[c.kind]; !ok {
			t.Fatalf("parse-cases.txt:%d: kind %q is not defined above", n, c.kind)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return kinds, cases
}

// verdict is what the rule k says of s, written as the table writes it.
func verdict(k caseKind, s string) string {
	var out string
	var err error
	switch k.rule {
	case "bool":
		var b bool
		b, err = boolean(s)
		out = strconv.FormatBool(b)
	case "whole":
		var v uint64
		v, err = whole(s, k.min, k.max)
		out = strconv.FormatUint(v, 10)
	case "list":
		var vals []uint64
		vals, err = list(s, k.max)
		out = "off"
		if vals != nil {
			out = joinUints(vals)
		}
	default:
		return "unknown rule " + k.rule
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}

// TestParseCases holds pkg/alloc to the table of verdicts that libcgpu is held to, both
// through the rules themselves and through ParseEnv, which the runtime and plugin use.
func TestParseCases(t *testing.T) {
	kinds, cases := readCases(t)
	for name, k := range map[string]caseKind{
		"disable": {"bool", 0, 1}, "gib": {"list", 0, maxGiB}, "weight": {"whole", 1, maxWeight},
	} {
		if kinds[name] != k {
			t.Fatalf("the table's kind %s is %+v; pkg/alloc reads it as %+v", name, kinds[name], k)
		}
	}
	for _, c := range cases {
		got := verdict(kinds[c.kind], c.input)
		if got != c.want {
			t.Errorf("parse-cases.txt:%d: %s %q: got %s, want %s", c.line, c.kind, c.input, got, c.want)
		}
		if env := envVerdict(c); env != "" {
			t.Errorf("parse-cases.txt:%d: %s %q through ParseEnv: %s", c.line, c.kind, c.input, env)
		}
	}
}

// envVerdict says where ParseEnv disagrees with the table for case c; "" if it agrees.
func envVerdict(c parseCase) string {
	name := map[string]string{"disable": EnvDisable, "gib": EnvMemContainer, "weight": EnvWeight}[c.kind]
	if name == "" {
		return ""
	}
	env := map[string]string{EnvMemContainer: "1", name: c.input}
	in, err := ParseEnv(env)
	if reason, bad := strings.CutPrefix(c.want, "error: "); bad {
		if err == nil || !strings.Contains(err.Error(), name+"="+strconv.Quote(c.input)+": "+reason) {
			return fmt.Sprintf("err %v, want one naming the value and %q", err, reason)
		}
		return ""
	}
	if err != nil {
		return err.Error()
	}
	switch {
	case c.kind == "disable" && (in.Off != "") != (c.want == "true"),
		c.kind == "gib" && (in.Off != "") != (c.want == "off"),
		c.kind == "gib" && c.want != "off" && joinUints(in.Mem) != c.want,
		c.kind == "weight" && strconv.Itoa(in.Weight) != c.want:
		return fmt.Sprintf("intent %+v", in)
	}
	return ""
}
