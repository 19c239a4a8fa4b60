// Package boardcsv writes a leaderboard's ranking as CSV: the HTTP API's CSV read and
// the CLI's `row export --format csv` both write it here, so the two give the same
// bytes for the same board (docs/http-api.md, "CSV").
package boardcsv

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/wire"
)

// ContentType is the CSV read's media type (RFC 4180, with its header row).
const ContentType = "text/csv; charset=utf-8; header=present"

// MaxLeafColumns bounds the flattened columns of one root (metadata or metrics). Rows
// are written by many people and each may add keys: without a bound, a board of 100,000
// rows with a thousand distinct keys each would make a CSV of 10^11 cells. When a root's
// rows hold more distinct leaves than this, that root is not flattened: it is one column
// ("metadata" or "metrics") holding each row's whole object as JSON, so nothing is lost
// and a CSV stays within rows × (11 + 2·MaxLeafColumns) cells.
const MaxLeafColumns = 512

// Header returns the header row of a board's CSV for these rows: rank, then rank_upper,
// interval_low and interval_high when the board's rules name an uncertainty, then id,
// created_at and updated_at, then verified (true/false) and the verified run's job_id,
// image_digest and ran_at (docs/verified-rows.md; empty for a row not verified), then
// one column per leaf of the rows' metadata and then
// metrics, named by its accessor ("metrics.usage.tokens"), in byte order. A leaf is a
// value that is not an object (a string, number, boolean, null or array); objects are
// flattened, and an empty object adds no column. A root with more than MaxLeafColumns
// distinct leaves is one column named by the root.
func Header(lb *hubv1alpha1.Leaderboard, rows []ranking.Entry) ([]string, error) {
	h := []string{"rank"}
	if ranking.HasRanges(lb.Spec.RankBy) {
		h = append(h, "rank_upper", "interval_low", "interval_high")
	}
	h = append(h, "id", "created_at", "updated_at", "verified", "job_id", "image_digest", "ran_at")
	for _, root := range []accessor.Root{accessor.Metadata, accessor.Metrics} {
		seen := map[string]bool{}
		for _, e := range rows {
			if err := leaves(raw(e.Row, root), "", seen); err != nil {
				return nil, err
			}
			if len(seen) > MaxLeafColumns {
				break
			}
		}
		if len(seen) > MaxLeafColumns {
			h = append(h, root.String())
			continue
		}
		paths := make([]string, 0, len(seen))
		for p := range seen {
			paths = append(paths, root.String()+"."+p)
		}
		slices.Sort(paths)
		h = append(h, paths...)
	}
	return h, nil
}

// Write writes rows, ranked (in rank order, from the index or ranking.Sort), as the
// board's CSV: the header row, then one record a row, CRLF line ends (RFC 4180). A cell
// is what the column's accessor reads in the row (internal/accessor, as the web page and
// the ranking read it): strings as they are, numbers as their JSON text, booleans
// true/false, null and missing values empty, arrays and objects as JSON. A string cell
// that a spreadsheet would take for a formula (it starts with = + - @, a tab or a
// carriage return) is written with a ' before it; numbers are never changed.
func Write(w io.Writer, lb *hubv1alpha1.Leaderboard, rows []ranking.Entry) error {
	header, err := Header(lb, rows)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(header); err != nil {
		return err
	}
	ranges := ranking.HasRanges(lb.Spec.RankBy)
	fixed := 8
	if ranges {
		fixed = 11
	}
	rec := make([]string, len(header))
	for _, e := range rows {
		clear(rec)
		fixedCells(rec, e, ranges)
		if err := valueCells(rec, header, fixed, e.Row); err != nil {
			return err
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// fixedCells fills the columns every board has: the rank (and with ranges its upper
// bound and interval), the row's id and times, and its provenance.
func fixedCells(rec []string, e ranking.Entry, ranges bool) {
	rec[0] = strconv.Itoa(e.Rank)
	i := 1
	if ranges {
		if e.RankUpper > 0 {
			rec[1] = strconv.Itoa(e.RankUpper)
		}
		if e.Interval.OK {
			rec[2], rec[3] = number(e.Interval.Low), number(e.Interval.High)
		}
		i = 4
	}
	row := e.Row
	rec[i] = hubv1alpha1.ID(row)
	rec[i+1] = wire.Timestamp(hubv1alpha1.CreatedAt(row).Time)
	rec[i+2] = wire.Timestamp(wire.ServedUpdatedAt(&row.ObjectMeta, row.Status.UpdatedAt))
	rec[i+3] = "false"
	if p := wire.ProvenanceOf(row, false); p != nil {
		rec[i+3], rec[i+5] = "true", p.ImageDigest
		if p.JobID != nil {
			rec[i+4] = *p.JobID
		}
		if p.RanAt != nil {
			rec[i+6] = *p.RanAt
		}
	}
}

// valueCells fills the metadata and metrics columns, from header[fixed:] on.
func valueCells(rec, header []string, fixed int, row *hubv1alpha1.LeaderboardRow) error {
	for j := fixed; j < len(header); j++ {
		switch header[j] {
		case accessor.Metadata.String(), accessor.Metrics.String():
			// A root too wide to flatten: the whole object (compact, as the apiserver
			// stores it).
			root := accessor.Metadata
			if header[j] == accessor.Metrics.String() {
				root = accessor.Metrics
			}
			rec[j] = Guard(string(wire.ObjectOrEmpty(raw(row, root))))
			continue
		}
		root, path, _ := accessor.Split(header[j])
		if v, ok := ranking.RawLookup(raw(row, root), path); ok {
			var err error
			if rec[j], err = cell(v); err != nil {
				return err
			}
		}
	}
	return nil
}

func raw(row *hubv1alpha1.LeaderboardRow, root accessor.Root) []byte {
	doc := row.Spec.Metadata
	if root == accessor.Metrics {
		doc = row.Spec.Metrics
	}
	if doc == nil {
		return nil
	}
	return doc.Raw
}

// leaves adds the dotted paths of the leaves of the JSON object doc under prefix to
// seen, stopping once seen holds more than MaxLeafColumns. The raw JSON is scanned in
// place (package ranking's scanner), not decoded.
func leaves(doc []byte, prefix string, seen map[string]bool) error {
	if len(doc) == 0 || bytes.Equal(doc, []byte("null")) {
		return nil
	}
	var err error
	ok := ranking.Members(doc, func(k string, v []byte) {
		switch {
		case err != nil || len(seen) > MaxLeafColumns:
		case v[0] == '{':
			err = leaves(v, prefix+k+".", seen)
		default:
			seen[prefix+k] = true
		}
	})
	if !ok && err == nil {
		err = errors.New("a row's metadata or metrics is not a JSON object")
	}
	return err
}

// cell formats one raw JSON value as a CSV cell.
func cell(v []byte) (string, error) {
	switch c := v[0]; {
	case c == 'n':
		return "", nil
	case c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9'):
		return string(v), nil // true, false, or a number's JSON text
	case c == '"':
		if inner := v[1 : len(v)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return Guard(string(inner)), nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", err
		}
		return Guard(s), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return "", err
	}
	return Guard(b.String()), nil
}

func number(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Guard keeps a spreadsheet from running a text cell as a formula: a cell starting with
// =, +, -, @, a tab or a carriage return gets a ' in front (OWASP's advice for CSV
// injection). Everything else is returned as it is.
func Guard(s string) string {
	if s != "" {
		switch s[0] {
		case '=', '+', '-', '@', '\t', '\r':
			return "'" + s
		}
	}
	return s
}
