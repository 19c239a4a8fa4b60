package testenv

import dto "github.com/prometheus/client_model/go"

// Series returns the series of family f whose labels include every pair of want (all of
// them for an empty want; none for a nil f): the one label match of the tests that read
// Prometheus metrics.
func Series(f *dto.MetricFamily, want map[string]string) []*dto.Metric {
	if f == nil {
		return nil
	}
	var out []*dto.Metric
next:
	for _, m := range f.Metric {
		have := make(map[string]string, len(m.Label))
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}
