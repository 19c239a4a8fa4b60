package web

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/lru"
	"podium.dev/podium/internal/ranking"
)

// benchBoard is a public board of n rows shaped like the sample (text, number, link
// and markdown cells), in rank order.
func benchBoard(b *testing.B, n int) (*fixture, *hubv1alpha1.Leaderboard) {
	b.Helper()
	lb := board("acme", "big", "Big", hubv1alpha1.VisibilityPublic)
	lb.Spec.Columns = append(testColumns,
		hubv1alpha1.Column{ID: "report", Header: "Report", Accessor: "metadata.report", Type: hubv1alpha1.ColumnLink},
		hubv1alpha1.Column{ID: "cost", Header: "Cost", Accessor: "metrics.cost", Type: hubv1alpha1.ColumnNumber, EnableSorting: yes()})
	lb.Spec.RankBy = []hubv1alpha1.RankRule{{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending}}
	entries := make([]Entry, n)
	created := rand.New(rand.NewPCG(38, 38)).Perm(n)
	for i := range entries {
		// Created in an order unrelated to the ranks, so that a few dozen rows moved
		// the state of the art (the progress chart's steps), as on a real board.
		r := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("row-%d", i), UID: types.UID(fmt.Sprintf("uid-%08d", i)),
			CreationTimestamp: metav1.NewTime(benchEpoch.Add(time.Duration(created[i]) * time.Minute)),
		}}
		r.Spec.Metadata = &apiextensionsv1.JSON{Raw: fmt.Appendf(nil,
			`{"agent":"agent-%d","notes":"Run **%d** with [logs](https://example.com/logs/%d)","report":{"url":"https://example.com/r/%d","label":"report"}}`, i, i, i, i)}
		r.Spec.Metrics = &apiextensionsv1.JSON{Raw: fmt.Appendf(nil, `{"reward":%.6f,"cost":%d}`, 1-float64(i)/float64(n), (i*7919)%1000)}
		entries[i] = Entry{Rank: i + 1, Row: r}
	}
	rows := make([]*hubv1alpha1.LeaderboardRow, n)
	for i, e := range entries {
		rows[i] = e.Row
	}
	ranked := &fakeRanked{entries: entries, records: ranking.ProgressOf(lb.Spec.RankBy, rows)}
	f := newFixture(&testing.T{}, map[types.UID]Ranked{lb.UID: ranked}, lb)
	f.pages.o.Sort = func(rules []hubv1alpha1.RankRule, rows []*hubv1alpha1.LeaderboardRow) []*hubv1alpha1.LeaderboardRow {
		sorted := ranking.Sort(rules, rows)
		out := make([]*hubv1alpha1.LeaderboardRow, len(sorted))
		for i, e := range sorted {
			out[i] = e.Row
		}
		return out
	}
	return f, lb
}

var benchEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func serve(b *testing.B, h http.Handler, path string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		b.Fatalf("%s: status %d", path, rec.Code)
	}
}

func mux(p *Pages) http.Handler {
	m := http.NewServeMux()
	for pattern, h := range p.Routes() {
		m.Handle(pattern, h)
	}
	return m
}

// BenchmarkBoardPage serves one page of 50 rows of a 100,000-row board in rank order:
// rendered (the kept pages dropped before each request) and kept. The rank index pages
// in O(log n + 50), so page 2,000 costs what page 1 costs.
func BenchmarkBoardPage(b *testing.B) {
	f, _ := benchBoard(b, 100_000)
	h := mux(f.pages)
	for _, page := range []int{1, 2000} {
		path := fmt.Sprintf("/leaderboards/acme/bench/big?page=%d", page)
		b.Run(fmt.Sprintf("page=%d/rendered", page), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.pages.pages = lru.New[pageKey](pageCacheEntries, pageCacheBytes, pageCacheBytes, func(b []byte) int64 { return int64(len(b)) })
				serve(b, h, path)
			}
		})
		b.Run(fmt.Sprintf("page=%d/kept", page), func(b *testing.B) {
			serve(b, h, path)
			b.ReportAllocs()
			for b.Loop() {
				serve(b, h, path)
			}
		})
	}
}

// BenchmarkSortedPage is a page sorted by a column on a board of MaxSortRows rows: the
// first request sorts every row (cold), the next ones page the kept order (warm); both
// render the page.
func BenchmarkSortedPage(b *testing.B) {
	f, _ := benchBoard(b, MaxSortRows)
	h := mux(f.pages)
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f.pages.sorted = newSortCache()
			f.pages.pages = lru.New[pageKey](pageCacheEntries, pageCacheBytes, pageCacheBytes, func(b []byte) int64 { return int64(len(b)) })
			serve(b, h, "/leaderboards/acme/bench/big?sort=cost&dir=asc&page=7")
		}
	})
	b.Run("warm", func(b *testing.B) {
		serve(b, h, "/leaderboards/acme/bench/big?sort=cost&dir=asc")
		b.ReportAllocs()
		for b.Loop() {
			// The sorted order is kept; the page itself is rendered.
			f.pages.pages = lru.New[pageKey](pageCacheEntries, pageCacheBytes, pageCacheBytes, func(b []byte) int64 { return int64(len(b)) })
			serve(b, h, "/leaderboards/acme/bench/big?sort=cost&dir=asc&page=7")
		}
	})
}

// BenchmarkCharts draws the charts of a 100,000-row board, each alone as its URL serves
// it with the kept answers dropped before each request, next to the first page of its
// table drawn without the charts: the charts read the index's first page and its kept
// progress records, never every row, so they cost less than the table (docs/web.md,
// "Charts"; figures in docs/performance.md).
func BenchmarkCharts(b *testing.B) {
	f, lb := benchBoard(b, 100_000)
	h := mux(f.pages)
	drop := func() {
		f.pages.pages = lru.New[pageKey](pageCacheEntries, pageCacheBytes, pageCacheBytes, func(b []byte) int64 { return int64(len(b)) })
	}
	if n := len(f.pages.o.Ranking(lb.UID).Progress()); n < 5 {
		b.Fatalf("%d progress records", n)
	}
	for _, path := range []string{"/intervals.svg", "/intervals.svg?chart_rows=200", "/progress.svg"} {
		b.Run("chart="+path[1:], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				drop()
				serve(b, h, "/leaderboards/acme/bench/big"+path)
			}
		})
	}
	b.Run("table page 1 without charts", func(b *testing.B) {
		// The same board without rules has no charts; nothing else of its first page
		// reads the rules (no rule names an uncertainty).
		plain := lb.DeepCopy()
		plain.Spec.RankBy = nil
		q := query{Page: 1, ChartRows: DefaultChartRows}
		ds := &hubv1alpha1.Dataset{}
		ranked := f.pages.o.Ranking(lb.UID)
		b.ReportAllocs()
		for b.Loop() {
			page := f.pages.boardPage(plain, ds, ranked, q, benchEpoch)
			if page.Charts != nil {
				b.Fatal("charts on a board without rules")
			}
			if _, err := f.pages.execute("board", page); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("board page 1 with charts", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			drop()
			serve(b, h, "/leaderboards/acme/bench/big")
		}
	})
}
