// Package rowhistory is the one home of a leaderboard row's change history
// (docs/leaderboards.md, "Change history"): how a row's values are split into fields and
// cut to a bounded size, what counts as a change, how many entries a row keeps, and the
// JSON shape the HTTP read, the CLI and the web page serve. The row controller records
// an entry in the status write it makes for a new generation anyway (no extra write);
// everything here is pure.
package rowhistory

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/wire"
)

// Bounds of the history (docs/leaderboards.md, "Change history").
const (
	// MaxEntries is how many changes a row keeps; the oldest go first.
	MaxEntries = 10
	// MaxBytes bounds the JSON of a row's entries; the oldest go first (the newest is
	// always kept: one entry is at most MaxFields fields of bounded size).
	MaxBytes = 16 << 10
	// MaxFields is how many changed fields an entry lists; the rest are counted.
	MaxFields = 16
	// MaxValueBytes is where a value's compact JSON is cut (then marked truncated).
	MaxValueBytes = 256
	// MaxKeys, MaxKeyBytes and MaxSectionBytes decide whether a section (metadata or
	// metrics) is tracked key by key: at most MaxKeys keys, none longer than MaxKeyBytes,
	// keys and cut values together at most MaxSectionBytes. Otherwise the section is one
	// field (metrics), so that a row's observed values stay small whatever it holds.
	MaxKeys         = 64
	MaxKeyBytes     = 128
	MaxSectionBytes = 8 << 10
	// MaxByBytes bounds the recorded user name.
	MaxByBytes = 1024
	// digestHex is how many hex digits of SHA-256 identify a cut value (128 bits: no
	// one can make two values collide to hide a change).
	digestHex = 32
)

// Field names of the values that are not metadata or metrics keys (the JSON API's names).
const (
	FieldStatus   = "status"
	FieldTrialIDs = "trial_ids"
	FieldMetadata = "metadata"
	FieldMetrics  = "metrics"
)

// Observe splits a row's values into fields, sorted by name: metadata.<key> and
// metrics.<key> for each top-level key (or metadata / metrics for a section tracked as
// a whole), status (the row's visibility) and trial_ids (sorted, lowercase: the order
// of a set is not a change). Each value is compact JSON cut to MaxValueBytes.
func Observe(spec *hubv1alpha1.LeaderboardRowSpec) []hubv1alpha1.ObservedValue {
	var out []hubv1alpha1.ObservedValue
	out = appendSection(out, FieldMetadata, spec.Metadata)
	out = appendSection(out, FieldMetrics, spec.Metrics)
	status := string(spec.Visibility)
	if status == "" {
		status = string(hubv1alpha1.RowDisplay)
	}
	out = append(out, value(FieldStatus, mustJSON(status)))
	if len(spec.TrialIDs) > 0 {
		ids := make([]string, len(spec.TrialIDs))
		for i, id := range spec.TrialIDs {
			ids[i] = strings.ToLower(id)
		}
		sort.Strings(ids)
		out = append(out, value(FieldTrialIDs, mustJSON(ids)))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

func appendSection(out []hubv1alpha1.ObservedValue, name string, raw *apiextensionsv1.JSON) []hubv1alpha1.ObservedValue {
	if raw == nil || len(raw.Raw) == 0 || bytes.Equal(raw.Raw, []byte("null")) {
		return out
	}
	data := raw.Raw
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		// Not an object (the CRD schema refuses that): tracked as a whole.
		return append(out, value(name, compact(data)))
	}
	fields := make([]hubv1alpha1.ObservedValue, 0, len(keys))
	size := 0
	for k, v := range keys {
		if len(keys) > MaxKeys || len(k) > MaxKeyBytes {
			return append(out, value(name, compact(data)))
		}
		f := value(name+"."+k, compact(v))
		size += len(k) + len(f.Value)
		if size > MaxSectionBytes {
			return append(out, value(name, compact(data)))
		}
		fields = append(fields, f)
	}
	return append(out, fields...)
}

// value makes an observed value, cut with a digest when long.
func value(field string, js []byte) hubv1alpha1.ObservedValue {
	v, cut := Cut(js)
	o := hubv1alpha1.ObservedValue{Field: field, Value: v, Truncated: cut}
	if cut {
		sum := sha256.Sum256(js)
		o.Digest = hex.EncodeToString(sum[:])[:digestHex]
	}
	return o
}

// Cut returns s cut to MaxValueBytes on a UTF-8 boundary, and whether it was cut.
func Cut(s []byte) (string, bool) {
	if len(s) <= MaxValueBytes {
		return string(s), false
	}
	n := MaxValueBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return string(s[:n]), true
}

func compact(js []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, js); err != nil {
		return js
	}
	return b.Bytes()
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v) // strings and string slices always marshal
	return b
}

