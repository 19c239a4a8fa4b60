package chart

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

var day0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// Sample boards, shaped like the ones `make dev` installs (hack/dev): one with
// intervals and verified rows, one without uncertainty.
func sampleIntervals() Intervals {
	return Intervals{ID: "intervals", Board: "Terminal-Bench 2.0", Axis: "Accuracy (metrics.accuracy)", HigherBetter: true, Total: 42,
		Rows: []IntervalRow{
			{Rank: 1, RankUpper: 1, Label: "warp-agent <opus>", Score: 0.812, HasScore: true, Low: 0.78, High: 0.844, HasInterval: true, Verified: true, URL: "/leaderboards/demo/tb/main/rows/a/history", ID: "a"},
			{Rank: 2, RankUpper: 1, Label: "codex & co", Score: 0.795, HasScore: true, Low: 0.76, High: 0.83, HasInterval: true, URL: "/leaderboards/demo/tb/main/rows/b/history", ID: "b"},
			{Rank: 3, RankUpper: 3, Label: "a very long agent name that does not fit the label column", Score: 0.61, HasScore: true, Low: 0.58, High: 0.64, HasInterval: true, Verified: true, URL: "/x?y=1&z=2", ID: "c"},
			{Rank: 4, RankUpper: 3, Label: "no interval", Score: 0.6, HasScore: true, URL: "/d", ID: "d"},
			{Rank: 5, RankUpper: 3, Label: "no score", ID: "e"},
		}}
}

func sampleProgress() Progress {
	return Progress{ID: "progress", Board: "Terminal-Bench 2.0", Axis: "Accuracy (metrics.accuracy)", HigherBetter: true,
		Steps: []Step{
			{At: day0, Score: 0.42, Label: "baseline", URL: "/r/1", ID: "1"},
			{At: day0.Add(9 * 24 * time.Hour), Score: 0.61, Label: "a very long agent name that does not fit", URL: "/r/2", ID: "2", Verified: true},
			{At: day0.Add(30 * 24 * time.Hour), Score: 0.795, Label: "codex & co", URL: "/r/3", ID: "3"},
			{At: day0.Add(41 * 24 * time.Hour), Score: 0.812, Label: "warp-agent", URL: "/r/4", ID: "4", Verified: true},
		}}
}

func sampleSeries() Series {
	return Series{ID: "row-score", Row: "warp-agent", Board: "Terminal-Bench 2.0", Axis: "Accuracy (metrics.accuracy)", HigherBetter: true,
		Partial: true,
		Points: []Point{
			{At: day0, Score: 0.7, HasScore: true},
			{At: day0.Add(3 * 24 * time.Hour), HasScore: false},
			{At: day0.Add(5 * 24 * time.Hour), Score: 0.812, HasScore: true},
		}}
}

func TestGolden(t *testing.T) {
	lower := sampleIntervals()
	lower.ID, lower.HigherBetter, lower.Total = "intervals-lower", false, 5
	for i := range lower.Rows {
		lower.Rows[i].HasInterval, lower.Rows[i].RankUpper = false, 0
	}
	seconds := sampleProgress()
	seconds.ID = "progress-seconds"
	for i := range seconds.Steps {
		seconds.Steps[i].At = day0.Add(time.Duration(i*3) * time.Second)
	}
	cases := map[string][]byte{
		"progress-seconds.svg": seconds.SVG(),
		"intervals.svg":        sampleIntervals().SVG(),
		"intervals-plain.svg":  lower.SVG(),
		"intervals-empty.svg":  Intervals{ID: "e", Board: "Empty", Axis: "Score", HigherBetter: true}.SVG(),
		"progress.svg":         sampleProgress().SVG(),
		"progress-one.svg":     Progress{ID: "p1", Board: "One", Axis: "Score", Steps: sampleProgress().Steps[:1]}.SVG(),
		"progress-empty.svg":   Progress{ID: "p0", Board: "Empty", Axis: "Score"}.SVG(),
		"series.svg":           sampleSeries().SVG(),
	}
	for name, got := range cases {
		t.Run(name, func(t *testing.T) {
			checkSVG(t, got)
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file (run with -update after checking the change):\n%s", name, got)
			}
		})
	}
}

// checkSVG: well-formed XML with a title and a description, and nothing a CSP
// without 'unsafe-inline' would refuse or that could run: no script, style, event
// handler, foreign object or external reference.
func checkSVG(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var title, desc bool
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v", err)
			}
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "title":
			title = true
		case "desc":
			desc = true
		case "script", "style", "foreignObject", "image", "use", "iframe":
			t.Errorf("element <%s>", se.Name.Local)
		}
		for _, a := range se.Attr {
			n := strings.ToLower(a.Name.Local)
			if n == "style" || strings.HasPrefix(n, "on") {
				t.Errorf("attribute %s on <%s>", n, se.Name.Local)
			}
			if n == "href" && (strings.Contains(a.Value, ":") && !strings.HasPrefix(a.Value, "/")) {
				t.Errorf("external href %q", a.Value)
			}
		}
	}
	if !title || !desc {
		t.Errorf("title %v, desc %v", title, desc)
	}
}

// Marks are in rank order, one per row, each linking to its row, verified ones by
// shape; text is escaped.
func TestIntervalMarks(t *testing.T) {
	s := string(sampleIntervals().SVG())
	if got := strings.Count(s, `<a class="mark"`); got != 5 {
		t.Errorf("%d marks, want 5", got)
	}
	last := -1
	for _, r := range []string{`data-rank="1"`, `data-rank="2"`, `data-rank="3"`, `data-rank="4"`, `data-rank="5"`} {
		i := strings.Index(s, r)
		if i <= last {
			t.Errorf("%s out of order", r)
		}
		last = i
	}
	if got := strings.Count(s, `class="verified"`); got != 2 {
		t.Errorf("%d diamonds, want 2 (the verified rows)", got)
	}
	for _, want := range []string{`href="/x?y=1&amp;z=2"`, "codex &amp; co", "warp-agent &lt;opus&gt;", `class="leader-band"`,
		"1 of the other rows shown have intervals overlapping #1&#39;s", "Top 5 of 42 rows"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestNumber(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 0.8123456: "0.8123", 12.5: "12.5", 1234.5678: "1235", -0.5: "-0.5", 1e9: "1e+09", 0.00001234: "1.234e-05", 100: "100"} {
		if got := Number(in); got != want {
			t.Errorf("Number(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestNiceScale(t *testing.T) {
	lo, hi, ticks := niceScale(0.58, 0.844, 5)
	if lo != 0.5 || hi != 0.9 || len(ticks) != 5 || ticks[1] != 0.6 || ticks[2] != 0.7 {
		t.Errorf("niceScale = %v %v %v", lo, hi, ticks)
	}
}
