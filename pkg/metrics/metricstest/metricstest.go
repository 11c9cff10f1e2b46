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
// family must be a documented cgpu_ gauge, or counter named _total.
func Parse(tb testing.TB, r io.Reader) map[string]float64 {
	tb.Helper()
	var p expfmt.TextParser
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		counter := mf.GetType() == dto.MetricType_COUNTER && strings.HasSuffix(name, "_total")
		if (mf.GetType() != dto.MetricType_GAUGE && !counter) || !strings.HasPrefix(name, "cgpu_") || mf.GetHelp() == "" {
			tb.Errorf("%s: type %v help %q", name, mf.GetType(), mf.GetHelp())
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			v := m.GetGauge().GetValue()
			if counter {
				v = m.GetCounter().GetValue()
			}
			out[name+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}
