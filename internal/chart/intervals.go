package chart

import (
	"strconv"
	"strings"
)

// IntervalRow is one ranked row of an interval chart.
type IntervalRow struct {
	// Rank is the row's rank; RankUpper the best rank its uncertainty supports (0 when
	// the board has no ranges).
	Rank, RankUpper int
	// Label names the row (its first column, as the table shows it).
	Label string
	// Score is the row's value on the board's first rank-by rule; HasScore is false
	// when the row has no number there (it gets a mark without a dot).
	Score    float64
	HasScore bool
	// Low and High are the row's interval when HasInterval.
	Low, High   float64
	HasInterval bool
	// Verified rows are drawn as diamonds, the others as dots.
	Verified bool
	// URL is the row's page, which the mark links to ("" for no link).
	URL string
	// ID is the row's id, written as data-row for tests and scripts.
	ID string
}

// Intervals is the interval chart of a board's top rows, in rank order.
type Intervals struct {
	// ID is the SVG element's id (unique on its page).
	ID string
	// Board is the board's title; Axis names the score ("Reward (metrics.reward)").
	Board, Axis string
	// HigherBetter is the first rule's direction.
	HigherBetter bool
	// Rows are the rows shown, in rank order.
	Rows []IntervalRow
	// Total is the number of ranked rows on the board.
	Total int
}

// Layout of the interval chart.
const (
	ivTop    = 46.0
	ivRowH   = 20.0
	ivBottom = 62.0
	ivPlotX0 = 250.0
	ivPlotX1 = Width - 80.0
)

// SVG draws the chart: one mark per row, top to bottom in rank order, each a link to
// its row holding the rank, the label, the interval as a whisker and the score as a dot
// (a diamond for a verified row). The leader's interval, when it has one, is a band
// behind every row, so the rows whose intervals reach into it stand out.
func (c Intervals) SVG() []byte {
	var b svg
	n := len(c.Rows)
	bottom := ivTop + float64(max(n, 1))*ivRowH
	b.open(c.ID, bottom+ivBottom, c.title(), c.desc())
	b.heading(c.caption(), c.subcaption())

	lo, hi, ok := c.extent()
	if !ok {
		lo, hi = 0, 1
	}
	lo, hi, ticks := niceScale(lo, hi, 5)
	x := scale{lo, hi, ivPlotX0, ivPlotX1}

	// Grid and axis.
	b.f(`<g stroke="%s" stroke-width="1">`, colGrid)
	for _, t := range ticks {
		b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, num(x.at(t)), num(ivTop-4), num(x.at(t)), num(bottom))
	}
	b.WriteString(`</g>`)
	b.f(`<g fill="%s" text-anchor="middle">`, colMuted)
	for _, t := range ticks {
		b.f(`<text x="%s" y="%s">%s</text>`, num(x.at(t)), num(bottom+16), Number(t))
	}
	b.WriteString(`</g>`)

	// The leader's interval, behind the rows.
	if n > 0 && c.Rows[0].HasInterval {
		l, h := x.at(c.Rows[0].Low), x.at(c.Rows[0].High)
		b.f(`<g class="leader-band"><rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
			num(l), num(ivTop-4), num(h-l), num(bottom-ivTop+4), colBand)
		b.f(`<g stroke="%s" stroke-dasharray="3 3"><line x1="%s" y1="%s" x2="%s" y2="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s"/></g></g>`,
			colBandRim, num(l), num(ivTop-4), num(l), num(bottom), num(h), num(ivTop-4), num(h), num(bottom))
	}

	if n == 0 {
		b.f(`<text x="%s" y="%s" fill="%s" text-anchor="middle">No ranked rows yet.</text>`, num(Width/2), num(ivTop+14), colMuted)
	}
	for i, r := range c.Rows {
		b.intervalRow(r, x, ivTop+float64(i)*ivRowH+ivRowH/2)
	}
	c.legend(&b, bottom)
	b.close()
	return b.Bytes()
}

// intervalRow draws one row's mark on the line at y.
func (b *svg) intervalRow(r IntervalRow, x scale, y float64) {
	b.openMark(r.URL, strconv.Itoa(r.Rank), r.ID, r.describe())
	b.f(`<text x="34" y="%s" text-anchor="end" font-weight="600" fill="%s">%d</text>`, num(y+4), colText, r.Rank)
	b.f(`<text x="42" y="%s" fill="%s">`, num(y+4), colText)
	b.text(cut(r.Label, 30))
	b.WriteString(`</text>`)
	if r.HasInterval {
		l, h := x.at(r.Low), x.at(r.High)
		b.f(`<path d="M%s %sV%sM%s %sH%sM%s %sV%s" stroke="%s" stroke-width="1.5" fill="none"/>`,
			num(l), num(y-4), num(y+4), num(l), num(y), num(h), num(h), num(y-4), num(y+4), colMuted)
	}
	if r.HasScore {
		b.dot(x.at(r.Score), y, r.Verified)
		b.f(`<text x="%d" y="%s" text-anchor="end" fill="%s">%s</text>`, Width-10, num(y+4), colText, Number(r.Score))
	} else {
		b.f(`<text x="%s" y="%s" fill="%s">no score</text>`, num(ivPlotX0), num(y+4), colMuted)
	}
	b.WriteString(`</a>`)
}

// legend writes the axis name and the legend below the rows.
func (c Intervals) legend(b *svg, bottom float64) {
	b.f(`<text x="%s" y="%s" text-anchor="middle" fill="%s">`, num((ivPlotX0+ivPlotX1)/2), num(bottom+32), colText)
	b.text(c.axisLabel())
	b.WriteString(`</text>`)
	ly := bottom + 50
	b.f(`<g fill="%s"><circle cx="18" cy="%s" r="4.5" fill="%s"/><text x="28" y="%s">row</text>`, colText, num(ly-4), colMark, num(ly))
	b.f(`<path d="M72 %sL78 %sL72 %sL66 %sZ" fill="%s"/><text x="84" y="%s">verified row</text>`,
		num(ly-10), num(ly-4), num(ly+2), num(ly-4), colVerify, num(ly))
	if c.hasIntervals() {
		b.f(`<path d="M176 %sV%sM176 %sH206M206 %sV%s" stroke="%s" stroke-width="1.5" fill="none"/><text x="212" y="%s">interval</text>`,
			num(ly-8), num(ly), num(ly-4), num(ly-8), num(ly), colMuted, num(ly))
		if len(c.Rows) > 0 && c.Rows[0].HasInterval {
			b.f(`<rect x="276" y="%s" width="24" height="12" fill="%s" stroke="%s" stroke-dasharray="3 3"/><text x="306" y="%s">the leader's interval: rows reaching into it are not apart from #1</text>`,
				num(ly-10), colBand, colBandRim, num(ly))
		}
	}
	b.WriteString(`</g>`)
}

