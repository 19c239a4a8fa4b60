package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor"
	"podium.dev/podium/internal/chart"
	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/wire"
)

// The charts of a board (docs/web.md, "Charts"): drawn on the first page of the board
// and served alone as SVG under the board's page, for READMEs.
const (
	// DefaultChartRows is how many rows the interval chart shows unless ?chart_rows=
	// asks for more or fewer.
	DefaultChartRows = 30
	// MaxChartRows is the most it shows: the chart is read mark by mark.
	MaxChartRows = 200
	// IntervalsFile and ProgressFile are the charts' names under the board's page:
	// /leaderboards/<org>/<dataset>/<name>/intervals.svg and .../progress.svg.
	IntervalsFile = "intervals.svg"
	ProgressFile  = "progress.svg"
)

// ChartContentSecurityPolicy is sent with a chart served alone: it loads and runs
// nothing (the SVG has no script, style or external reference anyway).
const ChartContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'"

// chartView is what the board template shows of the charts.
type chartView struct {
	Intervals, Progress       template.HTML
	IntervalsURL, ProgressURL string
	// MoreURL and FewerURL change how many rows the interval chart shows ("" when it
	// shows all, or the default).
	MoreURL, FewerURL string
	MoreRows          int
}

// chartsOf builds the charts of the first page of a board whose rules rank by
// something; nil for any other page or board.
func chartsOf(lb *hubv1alpha1.Leaderboard, ranked Ranked, q query) *chartView {
	if len(lb.Spec.RankBy) == 0 || q.Page != 1 {
		return nil
	}
	rows := q.ChartRows
	base := boardURL(lb)
	v := &chartView{
		Intervals:    template.HTML(intervalChart(lb, ranked, rows).SVG()),      //nolint:gosec // chart escapes every text
		Progress:     template.HTML(progressChart(lb, ranked.Progress()).SVG()), //nolint:gosec // chart escapes every text
		IntervalsURL: base + "/" + IntervalsFile,
		ProgressURL:  base + "/" + ProgressFile,
	}
	if total := ranked.Len(); rows < min(total, MaxChartRows) {
		v.MoreRows = min(total, MaxChartRows, max(100, rows*2))
		v.MoreURL = "?chart_rows=" + strconv.Itoa(v.MoreRows) + "#charts"
	}
	if rows > DefaultChartRows {
		v.FewerURL = "?#charts"
	}
	return v
}

// axisOf names the first rule's value: the header of the column showing it, and the
// accessor.
func axisOf(lb *hubv1alpha1.Leaderboard) string {
	acc := lb.Spec.RankBy[0].Accessor
	for _, c := range lb.Spec.Columns {
		if c.Accessor == acc && c.Header != "" {
			return c.Header + " (" + acc + ")"
		}
	}
	return acc
}

// labelColumn is the column that names a row on the charts: the first text column
// that does not show the score, else the first column.
func labelColumn(lb *hubv1alpha1.Leaderboard) (hubv1alpha1.Column, bool) {
	cols := lb.Spec.Columns
	for _, c := range cols {
		if (c.Type == hubv1alpha1.ColumnText || c.Type == "") && c.Accessor != lb.Spec.RankBy[0].Accessor {
			return c, true
		}
	}
	if len(cols) > 0 {
		return cols[0], true
	}
	return hubv1alpha1.Column{}, false
}

// rowLabel is how the charts name a row: its label column as text, else its id.
func rowLabel(col hubv1alpha1.Column, ok bool, row *hubv1alpha1.LeaderboardRow) string {
	if ok {
		acc := col.Accessor
		if col.DisplayAccessor != "" {
			acc = col.DisplayAccessor
		}
		if v, found := decodeRow(row).lookup(acc); found && v != nil {
			switch t := v.(type) {
			case string:
				if t != "" {
					return t
				}
			case json.Number:
				return t.String()
			case bool:
				return strconv.FormatBool(t)
			case map[string]any:
				if l, ok := t["label"].(string); ok && l != "" {
					return l
				}
			}
		}
	}
	return hubv1alpha1.ID(row)
}

// rowURL is a row's page on the web: its history.
func rowURL(base string, row *hubv1alpha1.LeaderboardRow) string {
	return base + "/rows/" + url.PathEscape(hubv1alpha1.ID(row)) + "/history"
}

