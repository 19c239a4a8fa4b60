package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
)

// deliveredBy reads podium_secrets_delivered_total by its label kind.
func deliveredBy(t *testing.T) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 16)
	go func() { secretsDelivered.Collect(ch); close(ch) }()
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		for _, l := range d.GetLabel() {
			if l.GetName() == "kind" {
				out[l.GetValue()] = d.GetCounter().GetValue()
			}
		}
	}
	return out
}

// TestDeliveredKindsComeFromTheTable: podium_secrets_delivered_total has a series for
// every kind of the table from the start, and counts a kind it was never told of
// (a third kind) under that kind's type.
func TestDeliveredKindsComeFromTheTable(t *testing.T) {
	before := deliveredBy(t)
	for _, k := range secretkind.Kinds {
		if _, ok := before[string(k.Type)]; !ok {
			t.Errorf("no series for kind %s", k.Type)
		}
	}
	t.Cleanup(func() { secretsDelivered.DeleteLabelValues("git-token") })
	CountDelivery(map[hubv1alpha1.SecretType]int{"git-token": 1}, nil)
	after := deliveredBy(t)
	if got := after["git-token"] - before["git-token"]; got != 1 {
		t.Errorf("git-token counted %v; want 1", got)
	}
	for _, k := range secretkind.Kinds {
		if got := after[string(k.Type)] - before[string(k.Type)]; got != 0 {
			t.Errorf("%s counted %v; want 0", k.Type, got)
		}
	}
}
