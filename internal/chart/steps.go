package chart

import (
	"strconv"
	"strings"
	"time"
)

// Step is one row that moved a board's state of the art: from At on, its score is the
// best on the board.
type Step struct {
	At    time.Time
	Score float64
	// Label names the row; URL is its page ("" for no link); ID is written as data-row.
	Label, URL, ID string
	Verified       bool
}

// Progress is the progress chart of a board: the best score over time, as a step line.
type Progress struct {
	ID, Board, Axis string
	HigherBetter    bool
	// Steps are the rows that moved the state of the art, oldest first, each better
	// than the one before.
	Steps []Step
}

// Point is one known value of a row's score: from At on (until the next point) the row
// had Score, or no score when !HasScore.
type Point struct {
	At       time.Time
	Score    float64
	HasScore bool
}

// Series is a row's score over its changes.
type Series struct {
	ID, Row, Board, Axis string
	HigherBetter         bool
	Points               []Point
	// Partial is true when older changes were not kept: the first point is the oldest
	// value known, not the value the row was created with.
	Partial bool
}

// Layout of the step charts.
const (
	stTop    = 54.0
	stPlotH  = 200.0
	stBottom = 58.0
	stPlotX0 = 70.0
	stPlotX1 = Width - 40.0
)

// stepMark is one point of a step chart.
type stepMark struct {
	at                   time.Time
	score                float64
	has                  bool
	label, url, id, tip  string
	verified, labelShown bool
}

// stepScales are the scales of a step chart: y for scores, x for times from t0 to t1.
type stepScales struct {
	y, x   scale
	t0, t1 time.Time
	ticks  []float64
}

func (s stepScales) xt(t time.Time) float64 { return s.x.at(float64(t.Sub(s.t0))) }

// stepScalesOf fits the scales to the marks. The time axis runs from the first mark to
// a tenth past the last (the chart reads no clock: the line runs on past the last
// mark, which still holds).
func stepScalesOf(marks []stepMark) stepScales {
	var lo, hi float64
	ok := false
	for _, m := range marks {
		if m.has {
			if !ok {
				lo, hi, ok = m.score, m.score, true
			}
			lo, hi = min(lo, m.score), max(hi, m.score)
		}
	}
	if !ok {
		lo, hi = 0, 1
	}
	var s stepScales
	lo, hi, s.ticks = niceScale(lo, hi, 4)
	s.y = scale{lo, hi, stTop + stPlotH, stTop}
	if len(marks) > 0 {
		s.t0, s.t1 = marks[0].at, marks[len(marks)-1].at
	}
	if span := s.t1.Sub(s.t0); span > 0 {
		s.t1 = s.t1.Add(max(span/10, time.Second))
	} else {
		// One instant: it starts the axis, which runs a day on.
		s.t1 = s.t1.Add(24 * time.Hour)
	}
	s.x = scale{0, float64(s.t1.Sub(s.t0)), stPlotX0, stPlotX1}
	return s
}

// stepChart draws a step line through marks (oldest first).
func stepChart(id, title, desc, caption, sub, axis string, marks []stepMark, legend bool) []byte {
	var b svg
	b.open(id, stTop+stPlotH+stBottom, title, desc)
	b.heading(caption, sub)
	s := stepScalesOf(marks)
	b.stepAxes(s)
	if len(marks) == 0 {
		b.f(`<text x="%s" y="%s" fill="%s" text-anchor="middle">No scores yet.</text>`, num(Width/2), num(stTop+stPlotH/2), colMuted)
	}
	b.stepLine(s, marks)
	for i, m := range marks {
		if m.has {
			b.stepMark(s, m, i)
		}
	}
	bottom := stTop + stPlotH
	b.f(`<text x="%s" y="%s" text-anchor="middle" fill="%s">`, num((stPlotX0+stPlotX1)/2), num(bottom+36), colText)
	b.text(axis + " against time (UTC)")
	b.WriteString(`</text>`)
	if legend {
		b.f(`<g fill="%s"><circle cx="18" cy="%s" r="4.5" fill="%s"/><text x="28" y="%s">row</text>`, colText, num(bottom+48), colMark, num(bottom+52))
		b.f(`<path d="M72 %sL78 %sL72 %sL66 %sZ" fill="%s"/><text x="84" y="%s">verified row</text></g>`,
			num(bottom+42), num(bottom+48), num(bottom+54), num(bottom+48), colVerify, num(bottom+52))
	}
	b.close()
	return b.Bytes()
}

