// Package metricstest reads an exposition the way Prometheus does, with the official text
// parser, for the tests of every part that exports or scrapes cgpu's metrics.
package metricstest

import (
	"io"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Parse reads the text format into `name{label=value,...}` (labels sorted) -> value. Every
// family must be a documented cgpu_ gauge.
func Parse(tb testing.TB, r io.Reader) map[string]float64 {
	tb.Helper()
	var p expfmt.TextParser
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		if mf.GetType() != dto.MetricType_GAUGE || !strings.HasPrefix(name, "cgpu_") || mf.GetHelp() == "" {
			tb.Errorf("%s: type %v help %q", name, mf.GetType(), mf.GetHelp())
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			out[name+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}
