package statfmt

import (
	"bytes"
	"testing"

	"github.com/cgpu-project/cgpu/pkg/stat"
	"github.com/cgpu-project/cgpu/pkg/stat/stattest"
)

func TestPrintSample(t *testing.T) {
	var b bytes.Buffer
	for _, f := range []string{"", "table {{.Name}}\t{{.Compute}}", "{{.ID}} {{.MemBar}}", "{{json .}}", "json"} {
		if err := Write(&b, stat.Build(stattest.Sample(t)), Options{Format: f, Watch: true}); err != nil {
			t.Fatal(err)
		}
	}
	t.Log("\n" + b.String())
}