// intervalChart is the chart of the board's top rows, from the rank index's first
// page: O(log n + rows), whatever the board's size.
func intervalChart(lb *hubv1alpha1.Leaderboard, ranked Ranked, rows int) chart.Intervals {
	rule := lb.Spec.RankBy[0]
	base := boardURL(lb)
	col, hasCol := labelColumn(lb)
	// The index's interval is on the first rule that names an uncertainty: drawn when
	// that rule is the first one.
	withInterval := rule.HasUncertainty()
	c := chart.Intervals{ID: "intervals", Board: lb.Spec.Title, Axis: axisOf(lb),
		HigherBetter: rule.Direction == hubv1alpha1.Descending, Total: ranked.Len()}
	for _, e := range ranked.Page(0, rows) {
		r := chart.IntervalRow{Rank: e.Rank, RankUpper: e.RankUpper, Label: rowLabel(col, hasCol, e.Row),
			Verified: wire.Verified(e.Row), URL: rowURL(base, e.Row), ID: hubv1alpha1.ID(e.Row)}
		r.Score, r.HasScore = ranking.ScoreOf(rule.Accessor, e.Row)
		if withInterval && e.Interval.OK {
			r.Low, r.High, r.HasInterval = e.Interval.Low, e.Interval.High, true
		}
		c.Rows = append(c.Rows, r)
	}
	return c
}

// progressChart is the state of the art over time, from the records the rank index
// keeps (ranking.Board.Progress): no walk of the board.
func progressChart(lb *hubv1alpha1.Leaderboard, records []ranking.Record) chart.Progress {
	rule := lb.Spec.RankBy[0]
	base := boardURL(lb)
	col, hasCol := labelColumn(lb)
	c := chart.Progress{ID: "progress", Board: lb.Spec.Title, Axis: axisOf(lb),
		HigherBetter: rule.Direction == hubv1alpha1.Descending}
	for _, r := range records {
		if !r.HasScore {
			continue
		}
		c.Steps = append(c.Steps, chart.Step{At: r.At, Score: r.Score, Label: rowLabel(col, hasCol, r.Row),
			URL: rowURL(base, r.Row), ID: hubv1alpha1.ID(r.Row), Verified: wire.Verified(r.Row)})
	}
	return c
}

