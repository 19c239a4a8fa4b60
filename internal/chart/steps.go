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

// stepChart draws a step line through marks (oldest first).
func stepChart(id, title, desc, caption, sub, axis string, marks []stepMark, legend bool) []byte {
	var b svg
	height := stTop + stPlotH + stBottom
	b.open(id, height, title, desc)
	b.f(`<text x="12" y="20" font-size="14" font-weight="600" fill="%s">`, colText)
	b.text(caption)
	b.f(`</text><text x="12" y="36" fill="%s">`, colMuted)
	b.text(sub)
	b.WriteString(`</text>`)

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
	lo, hi, ticks := niceScale(lo, hi, 4)
	y := scale{lo, hi, stTop + stPlotH, stTop}
	// The time axis runs from the first mark to a tenth past the last (the chart reads
	// no clock: the line runs on past the last mark, which still holds).
	var t0, t1 time.Time
	if len(marks) > 0 {
		t0, t1 = marks[0].at, marks[len(marks)-1].at
	}
	if span := t1.Sub(t0); span > 0 {
		t1 = t1.Add(max(span/10, time.Second))
	} else {
		// One instant: it starts the axis, which runs a day on.
		t1 = t1.Add(24 * time.Hour)
	}
	x := scale{0, float64(t1.Sub(t0)), stPlotX0, stPlotX1}
	xt := func(t time.Time) float64 { return x.at(float64(t.Sub(t0))) }

	b.f(`<g stroke="%s" stroke-width="1">`, colGrid)
	for _, t := range ticks {
		b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, num(stPlotX0), num(y.at(t)), num(stPlotX1), num(y.at(t)))
	}
	b.WriteString(`</g>`)
	b.f(`<g fill="%s">`, colMuted)
	for _, t := range ticks {
		b.f(`<text x="%s" y="%s" text-anchor="end">%s</text>`, num(stPlotX0-6), num(y.at(t)+4), Number(t))
	}
	bottom := stTop + stPlotH
	b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`, num(stPlotX0), num(bottom), num(stPlotX1), num(bottom), colMuted)
	// Dates on an axis of days or more; times of day (UTC) on a shorter one.
	layout := time.DateOnly
	switch span := t1.Sub(t0); {
	case span < 10*time.Minute:
		layout = time.TimeOnly
	case span < 4*24*time.Hour:
		layout = "Jan 2 15:04"
	}
	for i := range 5 {
		t := t0.Add(time.Duration(float64(t1.Sub(t0)) * float64(i) / 4))
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		b.f(`<text x="%s" y="%s" text-anchor="%s">%s</text>`, num(xt(t)), num(bottom+16), anchor, t.UTC().Format(layout))
	}
	b.WriteString(`</g>`)

	if len(marks) == 0 {
		b.f(`<text x="%s" y="%s" fill="%s" text-anchor="middle">No scores yet.</text>`, num(Width/2), num(stTop+stPlotH/2), colMuted)
	}
	// The step line: flat from each mark to the next, then up (or down) to it.
	var d strings.Builder
	pen := false
	for i, m := range marks {
		if !m.has {
			pen = false
			continue
		}
		if pen {
			d.WriteString("H" + num(xt(m.at)) + "V" + num(y.at(m.score)))
		} else {
			d.WriteString("M" + num(xt(m.at)) + " " + num(y.at(m.score)))
			pen = true
		}
		next := t1
		if i+1 < len(marks) {
			next = marks[i+1].at
		}
		d.WriteString("H" + num(xt(next)))
		if i+1 < len(marks) && !marks[i+1].has {
			pen = false
		}
	}
	if d.Len() > 0 {
		b.f(`<path class="step" d="%s" stroke="%s" stroke-width="2" fill="none"/>`, d.String(), colStep)
	}
	for i, m := range marks {
		if !m.has {
			continue
		}
		cx, cy := xt(m.at), y.at(m.score)
		if m.url != "" {
			b.WriteString(`<a class="mark" href="`)
			b.text(m.url)
			b.WriteString(`"`)
		} else {
			b.WriteString(`<a class="mark"`)
		}
		if m.id != "" {
			b.WriteString(` data-row="`)
			b.text(m.id)
			b.WriteString(`"`)
		}
		b.WriteString(`><title>`)
		b.text(m.tip)
		b.WriteString(`</title>`)
		if m.verified {
			b.f(`<path class="verified" d="M%s %sL%s %sL%s %sL%s %sZ" fill="%s"/>`,
				num(cx), num(cy-6), num(cx+6), num(cy), num(cx), num(cy+6), num(cx-6), num(cy), colVerify)
		} else {
			b.f(`<circle cx="%s" cy="%s" r="4.5" fill="%s"/>`, num(cx), num(cy), colMark)
		}
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
