// Package chart draws Podium's leaderboard charts as SVG from plain values
// (docs/web.md, "Charts"): the interval chart of a board's top rows, the progress chart
// of its state of the art over time, and a row's score over its changes. It is pure: no
// I/O, no clock, no randomness, so the same input gives the same bytes (the golden files
// under testdata hold them).
//
// The SVG carries no script, no style element or attribute and no external reference:
// colours and fonts are presentation attributes, so the charts obey the pages'
// Content-Security-Policy inline and the image CSP when served alone. Each chart has a
// <title> and a <desc> (its text alternative), and every mark a <title> with its
// numbers. Colours pass WCAG AA against the white background (text 4.5:1, marks 3:1)
// and never carry meaning alone: verified rows have their own shape, the state of the
// art is a labelled step line.
package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Colours, each with its contrast ratio against the white background.
const (
	colText    = "#1f2328" // 15.8:1
	colMuted   = "#59636e" // 6.2:1: axis labels, intervals
	colGrid    = "#d1d9e0" // decoration only: the grid lines carry no meaning
	colMark    = "#0550ae" // 7.6:1: a row's score
	colVerify  = "#116329" // 7.4:1: a verified row's score (a diamond, not a dot)
	colBand    = "#ddf4ff" // decoration only: the leader's interval behind the rows
	colBandRim = "#0969da" // 4.6:1: the band's edges (dashed)
	colStep    = "#0550ae"
	fontFamily = "system-ui, -apple-system, Segoe UI, DejaVu Sans, sans-serif"
)

// Width of every chart, in SVG user units; the pages scale it to their column.
const Width = 760

// svg collects a chart's markup.
type svg struct{ bytes.Buffer }

func (b *svg) f(format string, args ...any) { fmt.Fprintf(&b.Buffer, format, args...) }

// text writes s as XML character data (quotes escaped too, so it also serves inside
// attributes); characters XML cannot hold become U+FFFD.
func (b *svg) text(s string) { _ = xml.EscapeText(&b.Buffer, []byte(s)) }

// open starts a chart of the given height, with its title and description; id prefixes
// the ids of the title and description (aria-labelledby), so that several charts can
// share a page.
func (b *svg) open(id string, height float64, title, desc string) {
	b.f(`<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="%s" viewBox="0 0 %d %s" width="%d" height="%s" role="img" aria-labelledby="%s-title %s-desc" font-family="%s" font-size="12">`,
		id, Width, num(height), Width, num(height), id, id, fontFamily)
	b.f(`<title id="%s-title">`, id)
	b.text(title)
	b.f(`</title><desc id="%s-desc">`, id)
	b.text(desc)
	b.f(`</desc><rect width="%d" height="%s" fill="#ffffff"/>`, Width, num(height))
}

func (b *svg) close() { b.WriteString("</svg>\n") }

// heading writes the chart's visible caption and the line under it.
func (b *svg) heading(caption, sub string) {
	b.f(`<text x="12" y="20" font-size="14" font-weight="600" fill="%s">`, colText)
	b.text(caption)
	b.f(`</text><text x="12" y="36" fill="%s">`, colMuted)
	b.text(sub)
	b.WriteString(`</text>`)
}

// openMark starts a mark: a link to url (none when ""), with data-rank and data-row
// when given, and its tooltip.
func (b *svg) openMark(url, rank, id, tip string) {
	b.WriteString(`<a class="mark"`)
	if url != "" {
		b.WriteString(` href="`)
		b.text(url)
		b.WriteString(`"`)
	}
	if rank != "" {
		b.f(` data-rank="%s"`, rank)
	}
	if id != "" {
		b.WriteString(` data-row="`)
		b.text(id)
		b.WriteString(`"`)
	}
	b.WriteString(`><title>`)
	b.text(tip)
	b.WriteString(`</title>`)
}

// dot draws a score: a diamond for a verified row, a dot otherwise.
func (b *svg) dot(cx, cy float64, verified bool) {
	if verified {
		b.f(`<path class="verified" d="M%s %sL%s %sL%s %sL%s %sZ" fill="%s"/>`,
			num(cx), num(cy-6), num(cx+6), num(cy), num(cx), num(cy+6), num(cx-6), num(cy), colVerify)
		return
	}
	b.f(`<circle cx="%s" cy="%s" r="4.5" fill="%s"/>`, num(cx), num(cy), colMark)
}

// num prints a coordinate: one decimal at most, so the output is stable and small.
func num(v float64) string {
	s := strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	if s == "-0" {
		return "0"
	}
	return s
}

// Number prints a score for people: up to four significant digits, no exponent for
// usual magnitudes ("0.8123", "12.5", "1234").
func Number(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	a := math.Abs(v)
	if a >= 1e6 || a < 1e-4 {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	digits := max(0, 3-int(math.Floor(math.Log10(a))))
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// cut shortens s to n characters with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// scale maps values of [lo, hi] onto pixels [p0, p1].
type scale struct{ lo, hi, p0, p1 float64 }

func (s scale) at(v float64) float64 {
	if s.hi == s.lo {
		return (s.p0 + s.p1) / 2
	}
	return s.p0 + (v-s.lo)/(s.hi-s.lo)*(s.p1-s.p0)
}

// niceScale widens [lo, hi] to round ends and returns about n ticks between them: steps
// of 1, 2 or 5 times a power of ten.
func niceScale(lo, hi float64, n int) (float64, float64, []float64) {
	if lo == hi {
		d := math.Abs(lo) * 0.05
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	lo = math.Floor(lo/step) * step
	hi = math.Ceil(hi/step) * step
	var ticks []float64
	for i := 0; ; i++ {
		t := lo + float64(i)*step
		if t > hi+step/1e6 {
			break
		}
		// Round away the float noise of the multiplication (0.30000000000000004).
		dec := max(0, -int(math.Floor(math.Log10(step))))
		t, _ = strconv.ParseFloat(strconv.FormatFloat(t, 'f', dec, 64), 64)
		ticks = append(ticks, t)
	}
	return lo, hi, ticks
}
