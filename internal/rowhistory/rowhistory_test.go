package rowhistory_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowhistory"
)

func js(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func ptr(s string) *string { return &s }

func ov(field, value string) hubv1alpha1.ObservedValue {
	return hubv1alpha1.ObservedValue{Field: field, Value: value}
}

func TestObserve(t *testing.T) {
	long := strings.Repeat("x", 300)
	manyKeys := map[string]int{}
	for i := range rowhistory.MaxKeys + 1 {
		manyKeys[fmt.Sprintf("k%03d", i)] = i
	}
	many, _ := json.Marshal(manyKeys)
	for _, tc := range []struct {
		name string
		spec hubv1alpha1.LeaderboardRowSpec
		want []hubv1alpha1.ObservedValue
	}{{
		name: "empty row: only its status",
		want: []hubv1alpha1.ObservedValue{ov("status", `"display"`)},
	}, {
		name: "keys of both sections, compacted, hide, trial ids lowercased and sorted",
		spec: hubv1alpha1.LeaderboardRowSpec{
			Metadata: js(`{"agent": "terminus", "cfg": {"b": 1, "a": [1, 2]}}`), Metrics: js(`{"reward":0.5,"n":null}`),
			Visibility: hubv1alpha1.RowHide,
			TrialIDs:   []string{"BBBBBBBB-0000-0000-0000-000000000000", "aaaaaaaa-0000-0000-0000-000000000000"},
		},
		want: []hubv1alpha1.ObservedValue{
			ov("metadata.agent", `"terminus"`), ov("metadata.cfg", `{"b":1,"a":[1,2]}`),
			ov("metrics.n", `null`), ov("metrics.reward", `0.5`), ov("status", `"hide"`),
			ov("trial_ids", `["aaaaaaaa-0000-0000-0000-000000000000","bbbbbbbb-0000-0000-0000-000000000000"]`),
		},
	}, {
		name: "a long value is cut with a digest of the whole",
		spec: hubv1alpha1.LeaderboardRowSpec{Metadata: js(`{"log":"` + long + `"}`)},
		want: []hubv1alpha1.ObservedValue{
			{Field: "metadata.log", Value: `"` + long[:255], Truncated: true, Digest: digest(`"` + long + `"`)},
			ov("status", `"display"`),
		},
	}, {
		name: "too many keys: the section is one field",
		spec: hubv1alpha1.LeaderboardRowSpec{Metrics: js(string(many))},
		want: []hubv1alpha1.ObservedValue{
			{Field: "metrics", Value: string(many[:256]), Truncated: true, Digest: digest(string(many))},
			ov("status", `"display"`),
		},
	}, {
		name: "a key too long: the section is one field",
		spec: hubv1alpha1.LeaderboardRowSpec{Metrics: js(`{"` + strings.Repeat("k", 129) + `":1}`)},
		want: []hubv1alpha1.ObservedValue{
			{Field: "metrics", Value: `{"` + strings.Repeat("k", 129) + `":1}`},
			ov("status", `"display"`),
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rowhistory.Observe(&tc.spec)); diff != "" {
				t.Errorf("Observe (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObserveKeepsSectionsSmall(t *testing.T) {
	// 64 keys of 128 bytes with 256-byte values are over MaxSectionBytes: one field.
	m := map[string]string{}
	for i := range rowhistory.MaxKeys {
		m[fmt.Sprintf("%0128d", i)] = strings.Repeat("v", 300)
	}
	raw, _ := json.Marshal(m)
	got := rowhistory.Observe(&hubv1alpha1.LeaderboardRowSpec{Metrics: js(string(raw))})
	if len(got) != 2 || got[0].Field != "metrics" || !got[0].Truncated {
		t.Fatalf("a large section is not tracked as one field: %d fields, first %q", len(got), got[0].Field)
	}
}

func TestCutKeepsRunes(t *testing.T) {
	s := strings.Repeat("a", 255) + "é" // é is two bytes: 255+2 > 256
	got, cut := rowhistory.Cut([]byte(s))
	if !cut || got != strings.Repeat("a", 255) {
		t.Errorf("Cut = %q, %v; want 255 a's, cut", got, cut)
	}
}

func digest(s string) string {
	return rowhistory.Observe(&hubv1alpha1.LeaderboardRowSpec{Metrics: js(`{"x":` + s + `}`)})[0].Digest
}

func TestDiff(t *testing.T) {
	cut := func(field, v, d string) hubv1alpha1.ObservedValue {
		return hubv1alpha1.ObservedValue{Field: field, Value: v, Truncated: true, Digest: d}
	}
	for _, tc := range []struct {
		name        string
		prev, cur   []hubv1alpha1.ObservedValue
		want        []hubv1alpha1.FieldChange
		wantOmitted int32
	}{{
		name: "same values: no change",
		prev: []hubv1alpha1.ObservedValue{ov("metrics.a", "1"), ov("status", `"display"`)},
		cur:  []hubv1alpha1.ObservedValue{ov("metrics.a", "1"), ov("status", `"display"`)},
	}, {
		name: "changed, added and removed fields, in field order",
		prev: []hubv1alpha1.ObservedValue{ov("metadata.x", `"a"`), ov("metrics.a", "1"), ov("status", `"display"`)},
		cur:  []hubv1alpha1.ObservedValue{ov("metrics.a", "2"), ov("metrics.b", "3"), ov("status", `"hide"`)},
		want: []hubv1alpha1.FieldChange{
			{Field: "metadata.x", Old: ptr(`"a"`)},
			{Field: "metrics.a", Old: ptr("1"), New: ptr("2")},
			{Field: "metrics.b", New: ptr("3")},
			{Field: "status", Old: ptr(`"display"`), New: ptr(`"hide"`)},
		},
	}, {
		name: "cut values with the same first bytes differ by digest",
		prev: []hubv1alpha1.ObservedValue{cut("metrics.log", `"xxx`, "d1")},
		cur:  []hubv1alpha1.ObservedValue{cut("metrics.log", `"xxx`, "d2")},
		want: []hubv1alpha1.FieldChange{{Field: "metrics.log", Old: ptr(`"xxx`), OldTruncated: true, New: ptr(`"xxx`), NewTruncated: true}},
	}, {
		name: "cut values with the same digest are the same",
		prev: []hubv1alpha1.ObservedValue{cut("metrics.log", `"xxx`, "d1")},
		cur:  []hubv1alpha1.ObservedValue{cut("metrics.log", `"xxx`, "d1")},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, omitted := rowhistory.Diff(tc.prev, tc.cur)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
			if omitted != tc.wantOmitted {
				t.Errorf("omitted = %d, want %d", omitted, tc.wantOmitted)
			}
		})
	}
}

func TestDiffListsAtMostMaxFields(t *testing.T) {
	var prev, cur []hubv1alpha1.ObservedValue
	for i := range 20 {
		prev = append(prev, ov(fmt.Sprintf("metrics.k%02d", i), "1"))
		cur = append(cur, ov(fmt.Sprintf("metrics.k%02d", i), "2"))
	}
	got, omitted := rowhistory.Diff(prev, cur)
	if len(got) != rowhistory.MaxFields || omitted != 4 || got[0].Field != "metrics.k00" {
		t.Errorf("Diff listed %d fields (first %q), omitted %d; want 16, metrics.k00, 4", len(got), got[0].Field, omitted)
	}
}

func row(gen int64, by, metrics string) *hubv1alpha1.LeaderboardRow {
	r := &hubv1alpha1.LeaderboardRow{Spec: hubv1alpha1.LeaderboardRowSpec{Metrics: js(metrics)}}
	r.Generation = gen
	if by != "" {
		r.Annotations = map[string]string{hubv1alpha1.AnnotationUpdatedBy: by}
	}
	return r
}

func TestRecord(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	first := rowhistory.Observe(&row(1, "", `{"a":1}`).Spec)
	for _, tc := range []struct {
		name         string
		row          *hubv1alpha1.LeaderboardRow
		prev         hubv1alpha1.LeaderboardRowStatus
		wantHistory  []hubv1alpha1.RowChange
		wantObserved []hubv1alpha1.ObservedValue
	}{{
		name:         "first observation: the values, no entry",
		row:          row(1, "alice", `{"a":1}`),
		wantObserved: first,
	}, {
		name:         "a row observed before history existed: the values, no entry, even at a new generation",
		row:          row(4, "alice", `{"a":1}`),
		prev:         hubv1alpha1.LeaderboardRowStatus{ObservedGeneration: 3},
		wantObserved: first,
	}, {
		name:         "the same generation again: nothing changes",
		row:          row(1, "alice", `{"a":2}`),
		prev:         hubv1alpha1.LeaderboardRowStatus{ObservedGeneration: 1, ObservedValues: first},
		wantObserved: first,
	}, {
		name: "a new generation with other values: one entry by the last updater",
		row:  row(3, "bob", `{"a":2}`),
		prev: hubv1alpha1.LeaderboardRowStatus{ObservedGeneration: 1, ObservedValues: first},
		wantHistory: []hubv1alpha1.RowChange{{At: metav1.NewTime(t0), By: "bob", Generation: 3,
			Fields: []hubv1alpha1.FieldChange{{Field: "metrics.a", Old: ptr("1"), New: ptr("2")}}}},
		wantObserved: rowhistory.Observe(&row(3, "", `{"a":2}`).Spec),
	}, {
		name:         "a new generation with the same values (changed and changed back): no entry",
		row:          row(3, "bob", `{"a":1}`),
		prev:         hubv1alpha1.LeaderboardRowStatus{ObservedGeneration: 1, ObservedValues: first},
		wantObserved: first,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			h, o := rowhistory.Record(tc.row, &tc.prev, t0)
			if diff := cmp.Diff(tc.wantHistory, h); diff != "" {
				t.Errorf("history (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantObserved, o); diff != "" {
				t.Errorf("observed values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendBounds(t *testing.T) {
	entry := func(gen int64, valueBytes int) hubv1alpha1.RowChange {
		v := strings.Repeat("v", valueBytes)
		return hubv1alpha1.RowChange{Generation: gen, Fields: []hubv1alpha1.FieldChange{{Field: "metrics.a", Old: &v, New: &v}}}
	}
	var h []hubv1alpha1.RowChange
	for g := int64(1); g <= 12; g++ {
		prev := h
		h = rowhistory.Append(h, entry(g, 10))
		if g > 1 && len(prev) > 0 && prev[len(prev)-1].Generation != g-1 {
			t.Fatalf("Append changed the slice it was given")
		}
	}
	if len(h) != rowhistory.MaxEntries || h[0].Generation != 3 || h[9].Generation != 12 {
		t.Errorf("count bound: %d entries from generation %d; want 10 from 3", len(h), h[0].Generation)
	}
	// Entries of ~2 x 256 bytes x 16 fields: the byte bound drops old ones first.
	big := func(gen int64) hubv1alpha1.RowChange {
		e := entry(gen, 256)
		for len(e.Fields) < rowhistory.MaxFields {
			e.Fields = append(e.Fields, e.Fields[0])
		}
		return e
	}
	h = nil
	for g := int64(1); g <= 10; g++ {
		h = rowhistory.Append(h, big(g))
	}
	b, _ := json.Marshal(h)
	if len(b) > rowhistory.MaxBytes || h[len(h)-1].Generation != 10 || len(h) >= 10 {
		t.Errorf("byte bound: %d bytes in %d entries, newest %d; want at most %d, the newest kept", len(b), len(h), h[len(h)-1].Generation, rowhistory.MaxBytes)
	}
}

func TestServed(t *testing.T) {
	long := `"` + strings.Repeat("x", 255)
	r := row(3, "bob", `{}`)
	r.UID = "u1"
	r.Annotations[hubv1alpha1.AnnotationCreatedBy] = "alice"
	r.Status.History = []hubv1alpha1.RowChange{
		{At: metav1.NewTime(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)), By: "alice", Generation: 2,
			Fields: []hubv1alpha1.FieldChange{{Field: "metrics.a", Old: ptr("1"), New: ptr("2")}}},
		{At: metav1.NewTime(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)), By: "bob", Generation: 3, OmittedFields: 2,
			Fields: []hubv1alpha1.FieldChange{{Field: "metadata.log", Old: &long, OldTruncated: true}}},
	}
	got, _ := json.Marshal(rowhistory.Served("b1", r, true))
	want := `{"row_id":"u1","leaderboard_id":"b1","created_at":"0001-01-01T00:00:00Z","created_by":"alice","updated_by":"bob","changes":[` +
		`{"at":"2026-11-02T10:00:00Z","by":"bob","generation":3,"fields":[{"field":"metadata.log","old":"\"` + strings.Repeat("x", 255) + `","old_truncated":true}],"omitted_fields":2},` +
		`{"at":"2026-11-01T10:00:00Z","by":"alice","generation":2,"fields":[{"field":"metrics.a","old":1,"new":2}],"omitted_fields":0}]}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Served (-want +got):\n%s", diff)
	}
	hidden, _ := json.Marshal(rowhistory.Served("b1", r, false))
	if strings.Contains(string(hidden), "alice") || strings.Contains(string(hidden), "bob") {
		t.Errorf("Served without authors names a user: %s", hidden)
	}
}

// typicalRow is the bench's row shape: two metadata keys, three metrics, nine kept
// changes, at its next generation with one metric changed.
func typicalRow() (*hubv1alpha1.LeaderboardRow, hubv1alpha1.LeaderboardRowStatus) {
	r := row(10, "system:serviceaccount:acme:ci", `{"reward":0.5,"cost":12,"duration_s":640}`)
	r.Spec.Metadata = js(`{"agent":"agent-1","model":"provider/model-1"}`)
	prev := *r.DeepCopy()
	prev.Spec.Metrics = js(`{"reward":0.4,"cost":12,"duration_s":640}`)
	st := hubv1alpha1.LeaderboardRowStatus{ObservedGeneration: 9, ObservedValues: rowhistory.Observe(&prev.Spec)}
	for g := int64(1); g <= 9; g++ {
		st.History = append(st.History, hubv1alpha1.RowChange{At: metav1.Now(), By: "system:serviceaccount:acme:ci", Generation: g,
			Fields: []hubv1alpha1.FieldChange{{Field: "metrics.reward", Old: ptr("0.3"), New: ptr("0.4")}}})
	}
	return r, st
}

// BenchmarkRecord is the controller's cost of the history for a new generation: split
// the values, compare, append an entry within the bounds.
func BenchmarkRecord(b *testing.B) {
	r, st := typicalRow()
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		h, _ := rowhistory.Record(r, &st, now)
		if len(h) != 10 {
			b.Fatal("no entry recorded")
		}
	}
}

// BenchmarkRecordResync is its cost when the generation was observed (a resync, a
// board's schema change): nothing is parsed.
func BenchmarkRecordResync(b *testing.B) {
	r, st := typicalRow()
	st.ObservedGeneration = r.Generation
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		rowhistory.Record(r, &st, now)
	}
}

// FuzzAppendBound checks the byte bound whatever the values hold (escapes included).
func FuzzAppendBound(f *testing.F) {
	f.Add(`"\u0000<>&`, 16, 10)
	f.Add(strings.Repeat("x", 256), 16, 12)
	f.Fuzz(func(t *testing.T, v string, fields, entries int) {
		if len(v) > rowhistory.MaxValueBytes {
			v = v[:rowhistory.MaxValueBytes]
		}
		fields, entries = 1+abs(fields)%rowhistory.MaxFields, 1+abs(entries)%20
		var h []hubv1alpha1.RowChange
		for g := range entries {
			e := hubv1alpha1.RowChange{Generation: int64(g), By: v}
			for range fields {
				e.Fields = append(e.Fields, hubv1alpha1.FieldChange{Field: "metrics." + v[:min(len(v), 128)], Old: &v, New: &v})
			}
			h = rowhistory.Append(h, e)
		}
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) > 1 && len(b) > rowhistory.MaxBytes {
			t.Errorf("%d entries of %d bytes kept, over %d", len(h), len(b), rowhistory.MaxBytes)
		}
		if h[len(h)-1].Generation != int64(entries-1) {
			t.Errorf("the newest entry was dropped")
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func TestStripForCache(t *testing.T) {
	r, st := typicalRow()
	r.Status = st
	last := st.History[len(st.History)-1]
	rowhistory.StripForCache(r)
	want := []hubv1alpha1.RowChange{{At: last.At, Generation: last.Generation}}
	if diff := cmp.Diff(want, r.Status.History); diff != "" || r.Status.ObservedValues != nil {
		t.Errorf("stripped history (-want +got):\n%s\nobserved values: %v", diff, r.Status.ObservedValues)
	}
	if got := rowhistory.LastChange(r); got == nil || !got.Equal(&last.At) {
		t.Errorf("LastChange of a stripped row = %v, want %v", got, last.At)
	}
	fresh := row(1, "", `{}`)
	rowhistory.StripForCache(fresh)
	if fresh.Status.History != nil || rowhistory.LastChange(fresh) != nil {
		t.Errorf("a row without history got one: %v", fresh.Status.History)
	}
}

func TestNeedsFullStatus(t *testing.T) {
	for _, tc := range []struct {
		gen, observed int64
		want          bool
	}{{1, 0, false}, {1, 1, true}, {2, 1, true}, {5, 3, true}} {
		r := row(tc.gen, "", `{}`)
		r.Status.ObservedGeneration = tc.observed
		if got := rowhistory.NeedsFullStatus(r); got != tc.want {
			t.Errorf("generation %d, observed %d: %v, want %v", tc.gen, tc.observed, got, tc.want)
		}
	}
}