// Diff lists the fields whose values differ between two observations (both sorted by
// field, as Observe returns them), in field order: the first MaxFields, and how many
// more there are.
func Diff(prev, cur []hubv1alpha1.ObservedValue) ([]hubv1alpha1.FieldChange, int32) {
	var out []hubv1alpha1.FieldChange
	var omitted int32
	add := func(c hubv1alpha1.FieldChange) {
		if len(out) < MaxFields {
			out = append(out, c)
		} else {
			omitted++
		}
	}
	i, j := 0, 0
	for i < len(prev) || j < len(cur) {
		switch {
		case j == len(cur) || (i < len(prev) && prev[i].Field < cur[j].Field):
			add(hubv1alpha1.FieldChange{Field: prev[i].Field, Old: &prev[i].Value, OldTruncated: prev[i].Truncated})
			i++
		case i == len(prev) || cur[j].Field < prev[i].Field:
			add(hubv1alpha1.FieldChange{Field: cur[j].Field, New: &cur[j].Value, NewTruncated: cur[j].Truncated})
			j++
		default:
			if prev[i] != cur[j] {
				add(hubv1alpha1.FieldChange{Field: cur[j].Field,
					Old: &prev[i].Value, OldTruncated: prev[i].Truncated,
					New: &cur[j].Value, NewTruncated: cur[j].Truncated})
			}
			i++
			j++
		}
	}
	return out, omitted
}

// Record returns a row's history and observed values for its status, given the status
// the row has (prev) and when the controller first saw the row's generation. A row seen
// for the first time (no observed values: new, or stored before the history existed)
// gets its observed values and no entry; a new generation whose values differ from the
// observed ones gets one entry, by the user the updated-by annotation names (the last
// one when the controller saw several updates as one). Nothing changes otherwise.
func Record(row *hubv1alpha1.LeaderboardRow, prev *hubv1alpha1.LeaderboardRowStatus, at time.Time) ([]hubv1alpha1.RowChange, []hubv1alpha1.ObservedValue) {
	if prev.ObservedValues != nil && row.Generation == prev.ObservedGeneration {
		return prev.History, prev.ObservedValues
	}
	cur := Observe(&row.Spec)
	if prev.ObservedValues == nil {
		return prev.History, cur
	}
	fields, omitted := Diff(prev.ObservedValues, cur)
	if len(fields) == 0 {
		return prev.History, cur
	}
	entry := hubv1alpha1.RowChange{
		At: metav1.NewTime(at.UTC().Truncate(time.Second)), By: row.Annotations[hubv1alpha1.AnnotationUpdatedBy],
		Generation: row.Generation, Fields: fields, OmittedFields: omitted,
	}
	if len(entry.By) > MaxByBytes {
		entry.By = strings.ToValidUTF8(entry.By[:MaxByBytes], "")
	}
	return Append(prev.History, entry), cur
}

// Append adds an entry and drops the oldest ones beyond MaxEntries and MaxBytes. It
// never changes the slice it is given.
func Append(h []hubv1alpha1.RowChange, e hubv1alpha1.RowChange) []hubv1alpha1.RowChange {
	out := append(slices.Clone(h), e)
	if len(out) > MaxEntries {
		out = out[len(out)-MaxEntries:]
	}
	// Marshalling the entries costs more than the rest of a change; an upper bound of
	// their JSON spares it for the usual small entries.
	for len(out) > 1 && maxJSON(out) > MaxBytes {
		b, err := json.Marshal(out)
		if err != nil || len(b) <= MaxBytes {
			break
		}
		out = out[1:]
	}
	return out
}

// maxJSON is an upper bound of the JSON size of entries: every string byte escaped to
// six (\u00XX), plus generous room for keys, punctuation, numbers and times.
func maxJSON(h []hubv1alpha1.RowChange) int {
	n := 2
	for i := range h {
		e := &h[i]
		n += 160 + 6*len(e.By)
		for _, f := range e.Fields {
			n += 96 + 6*len(f.Field)
			if f.Old != nil {
				n += 6 * len(*f.Old)
			}
			if f.New != nil {
				n += 6 * len(*f.New)
			}
		}
	}
	return n
}

