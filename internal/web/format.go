package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Cell is one formatted table cell.
type Cell struct {
	// HTML is the cell's content, escaped or sanitised here: templates print it as is.
	HTML template.HTML
	// Title is a tooltip with the exact value when the display rounds it.
	Title string
	// Empty is true when the row has no value for the column.
	Empty bool
}

// formatCell formats the value of one column of a row: the display accessor and type
// when the column has them, else the accessor and type.
func formatCell(col hubv1alpha1.Column, v rowValues) Cell {
	accessor, typ := col.Accessor, col.Type
	if col.DisplayAccessor != "" {
		accessor = col.DisplayAccessor
	}
	if col.DisplayType != "" {
		typ = col.DisplayType
	}
	value, ok := v.lookup(accessor)
	if !ok || value == nil {
		return Cell{HTML: "–", Empty: true}
	}
	return formatValue(typ, value)
}

// formatValue formats a decoded JSON value as typ. A value that does not fit its type
// (a string in a number column) is shown as text rather than hidden.
func formatValue(typ hubv1alpha1.ColumnType, value any) Cell {
	switch typ {
	case hubv1alpha1.ColumnNumber:
		if n, ok := value.(json.Number); ok {
			return formatNumber(n)
		}
	case hubv1alpha1.ColumnBoolean:
		if b, ok := value.(bool); ok {
			return formatBool(b)
		}
	case hubv1alpha1.ColumnDate:
		if c, ok := formatDate(value); ok {
			return c
		}
	case hubv1alpha1.ColumnLink:
		if c, ok := formatLink(value); ok {
			return c
		}
	case hubv1alpha1.ColumnMarkdown:
		if s, ok := value.(string); ok {
			return Cell{HTML: `<div class="md">` + renderMarkdown(s) + `</div>`}
		}
	}
	return Cell{HTML: template.HTML(template.HTMLEscapeString(plainText(value)))}
}

// plainText is a value as a reader would type it: strings bare, other values as JSON.
func plainText(value any) string {
	switch v := value.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Sprint(value)
	}
	return string(b)
}

// formatNumber shows integers whole and fractions with four significant decimals,
// which is what a score table needs; the exact value is the tooltip when rounded.
func formatNumber(n json.Number) Cell {
	exact := n.String()
	if i, err := strconv.ParseInt(exact, 10, 64); err == nil {
		return Cell{HTML: template.HTML(strconv.FormatInt(i, 10))}
	}
	f, err := strconv.ParseFloat(exact, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return Cell{HTML: template.HTML(template.HTMLEscapeString(exact))}
	}
	shown := roundNumber(f)
	c := Cell{HTML: template.HTML(template.HTMLEscapeString(shown))}
	if shown != exact {
		c.Title = exact
	}
	return c
}

func roundNumber(f float64) string {
	abs := math.Abs(f)
	switch {
	case f == math.Trunc(f) && abs < 1e15:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case abs < 1 || abs >= 1e15:
		// 4 significant digits: 0.8512, 0.0001235, 1.235e-05, 1.235e+15.
		return strconv.FormatFloat(f, 'g', 4, 64)
	default:
		s := strconv.FormatFloat(f, 'f', 4, 64)
		return strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
}

func formatBool(b bool) Cell {
	if b {
		return Cell{HTML: `<span class="bool yes" title="true" aria-label="true">✓</span>`}
	}
	return Cell{HTML: `<span class="bool no" title="false" aria-label="false">✗</span>`}
}

// dateLayouts are the date forms rows carry, most precise first.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"}

// formatDate shows a date in ISO 8601: dates as 2026-11-21, instants in UTC as
// 2026-11-21T23:32:09Z. Numbers are Unix seconds.
func formatDate(value any) (Cell, bool) {
	var t time.Time
	dateOnly := false
	switch v := value.(type) {
	case string:
		parsed := false
		for _, layout := range dateLayouts {
			if p, err := time.Parse(layout, v); err == nil {
				t, parsed, dateOnly = p, true, layout == "2006-01-02"
				break
			}
		}
		if !parsed {
			return Cell{}, false
		}
	case json.Number:
		sec, err := v.Float64()
		if err != nil || math.IsInf(sec, 0) || math.Abs(sec) > 1e12 {
			return Cell{}, false
		}
		whole, frac := math.Modf(sec)
		t = time.Unix(int64(whole), int64(frac*1e9))
	default:
		return Cell{}, false
	}
	var shown string
	if dateOnly {
		shown = t.Format("2006-01-02")
	} else {
		shown = t.UTC().Format(time.RFC3339)
	}
	esc := template.HTMLEscapeString(shown)
	return Cell{HTML: template.HTML(`<time datetime="` + esc + `">` + esc + `</time>`)}, true
}

// formatLink shows a URL string or {url, label} as an anchor when the URL is http or
// https; any other URL is shown as text, never as a link.
func formatLink(value any) (Cell, bool) {
	var href, label string
	switch v := value.(type) {
	case string:
		href, label = v, v
	case map[string]any:
		u, ok := v["url"].(string)
		if !ok {
			return Cell{}, false
		}
		href, label = u, u
		if l, ok := v["label"].(string); ok && l != "" {
			label = l
		}
	default:
		return Cell{}, false
	}
	text := template.HTMLEscapeString(label)
	if !safeURL(href) {
		return Cell{HTML: template.HTML(text)}, true
	}
	return Cell{HTML: template.HTML(`<a href="` + template.HTMLEscapeString(href) + `" rel="` + rowLinkRel + `">` + text + `</a>`)}, true
}
