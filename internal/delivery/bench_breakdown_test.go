package delivery_test

import (
	"bytes"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"podium.dev/podium/internal/metrics"
	"podium.dev/podium/internal/testenv"
)

// A cost breakdown of the creates a sub-benchmark made, from the histograms the
// apiserver and the operator keep themselves (sums over counts: means, in ms per
// create): where the time of a create goes is measured, not guessed.

// stage is one histogram (its series whose labels include match), reported as
// unit per create.
type stage struct {
	unit   string
	family string
	match  map[string]string
	// operator: the family is the operator's (controller-runtime's registry), not the
	// apiserver's.
	operator bool
}

var stages = []stage{
	// The whole create as the apiserver handled it (excludes the client's side).
	{unit: "apiserver-ms", family: "apiserver_request_duration_seconds", match: map[string]string{"verb": "POST"}},
	// Mutating admission: the webhook, mutating policies and in-tree plug-ins.
	{unit: "admit-ms", family: "apiserver_admission_step_admission_duration_seconds", match: map[string]string{"type": "admit", "operation": "CREATE"}},
	// Validating admission: the admission policies and in-tree plug-ins.
	{unit: "validate-ms", family: "apiserver_admission_step_admission_duration_seconds", match: map[string]string{"type": "validate", "operation": "CREATE"}},
	// The delivery webhook as the apiserver saw it (TLS call included).
	{unit: "webhook-ms", family: "apiserver_admission_webhook_admission_duration_seconds", match: map[string]string{"name": "runs.delivery.hub.podium.dev"}},
	// The floor webhook (bench_floor_test.go) as the apiserver saw it.
	{unit: "floor-ms", family: "apiserver_admission_webhook_admission_duration_seconds", match: map[string]string{"name": "floor.bench.podium.dev"}},
	// The webhook's handler inside the operator.
	{unit: "handler-ms", family: metrics.AdmissionDurationName, operator: true},
	// The storage write (etcd's create of the object).
	{unit: "etcd-ms", family: "etcd_request_duration_seconds"},
}

// histogramTotals sums, per stage, the sample sum of the matching series of a scrape.
type histogramTotals map[string]float64

func scrapeTotals(b *testing.B, cs kubernetes.Interface, resource string) histogramTotals {
	b.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	ops, err := crmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	opFams := map[string]*dto.MetricFamily{}
	for _, f := range ops {
		opFams[f.GetName()] = f
	}
	out := histogramTotals{}
	for _, s := range stages {
		src := fams
		if s.operator {
			src = opFams
		}
		want := s.match
		if s.family == "apiserver_request_duration_seconds" {
			want = map[string]string{"verb": "POST", "resource": resource}
		}
		if s.family == "etcd_request_duration_seconds" {
			want = map[string]string{"operation": "create", "resource": resource}
		}
		out[s.unit] = histogramSum(src[s.family], want)
	}
	// Each admission policy (its check, validations and variables) and each webhook's or
	// policy's match conditions, by name.
	for _, per := range []struct{ family, label, prefix string }{
		{"apiserver_validating_admission_policy_check_duration_seconds", "policy", "vap-"},
		{"apiserver_mutating_admission_policy_check_duration_seconds", "policy", "map-"},
		{"apiserver_admission_match_condition_evaluation_seconds", "name", "match-"},
	} {
		f := fams[per.family]
		if f == nil {
			continue
		}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == per.label {
					out[per.prefix+l.GetValue()+"-ms"] += m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return out
}

func histogramSum(f *dto.MetricFamily, want map[string]string) float64 {
	var sum float64
	for _, m := range testenv.Series(f, want) {
		sum += m.GetHistogram().GetSampleSum()
	}
	return sum
}

// reportBreakdown reports the mean of each stage over the n creates made between before
// and after.
func reportBreakdown(b *testing.B, before, after histogramTotals, n int) {
	b.Helper()
	for unit, v := range after {
		if d := (v - before[unit]) * 1000 / float64(n); d > 0 {
			b.ReportMetric(d, unit)
		}
	}
}
