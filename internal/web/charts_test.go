package web

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/chart"
	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/ranking"
)

// chartBoard is a public board ranked by reward with n rows, and its index.
func chartBoard(n int) (*hubv1alpha1.Leaderboard, *fakeRanked) {
	lb := board("acme", "swe", "SWE", hubv1alpha1.VisibilityPublic)
	lb.ResourceVersion = "3"
	lb.Spec.RankBy = []hubv1alpha1.RankRule{{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending}}
	entries := rankedRows(n)
	var rows []*hubv1alpha1.LeaderboardRow
	for i, e := range entries {
		e.Row.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC))
		rows = append(rows, e.Row)
	}
	return lb, &fakeRanked{entries: entries, records: ranking.ProgressOf(lb.Spec.RankBy, rows), version: 1}
}

var (
	markRank = regexp.MustCompile(`<a class="mark" href="[^"]*" data-rank="(\d+)" data-row="([^"]*)"`)
	svgOf    = regexp.MustCompile(`(?s)<svg [^>]*id="(intervals|progress)".*?</svg>`)
)

// marks returns the ranks and row ids of an interval chart's marks, in document order.
func marks(svg string) (ranks []string, rows []string) {
	for _, m := range markRank.FindAllStringSubmatch(svg, -1) {
		ranks, rows = append(ranks, m[1]), append(rows, m[2])
	}
	return ranks, rows
}

