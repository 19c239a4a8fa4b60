package boardcsv

import (
	"fmt"
	"io"
	"testing"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/ranking"
)

// BenchmarkWrite100k encodes a board of 100,000 ranked rows (two metadata and three
// metrics leaves each, with ranges) as CSV: what the HTTP CSV costs once per change of
// a board.
func BenchmarkWrite100k(b *testing.B) {
	lb := &hubv1alpha1.Leaderboard{Spec: hubv1alpha1.LeaderboardSpec{RankBy: []hubv1alpha1.RankRule{
		{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending, Stderr: "metrics.se"},
	}}}
	rows := make([]ranking.Entry, 100_000)
	for i := range rows {
		rows[i] = ranking.Entry{Rank: i + 1, RankUpper: i/2 + 1, Interval: ranking.Interval{Low: 0.5, High: 0.7, OK: true},
			Row: row(fmt.Sprintf("00000000-0000-0000-0000-%012d", i), fmt.Sprintf(`{"agent":"agent-%d","model":"provider/model-%d"}`, i%50, i%20),
				fmt.Sprintf(`{"reward":0.%04d,"se":0.01,"cost":%d}`, 9999-i%10000, i%100))}
	}
	var n countingWriter
	b.ReportAllocs()
	for b.Loop() {
		n = 0
		if err := Write(&n, lb, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "bytes")
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)