// Served is a row's history as the HTTP read and the CLI serve it, newest change first.
// showAuthors says whether user names are shown (httpapi.ShowsAuthors for the read; the
// CLI's users are members, who always see them).
func Served(boardID string, row *hubv1alpha1.LeaderboardRow, showAuthors bool) wire.RowHistory {
	out := wire.RowHistory{
		RowID: hubv1alpha1.ID(row), LeaderboardID: boardID,
		CreatedAt: wire.Timestamp(hubv1alpha1.CreatedAt(row).Time),
		Changes:   make([]wire.Change, 0, len(row.Status.History)),
	}
	if showAuthors {
		out.CreatedBy, out.UpdatedBy = Author(row, hubv1alpha1.AnnotationCreatedBy), Author(row, hubv1alpha1.AnnotationUpdatedBy)
	}
	for i := len(row.Status.History) - 1; i >= 0; i-- {
		e := &row.Status.History[i]
		c := wire.Change{At: wire.Timestamp(e.At.Time), Generation: e.Generation, OmittedFields: e.OmittedFields,
			Fields: make([]wire.FieldChange, len(e.Fields))}
		if showAuthors && e.By != "" {
			by := e.By
			c.By = &by
		}
		for j, f := range e.Fields {
			c.Fields[j] = wire.FieldChange{Field: f.Field,
				Old: servedValue(f.Old, f.OldTruncated), OldTruncated: f.OldTruncated,
				New: servedValue(f.New, f.NewTruncated), NewTruncated: f.NewTruncated}
		}
		out.Changes = append(out.Changes, c)
	}
	return out
}

// Author is the user an annotation of the row records, or nil.
func Author(row *hubv1alpha1.LeaderboardRow, annotation string) *string {
	if by, ok := row.Annotations[annotation]; ok && by != "" {
		return &by
	}
	return nil
}

// servedValue is a recorded value as JSON: the value itself when whole, else the cut
// text as a JSON string (nil when absent).
func servedValue(v *string, truncated bool) json.RawMessage {
	if v == nil {
		return nil
	}
	if !truncated && json.Valid([]byte(*v)) {
		return json.RawMessage(*v)
	}
	return mustJSON(*v)
}

// LastChange is when the row's values last changed according to its history (nil when
// it has none: never changed since it was created, or not since history was kept).
func LastChange(row *hubv1alpha1.LeaderboardRow) *metav1.Time {
	if n := len(row.Status.History); n > 0 {
		return &row.Status.History[n-1].At
	}
	return nil
}

// Text is a served value as a person reads it: its JSON, "-" when absent (the field did
// not exist), and for a cut value the start of its JSON followed by "…".
func Text(v json.RawMessage, truncated bool) string {
	if v == nil {
		return "-"
	}
	if !truncated {
		return string(v)
	}
	var cut string
	if err := json.Unmarshal(v, &cut); err != nil {
		cut = string(v)
	}
	return cut + "…"
}

// StripForCache drops what the operator's cache need not hold of a row's history (it
// would cost kilobytes of memory on each of 100,000 rows): the observed values, and
// every entry but the newest one's time, which the web page's "changed" mark reads
// (LastChange). Whoever needs the rest reads the row from the apiserver: the row
// controller for a new generation (NeedsFullStatus), the history reads.
func StripForCache(row *hubv1alpha1.LeaderboardRow) {
	row.Status.ObservedValues = nil
	if n := len(row.Status.History); n > 0 {
		row.Status.History = []hubv1alpha1.RowChange{{At: row.Status.History[n-1].At, Generation: row.Status.History[n-1].Generation}}
	}
}

// NeedsFullStatus says whether the row controller must read a cached row's status from
// the apiserver before writing it: whenever it wrote the status before (the cache may
// have stripped a history from it, which a status update would otherwise erase, and a
// new generation's entry needs the kept entries and observed values). A row whose
// status it never wrote has nothing the cache could have dropped.
func NeedsFullStatus(row *hubv1alpha1.LeaderboardRow) bool {
	return row.Status.ObservedGeneration != 0
}
