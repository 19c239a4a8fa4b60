package v1alpha1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestIdentity(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	recorded := "2025-01-02T03:04:05Z"
	obj := func(ann map[string]string) *Leaderboard {
		return &Leaderboard{ObjectMeta: metav1.ObjectMeta{UID: types.UID("uid-now"), CreationTimestamp: created, Annotations: ann}}
	}
	type want struct {
		ID        string
		CreatedAt string
		Recorded  bool
		Refused   bool
	}
	for _, tc := range []struct {
		name string
		ann  map[string]string
		want want
	}{
		{"nothing recorded: the UID and creationTimestamp", nil, want{"uid-now", "2026-11-26T10:00:00Z", false, false}},
		{"recorded", map[string]string{AnnotationID: "uid-then", AnnotationCreatedAt: recorded}, want{"uid-then", recorded, true, false}},
		{"refused by admission: empty values", map[string]string{AnnotationID: "", AnnotationCreatedAt: ""}, want{"uid-now", "2026-11-26T10:00:00Z", false, true}},
		{"id refused, time absent", map[string]string{AnnotationID: ""}, want{"uid-now", "2026-11-26T10:00:00Z", false, true}},
		{"unparsable time falls back", map[string]string{AnnotationID: "uid-then", AnnotationCreatedAt: "yesterday"}, want{"uid-then", "2026-11-26T10:00:00Z", true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := obj(tc.ann)
			got := want{ID(o), CreatedAt(o).UTC().Format(time.RFC3339), IdentityRecorded(o), IdentityRefused(o)}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	o := obj(nil)
	if d := cmp.Diff(map[string]string{AnnotationID: "uid-now", AnnotationCreatedAt: "2026-11-26T10:00:00Z"}, IdentityAnnotations(o)); d != "" {
		t.Errorf("IdentityAnnotations (-want +got)\n%s", d)
	}
}

func TestLedgerIdentity(t *testing.T) {
	at := func(y int) metav1.Time { return metav1.NewTime(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)) }
	ledger := func(rows map[string]RowIdentity) RowIdentityLedger { return RowIdentityLedger{Rows: rows} }
	for _, tc := range []struct {
		name    string
		ledgers []RowIdentityLedger
		want    RowIdentity
		found   bool
	}{
		{name: "no ledger", found: false},
		{name: "another row only", ledgers: []RowIdentityLedger{ledger(map[string]RowIdentity{"other": {ID: "o", CreatedAt: at(2020)}})}},
		{name: "one entry", ledgers: []RowIdentityLedger{ledger(map[string]RowIdentity{"r": {ID: "a", CreatedAt: at(2024)}})},
			want: RowIdentity{ID: "a", CreatedAt: at(2024)}, found: true},
		{name: "the oldest of two ledgers wins (a restored ledger after the operator recorded the row anew)", ledgers: []RowIdentityLedger{
			ledger(map[string]RowIdentity{"r": {ID: "new", CreatedAt: at(2026)}}),
			ledger(map[string]RowIdentity{"r": {ID: "old", CreatedAt: at(2024)}}),
		}, want: RowIdentity{ID: "old", CreatedAt: at(2024)}, found: true},
		{name: "a tie goes to the smaller id, whatever the order", ledgers: []RowIdentityLedger{
			ledger(map[string]RowIdentity{"r": {ID: "b", CreatedAt: at(2024)}}),
			ledger(map[string]RowIdentity{"r": {ID: "a", CreatedAt: at(2024)}}),
		}, want: RowIdentity{ID: "a", CreatedAt: at(2024)}, found: true},
		{name: "an empty id is no entry", ledgers: []RowIdentityLedger{ledger(map[string]RowIdentity{"r": {CreatedAt: at(2020)}})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found := LedgerIdentity(tc.ledgers, "r")
			if found != tc.found || got.ID != tc.want.ID || !got.CreatedAt.Equal(&tc.want.CreatedAt) {
				t.Errorf("got %+v %v, want %+v %v", got, found, tc.want, tc.found)
			}
		})
	}
}