// stepAxes draws the grid, the score ticks and the time ticks.
func (b *svg) stepAxes(s stepScales) {
	b.f(`<g stroke="%s" stroke-width="1">`, colGrid)
	for _, t := range s.ticks {
		b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, num(stPlotX0), num(s.y.at(t)), num(stPlotX1), num(s.y.at(t)))
	}
	b.WriteString(`</g>`)
	b.f(`<g fill="%s">`, colMuted)
	for _, t := range s.ticks {
		b.f(`<text x="%s" y="%s" text-anchor="end">%s</text>`, num(stPlotX0-6), num(s.y.at(t)+4), Number(t))
	}
	bottom := stTop + stPlotH
	b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`, num(stPlotX0), num(bottom), num(stPlotX1), num(bottom), colMuted)
	// Dates on an axis of days or more; times of day (UTC) on a shorter one.
	layout := time.DateOnly
	switch span := s.t1.Sub(s.t0); {
	case span < 10*time.Minute:
		layout = time.TimeOnly
	case span < 4*24*time.Hour:
		layout = "Jan 2 15:04"
	}
	for i := range 5 {
		t := s.t0.Add(time.Duration(float64(s.t1.Sub(s.t0)) * float64(i) / 4))
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		b.f(`<text x="%s" y="%s" text-anchor="%s">%s</text>`, num(s.xt(t)), num(bottom+16), anchor, t.UTC().Format(layout))
	}
	b.WriteString(`</g>`)
}

// stepLine draws the step line: flat from each mark to the next, then up (or down) to
// it; a mark without a score breaks it.
func (b *svg) stepLine(s stepScales, marks []stepMark) {
	var d strings.Builder
	pen := false
	for i, m := range marks {
		if !m.has {
			pen = false
			continue
		}
		if pen {
			d.WriteString("H" + num(s.xt(m.at)) + "V" + num(s.y.at(m.score)))
		} else {
			d.WriteString("M" + num(s.xt(m.at)) + " " + num(s.y.at(m.score)))
			pen = true
		}
		next := s.t1
		if i+1 < len(marks) {
			next = marks[i+1].at
		}
		d.WriteString("H" + num(s.xt(next)))
		if i+1 < len(marks) && !marks[i+1].has {
			pen = false
		}
	}
	if d.Len() > 0 {
		b.f(`<path class="step" d="%s" stroke="%s" stroke-width="2" fill="none"/>`, d.String(), colStep)
	}
}

// stepMark draws the i-th mark with its label.
func (b *svg) stepMark(s stepScales, m stepMark, i int) {
	cx, cy := s.xt(m.at), s.y.at(m.score)
	b.openMark(m.url, "", m.id, m.tip)
	b.dot(cx, cy, m.verified)
	if m.labelShown {
		// Labels alternate above and below the line, and turn left near the right edge.
		ly := cy - 9
		if i%2 == 1 {
			ly = cy + 18
		}
		lx, anchor := cx+7, "start"
		if cx > stPlotX1-170 {
			lx, anchor = cx-7, "end"
		}
		b.f(`<text x="%s" y="%s" text-anchor="%s" fill="%s">`, num(lx), num(ly), anchor, colText)
		b.text(m.label)
		b.WriteString(`</text>`)
	}
	b.WriteString(`</a>`)
}

// tipLayout is how a mark's tooltip gives its time.
const tipLayout = "2006-01-02 15:04 UTC"

// maxLabels is how many step labels a progress chart writes (the newest ones): more
// would overlap; every step keeps its tooltip.
const maxLabels = 8

// SVG draws the progress chart: a step line of the best score on the board at each
// date, a mark per row that moved it, labelled with the row and its score (the newest
// maxLabels of them), each a link to its row.
func (c Progress) SVG() []byte {
	dir := "lower is better"
	if c.HigherBetter {
		dir = "higher is better"
	}
	marks := make([]stepMark, len(c.Steps))
	for i, s := range c.Steps {
		tip := s.Label + ": " + Number(s.Score) + " from " + s.At.UTC().Format(tipLayout)
		if s.Verified {
			tip += ", verified"
		}
		marks[i] = stepMark{at: s.At, score: s.Score, has: true, label: cut(s.Label, 22) + " " + Number(s.Score),
			url: s.URL, id: s.ID, tip: tip, verified: s.Verified, labelShown: i >= len(c.Steps)-maxLabels}
	}
	title := "State of the art of " + c.Board + " over time"
	caption := "Best " + c.Axis + " over time"
	var desc strings.Builder
	desc.WriteString(caption + " (" + dir + "): a step line of the best score on the board at each date. ")
	switch n := len(c.Steps); n {
	case 0:
		desc.WriteString("The board has no scores yet.")
	default:
		first, last := c.Steps[0], c.Steps[n-1]
		moved := strconv.Itoa(n) + " rows moved it"
		if n == 1 {
			moved = "1 row set it"
		}
		desc.WriteString(moved + ", from " + first.Label + " with " + Number(first.Score) + " on " +
			first.At.UTC().Format(time.DateOnly) + " to " + last.Label + " with " + Number(last.Score) + " on " +
			last.At.UTC().Format(time.DateOnly) + ". ")
		var names []string
		for _, s := range c.Steps {
			names = append(names, s.Label+" "+Number(s.Score)+" ("+s.At.UTC().Format(time.DateOnly)+")")
		}
		desc.WriteString("In order: " + strings.Join(names, "; ") + ".")
	}
	sub := strconv.Itoa(len(c.Steps)) + " rows moved it; each mark is the row that set a new best, from the date its score was set."
	if len(c.Steps) == 1 {
		sub = "One row set it; the mark is that row, from the date its score was set."
	}
	return stepChart(c.ID, title, desc.String(), caption, sub, c.Axis+" ("+dir+")", marks, true)
}

// SVG draws a row's score over its changes: a step line from each known value to the
// next, a mark labelled with the value at each change.
func (c Series) SVG() []byte {
	dir := "lower is better"
	if c.HigherBetter {
		dir = "higher is better"
	}
	marks := make([]stepMark, len(c.Points))
	var vals []string
	for i, p := range c.Points {
		day := p.At.UTC().Format(time.RFC3339)
		v := "no score"
		if p.HasScore {
			v = Number(p.Score)
		}
		vals = append(vals, v+" from "+day)
		marks[i] = stepMark{at: p.At, score: p.Score, has: p.HasScore, label: v, tip: v + " from " + day, labelShown: true}
	}
	title := "Score of a row of " + c.Board + " over its changes"
	caption := c.Axis + " of this row over its changes"
	var desc strings.Builder
	desc.WriteString(caption + " (" + dir + "). ")
	if len(c.Points) == 0 {
		desc.WriteString("The row has no score.")
	} else {
		desc.WriteString(strings.Join(vals, "; ") + ".")
	}
	sub := "Each mark is a value the row held, from the time it was set."
	if c.Partial {
		desc.WriteString(" Older changes were not kept.")
		sub = "Each mark is a value the row held, from the time it was set; older changes were not kept."
	}
	return stepChart(c.ID, title, desc.String(), caption, sub, c.Axis+" ("+dir+")", marks, false)
}
