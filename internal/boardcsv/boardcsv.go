// Package boardcsv writes a leaderboard's ranking as CSV: the HTTP API's CSV read and
// the CLI's `row export --format csv` both write it here, so the two give the same
// bytes for the same board (docs/http-api.md, "CSV").
package boardcsv

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"
	"strconv"

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
// and a CSV stays within rows × (7 + 2·MaxLeafColumns) cells.
const MaxLeafColumns = 512

// Header returns the header row of a board's CSV for these rows: rank, then rank_upper,
// interval_low and interval_high when the board's rules name an uncertainty, then id,
// created_at and updated_at, then one column per leaf of the rows' metadata and then
// metrics, named by its accessor ("metrics.usage.tokens"), in byte order. A leaf is a
// value that is not an object (a string, number, boolean, null or array); objects are
// flattened, and an empty object adds no column. A root with more than MaxLeafColumns
// distinct leaves is one column named by the root.
func Header(lb *hubv1alpha1.Leaderboard, rows []ranking.Entry) ([]string, error) {
	h := []string{"rank"}
	if ranking.HasRanges(lb.Spec.RankBy) {
		h = append(h, "rank_upper", "interval_low", "interval_high")
	}
	h = append(h, "id", "created_at", "updated_at")
	for _, root := range []accessor.Root{accessor.Metadata, accessor.Metrics} {
		seen := map[string]bool{}
		for _, e := range rows {
			doc, err := decode(raw(e.Row, root))
			if err != nil {
				return nil, err
			}
			leaves(doc, "", seen)
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
	fixed := 4
	if ranges {
		fixed = 7
	}
	rec := make([]string, len(header))
	for _, e := range rows {
		clear(rec)
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
		rec[i] = string(row.UID)
		rec[i+1] = wire.Timestamp(row.CreationTimestamp.Time)
		rec[i+2] = wire.Timestamp(wire.ServedUpdatedAt(&row.ObjectMeta, row.Status.UpdatedAt))
		var docs [3]map[string]any
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
			if docs[root] == nil {
				if docs[root], err = decode(raw(row, root)); err != nil {
					return err
				}
			}
			if v, ok := accessor.LookupMap(docs[root], path); ok {
				if rec[j], err = cell(v); err != nil {
					return err
				}
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
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

// decode reads a metadata or metrics object keeping numbers as their JSON text.
func decode(raw []byte) (map[string]any, error) {
	m := map[string]any{}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return m, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// leaves adds the dotted paths of the leaves of m under prefix to seen, stopping once
// seen holds more than MaxLeafColumns.
func leaves(m map[string]any, prefix string, seen map[string]bool) {
	for k, v := range m {
		if len(seen) > MaxLeafColumns {
			return
		}
		if o, ok := v.(map[string]any); ok {
			leaves(o, prefix+k+".", seen)
			continue
		}
		seen[prefix+k] = true
	}
}

func cell(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return Guard(x), nil
	case json.Number:
		return string(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return Guard(string(b)), nil
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