// TestBoardPageCharts: the first page of a board draws both charts inline: the interval
// chart's marks are the table's first rows, in its order; a link shows more rows; the
// page keeps its CSP and holds no script and no style attribute.
func TestBoardPageCharts(t *testing.T) {
	lb, ranked := chartBoard(60)
	f := newFixture(t, map[types.UID]Ranked{lb.UID: ranked}, lb)
	res, body := f.get(t, "/leaderboards/acme/bench/swe", "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	if got := res.Header.Get("Content-Security-Policy"); got != "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'none'; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'" {
		t.Errorf("CSP changed: %q", got)
	}
	svgs := svgOf.FindAllStringSubmatch(body, -1)
	if len(svgs) != 2 || svgs[0][1] != "intervals" || svgs[1][1] != "progress" {
		t.Fatalf("charts on the page: %d", len(svgs))
	}
	ranks, ids := marks(svgs[0][0])
	_, rows := table(t, body)
	var tableRanks []string
	for _, r := range rows[:DefaultChartRows] {
		tableRanks = append(tableRanks, r[0])
	}
	if diff := cmp.Diff(tableRanks, ranks); diff != "" {
		t.Errorf("marks against the table's first %d rows (-table +chart):\n%s", DefaultChartRows, diff)
	}
	for i, id := range ids {
		if want := string(ranked.entries[i].Row.UID); id != want {
			t.Fatalf("mark %d is row %s, want %s", i, id, want)
		}
	}
	for _, want := range []string{`<a class="more" href="?chart_rows=60#charts">Show the top 60 rows</a>`,
		`href="/leaderboards/acme/bench/swe/intervals.svg"`, `href="/leaderboards/acme/bench/swe/progress.svg"`,
		`<title id="intervals-title">`, `<desc id="progress-desc">`, "Top 30 of 60 rows by Reward (metrics.reward)",
		`href="/leaderboards/acme/bench/swe/rows/` + string(ranked.entries[0].Row.UID) + `/history"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", " style=", "<style"} {
		if strings.Contains(body, bad) {
			t.Errorf("page holds %q", bad)
		}
	}

	_, body = f.get(t, "/leaderboards/acme/bench/swe?chart_rows=60", "")
	if ranks, _ := marks(svgOf.FindString(body)); len(ranks) != 60 {
		t.Errorf("?chart_rows=60: %d marks", len(ranks))
	}
	if !strings.Contains(body, `<a class="fewer" href="?#charts">`) {
		t.Error("no link back to the default chart")
	}
	_, body = f.get(t, "/leaderboards/acme/bench/swe?page=2", "")
	if strings.Contains(body, `class="charts"`) {
		t.Error("charts on page 2")
	}
	res, _ = f.get(t, "/leaderboards/acme/bench/swe?chart_rows=500", "")
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("chart_rows=500: status %d", res.StatusCode)
	}
}

// TestChartsServedAlone: each chart is an SVG image at a stable URL under the board's
// page, with the page's caching (ETag, 304, public or private Cache-Control) and an
// image CSP; it changes with the index.
func TestChartsServedAlone(t *testing.T) {
	lb, ranked := chartBoard(40)
	priv := board("acme", "secret", "Secret", hubv1alpha1.VisibilityPrivate)
	priv.Spec.RankBy = lb.Spec.RankBy
	f := newFixture(t, map[types.UID]Ranked{lb.UID: ranked, priv.UID: &fakeRanked{}}, lb, priv)
	_, page := f.get(t, "/leaderboards/acme/bench/swe", "")
	for _, file := range []string{IntervalsFile, ProgressFile} {
		path := "/leaderboards/acme/bench/swe/" + file
		res, body := f.get(t, path, "")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %s", file, res.StatusCode, body)
		}
		for h, want := range map[string]string{
			"Content-Type":            "image/svg+xml",
			"Content-Security-Policy": ChartContentSecurityPolicy,
			"X-Content-Type-Options":  "nosniff",
			"Cache-Control":           httpapi.PublicCacheControl,
			"Vary":                    "Authorization",
			"Content-Length":          strconv.Itoa(len(body)),
		} {
			if got := res.Header.Get(h); got != want {
				t.Errorf("%s: %s = %q, want %q", file, h, got, want)
			}
		}
		if !strings.HasPrefix(body, "<svg ") || !strings.Contains(page, strings.TrimSpace(body)) {
			t.Errorf("%s: not the chart the page draws", file)
		}
		etag := res.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s: no ETag", file)
		}
		mux := mux(f.pages)
		req := pageRequest(path, "")
		req.Header.Set("If-None-Match", etag)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
			t.Errorf("%s: If-None-Match: status %d", file, rec.Code)
		}
		ranked.version++
		if res, _ := f.get(t, path, ""); res.Header.Get("ETag") == etag {
			t.Errorf("%s: the ETag did not change with the index", file)
		}
		res, _ = f.get(t, "/leaderboards/acme/bench/secret/"+file, "member")
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "private, no-store" {
			t.Errorf("%s of a private board to a member: %d %q", file, res.StatusCode, res.Header.Get("Cache-Control"))
		}
	}
	_, body := f.get(t, "/leaderboards/acme/bench/swe/intervals.svg?chart_rows=5", "")
	if ranks, _ := marks(body); len(ranks) != 5 {
		t.Errorf("chart_rows=5: %d marks", len(ranks))
	}
	for _, path := range []string{"/intervals.svg?chart_rows=0", "/intervals.svg?page=2", "/progress.svg?chart_rows=5"} {
		if res, _ := f.get(t, "/leaderboards/acme/bench/swe"+path, ""); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", path, res.StatusCode)
		}
	}
}

// TestScoreSeries: the history page's chart reads the first rule's value before the
// first change that touched it (from creation) and after each change; a value the
// history cut reads as none, and a history whose first changes were dropped says so.
func TestScoreSeries(t *testing.T) {
	lb, _ := chartBoard(1)
	created := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	at := func(d int) metav1.Time { return metav1.NewTime(created.Add(time.Duration(d) * 24 * time.Hour)) }
	s := func(v string) *string { return &v }
	row := row(`{"agent":"a"}`, `{"reward":0.9}`)
	row.CreationTimestamp = metav1.NewTime(created)
	row.Status.History = []hubv1alpha1.RowChange{
		{At: at(1), Generation: 2, Fields: []hubv1alpha1.FieldChange{{Field: "metadata.agent", Old: s(`"x"`), New: s(`"a"`)}}},
		{At: at(2), Generation: 3, Fields: []hubv1alpha1.FieldChange{{Field: "metrics.reward", Old: s("0.5"), New: s("0.7")}}},
		{At: at(4), Generation: 4, Fields: []hubv1alpha1.FieldChange{{Field: "metrics.reward", Old: s("0.7"), New: s(`"long`), NewTruncated: true}}},
		{At: at(6), Generation: 5, Fields: []hubv1alpha1.FieldChange{{Field: "metrics", Old: s(`{"reward":"x"}`), New: s(`{"reward":0.9}`)}}},
	}
	got := scoreSeries(lb, row)
	want := []chart.Point{{At: created, Score: 0.5, HasScore: true}, {At: at(2).Time, Score: 0.7, HasScore: true},
		{At: at(4).Time}, {At: at(6).Time, Score: 0.9, HasScore: true}}
	if diff := cmp.Diff(want, got.Points); diff != "" || got.Partial {
		t.Errorf("points (-want +got), partial %v:\n%s", got.Partial, diff)
	}
	row.Status.History = row.Status.History[2:]
	got = scoreSeries(lb, row)
	if !got.Partial || got.Points[0].At != at(4).Time || got.Points[0].Score != 0.7 {
		t.Errorf("a history without its first changes: %+v", got)
	}
	row.Status.History = nil
	got = scoreSeries(lb, row)
	if diff := cmp.Diff([]chart.Point{{At: created, Score: 0.9, HasScore: true}}, got.Points); diff != "" {
		t.Errorf("a row never changed (-want +got):\n%s", diff)
	}
}