func (c Intervals) hasIntervals() bool {
	for _, r := range c.Rows {
		if r.HasInterval {
			return true
		}
	}
	return false
}

// extent is the range of the scores and intervals shown.
func (c Intervals) extent() (lo, hi float64, ok bool) {
	for _, r := range c.Rows {
		vals := []float64{}
		if r.HasScore {
			vals = append(vals, r.Score)
		}
		if r.HasInterval {
			vals = append(vals, r.Low, r.High)
		}
		for _, v := range vals {
			if !ok {
				lo, hi, ok = v, v, true
			}
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return lo, hi, ok
}

func (c Intervals) direction() string {
	if c.HigherBetter {
		return "higher is better"
	}
	return "lower is better"
}

func (c Intervals) axisLabel() string { return c.Axis + " (" + c.direction() + ")" }

func (c Intervals) title() string { return "Scores of the top rows of " + c.Board }

func (c Intervals) caption() string {
	if c.Total > len(c.Rows) {
		return "Top " + strconv.Itoa(len(c.Rows)) + " of " + thousands(c.Total) + " rows by " + c.Axis
	}
	return "All " + thousands(len(c.Rows)) + " rows by " + c.Axis
}

func (c Intervals) subcaption() string {
	if c.hasIntervals() {
		return "In rank order; whiskers are each row's interval. Rows whose intervals overlap are not apart beyond doubt."
	}
	return "In rank order. This board's rules name no uncertainty, so no intervals are drawn."
}

// desc is the chart's text alternative: what it shows and what a reader would see.
func (c Intervals) desc() string {
	var s strings.Builder
	s.WriteString(c.caption() + " (" + c.direction() + "), in rank order. ")
	if len(c.Rows) == 0 {
		s.WriteString("The board has no ranked rows yet.")
		return s.String()
	}
	verified := 0
	for _, r := range c.Rows {
		if r.Verified {
			verified++
		}
	}
	top := c.Rows[0]
	s.WriteString("#1 is " + top.Label)
	if top.HasScore {
		s.WriteString(" with " + Number(top.Score))
	}
	if top.HasInterval {
		s.WriteString(" (interval " + Number(top.Low) + " to " + Number(top.High) + ")")
		overlap := 0
		for _, r := range c.Rows[1:] {
			if r.HasInterval && r.High >= top.Low && r.Low <= top.High {
				overlap++
			}
		}
		s.WriteString(". " + strconv.Itoa(overlap) + " of the other rows shown have intervals overlapping #1's")
	}
	s.WriteString(". " + strconv.Itoa(verified) + " of the rows shown are verified (diamonds). The table below lists every value.")
	return s.String()
}

// describe is a mark's tooltip: the row's numbers in words.
func (r IntervalRow) describe() string {
	s := "#" + strconv.Itoa(r.Rank) + " " + r.Label
	if r.HasScore {
		s += ": " + Number(r.Score)
	} else {
		s += ": no score"
	}
	if r.HasInterval {
		s += ", interval " + Number(r.Low) + " to " + Number(r.High)
	}
	if r.RankUpper > 0 && r.RankUpper < r.Rank {
		s += ", ranks " + strconv.Itoa(r.RankUpper) + "–" + strconv.Itoa(r.Rank) + " supported"
	}
	if r.Verified {
		s += ", verified"
	}
	return s
}

// thousands writes n with comma separators (20000 -> "20,000").
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