// parseChartRows reads ?chart_rows=: from 1 to MaxChartRows, DefaultChartRows when
// absent.
func parseChartRows(v url.Values) (int, error) {
	s := v.Get("chart_rows")
	if s == "" {
		return DefaultChartRows, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxChartRows {
		return 0, &queryError{"chart_rows", "must be a whole number from 1 to " + strconv.Itoa(MaxChartRows)}
	}
	return n, nil
}

// serveChart serves one chart of a board alone, as image/svg+xml, by the board page's
// rules: the same refusal (the same bytes) for a missing board and a private one the
// caller may not read, the same Cache-Control, an ETag by what the chart is drawn from.
func (p *Pages) serveChart(file string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		lb, private, ok := p.readableBoard(w, r)
		if !ok {
			return
		}
		// The query is checked only now, as on the board page.
		q := r.URL.Query()
		rows := DefaultChartRows
		var err error
		for k := range q {
			if k != "chart_rows" || file != IntervalsFile {
				err = &queryError{k, "unknown query parameter"}
			}
		}
		if err == nil && file == IntervalsFile {
			rows, err = parseChartRows(q)
		}
		if err != nil || len(lb.Spec.RankBy) == 0 {
			if err == nil {
				err = &queryError{"rank_by", "this board ranks by nothing, so it has no charts"}
			}
			status := http.StatusBadRequest
			if len(lb.Spec.RankBy) == 0 {
				status = http.StatusNotFound
			}
			p.render(w, r, status, "error", errorPage{Status: status, Heading: http.StatusText(status), Message: err.Error()}, private)
			return
		}
		ranked := p.o.Ranking(lb.UID)
		if ranked == nil {
			ranked = emptyBoard{}
		}
		// A chart is drawn from the board and its index only (no clock): kept, and
		// tagged, by their versions.
		key := pageKey{board: lb.UID, boardRV: lb.ResourceVersion, rows: ranked.Version(), total: ranked.Len(),
			query: query{ChartRows: rows}, chart: file}
		etag := key.etag()
		h := w.Header()
		setChartHeaders(h, private, etag)
		if matchesETag(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		body, ok := p.pages.Get(key)
		if !ok {
			if file == IntervalsFile {
				body = intervalChart(lb, ranked, rows).SVG()
			} else {
				body = progressChart(lb, ranked.Progress()).SVG()
			}
			p.pages.Put(key, body)
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}
}

// setChartHeaders are a chart's headers: an image that may run and load nothing, the
// board page's caching.
func setChartHeaders(h http.Header, private bool, etag string) {
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Content-Security-Policy", ChartContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Vary", "Authorization")
	if private {
		h.Set("Cache-Control", "private, no-store")
	} else {
		h.Set("Cache-Control", httpapi.PublicCacheControl)
	}
	h.Set("ETag", etag)
}

// scoreSeries is a row's score over its changes (the history page's chart), from the
// whole row the page reads: the value of the first rule at each change that touched
// it. The history keeps the last changes only (rowhistory.MaxEntries): when older ones
// are gone (the oldest kept one is not the row's first change) the chart starts at
// the oldest kept change and says so.
func scoreSeries(lb *hubv1alpha1.Leaderboard, row *hubv1alpha1.LeaderboardRow) chart.Series {
	rule := lb.Spec.RankBy[0]
	hist := row.Status.History
	s := chart.Series{ID: "row-score", Row: hubv1alpha1.ID(row), Board: lb.Spec.Title, Axis: axisOf(lb),
		HigherBetter: rule.Direction == hubv1alpha1.Descending}
	start := hubv1alpha1.CreatedAt(row).Time
	if len(hist) > 0 && hist[0].Generation > 2 {
		s.Partial, start = true, hist[0].At.Time
	}
	var points []chart.Point
	first := true
	for _, e := range hist {
		for _, f := range e.Fields {
			old, cur, ok := fieldScores(rule.Accessor, f)
			if !ok {
				continue
			}
			if first {
				points = append(points, old.at(start))
				first = false
			}
			points = append(points, cur.at(e.At.Time))
		}
	}
	if first {
		// No kept change touched the score: the row has held it since start.
		var v score
		v.n, v.ok = ranking.ScoreOf(rule.Accessor, row)
		points = append(points, v.at(start))
	}
	s.Points = points
	return s
}

// score is a value of the first rule at some time (ok false: none, or not a number).
type score struct {
	n  float64
	ok bool
}

func (v score) at(t time.Time) chart.Point { return chart.Point{At: t, Score: v.n, HasScore: v.ok} }

// fieldScores reads the rule's value before and after one recorded field change;
// ok is false when the change is of another field. A value cut by the history
// (rowhistory.MaxValueBytes) reads as none.
func fieldScores(acc string, f hubv1alpha1.FieldChange) (old, cur score, ok bool) {
	root, path, valid := accessor.Split(acc)
	if !valid {
		return old, cur, false
	}
	section := rowhistory.FieldMetrics
	if root == accessor.Metadata {
		section = rowhistory.FieldMetadata
	}
	key, _, _ := strings.Cut(path, ".")
	var wrap func(string) []byte
	switch f.Field {
	case section + "." + key:
		// A key tracked on its own: its value, under its key.
		wrap = func(v string) []byte { return fmt.Appendf(nil, "{%s:%s}", mustQuote(key), v) }
	case section:
		// The whole section tracked as one field.
		wrap = func(v string) []byte { return []byte(v) }
	default:
		return old, cur, false
	}
	read := func(v *string, cut bool) score {
		if v == nil || cut {
			return score{}
		}
		row := &hubv1alpha1.LeaderboardRow{}
		raw := &apiextensionsv1.JSON{Raw: wrap(*v)}
		if root == accessor.Metadata {
			row.Spec.Metadata = raw
		} else {
			row.Spec.Metrics = raw
		}
		n, ok := ranking.ScoreOf(acc, row)
		return score{n, ok}
	}
	return read(f.Old, f.OldTruncated), read(f.New, f.NewTruncated), true
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// historyChart is the history page's chart, or "" on a board that ranks by nothing.
func historyChart(lb *hubv1alpha1.Leaderboard, row *hubv1alpha1.LeaderboardRow) template.HTML {
	if len(lb.Spec.RankBy) == 0 {
		return ""
	}
	return template.HTML(scoreSeries(lb, row).SVG()) //nolint:gosec // chart escapes every text
}
