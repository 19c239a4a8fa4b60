package web

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

func yes() *bool { b := true; return &b }

var testColumns = []hubv1alpha1.Column{
	{ID: "agent", Header: "Agent", Accessor: "metadata.agent", Type: hubv1alpha1.ColumnText, EnableSorting: yes()},
	{ID: "reward", Header: "Reward", Accessor: "metrics.reward", Type: hubv1alpha1.ColumnNumber, EnableSorting: yes(), Description: "Mean reward"},
	{ID: "notes", Header: "Notes", Accessor: "metadata.notes", Type: hubv1alpha1.ColumnMarkdown, Align: "center"},
}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		raw     string
		want    query
		wantErr string
	}{
		{"", query{Page: 1}, ""},
		{"page=3", query{Page: 3}, ""},
		{"sort=agent", query{Page: 1, Sort: "agent", Dir: "asc"}, ""},
		{"sort=reward", query{Page: 1, Sort: "reward", Dir: "desc"}, ""},
		{"sort=reward&dir=asc&page=2", query{Page: 2, Sort: "reward", Dir: "asc"}, ""},
		{"page=0", query{}, "page: must be a whole number from 1"},
		{"page=-1", query{}, "page: must be a whole number from 1"},
		{"page=x", query{}, "page: must be a whole number from 1"},
		{"sort=nope", query{}, "sort: no column has this id"},
		{"sort=notes", query{}, "sort: this column cannot be sorted"},
		{"sort=agent&dir=up", query{}, "dir: must be asc or desc"},
		{"dir=asc", query{}, "dir: needs sort"},
		{"verified=1", query{Page: 1, Verified: true}, ""},
		{"verified=1&sort=reward&page=2", query{Page: 2, Sort: "reward", Dir: "desc", Verified: true}, ""},
		{"verified=yes", query{}, "verified: must be 1"},
		{"chart_rows=100", query{Page: 1, ChartRows: 100}, ""},
		{"chart_rows=200&page=2", query{Page: 2, ChartRows: 200}, ""},
		{"chart_rows=0", query{}, "chart_rows: must be a whole number from 1 to 200"},
		{"chart_rows=201", query{}, "chart_rows: must be a whole number from 1 to 200"},
		{"chart_rows=x", query{}, "chart_rows: must be a whole number from 1 to 200"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.raw)
			got, err := parseQuery(v, testColumns)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.ChartRows == 0 {
				tt.want.ChartRows = DefaultChartRows
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestColumnViews(t *testing.T) {
	got := columnViews(testColumns, query{Page: 2, Sort: "reward", Dir: "desc"}, true)
	want := []columnView{
		{ID: "agent", Header: "Agent", Align: "left", SortURL: "?dir=asc&sort=agent"},
		{ID: "reward", Header: "Reward", Description: "Mean reward", Align: "right", SortURL: "?dir=asc&sort=reward", AriaSort: "descending"},
		{ID: "notes", Header: "Notes", Align: "center"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, c := range columnViews(testColumns, query{Page: 1}, false) {
		if c.SortURL != "" {
			t.Errorf("column %s links to a sort on a board too large to sort", c.ID)
		}
	}
}

func TestPaginate(t *testing.T) {
	tests := []struct {
		name  string
		total int
		rows  int
		q     query
		want  boardPage
	}{
		{"empty", 0, 0, query{Page: 1}, boardPage{Page: 1}},
		{"one partial page", 7, 7, query{Page: 1}, boardPage{Total: 7, Page: 1, TotalPages: 1, FirstRow: 1, LastRow: 7}},
		{"exact multiple, last page", 100, 50, query{Page: 2}, boardPage{Total: 100, Page: 2, TotalPages: 2, FirstRow: 51, LastRow: 100,
			PrevURL: "?", FirstURL: "?"}},
		{"middle page, sorted", 120, 50, query{Page: 2, Sort: "reward", Dir: "asc"}, boardPage{Total: 120, Page: 2, TotalPages: 3, FirstRow: 51, LastRow: 100,
			PrevURL: "?dir=asc&sort=reward", FirstURL: "?dir=asc&sort=reward", NextURL: "?dir=asc&page=3&sort=reward", LastURL: "?dir=asc&page=3&sort=reward"}},
		{"past the end", 120, 0, query{Page: 9}, boardPage{Total: 120, Page: 9, TotalPages: 3, PrevURL: "?page=3", FirstURL: "?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := boardPage{Rows: make([]rowView, tt.rows)}
			p.paginate(tt.total, tt.q)
			p.Rows = nil
			if diff := cmp.Diff(tt.want, p); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// verifiedEntry is a ranked row; verified when gen is the generation its Verified
// condition and recorded run describe.
func verifiedEntry(rank int, id string, verifiedGen int64) Entry {
	row := &hubv1alpha1.LeaderboardRow{}
	row.UID, row.Generation = types.UID(id), 2
	if verifiedGen > 0 {
		row.Status.Provenance = &hubv1alpha1.RowProvenance{PodName: "p", PodUID: "u", JobID: "j",
			Requester: "alice", Images: []hubv1alpha1.ContainerImage{{Name: "eval", ImageID: "repo@sha256:abc"}}}
		row.Status.Conditions = []metav1.Condition{{Type: hubv1alpha1.ConditionVerified, Status: metav1.ConditionTrue, ObservedGeneration: verifiedGen}}
	}
	return Entry{Rank: rank, Row: row}
}

func TestVerifiedRowsAndMarks(t *testing.T) {
	all := filtered{version: 7, entries: []Entry{
		verifiedEntry(1, "a", 0), verifiedEntry(2, "b", 2), verifiedEntry(3, "c", 1), verifiedEntry(4, "d", 2),
	}}
	got := verifiedRows(all)
	if got.Len() != 2 || got.Version() != 7 {
		t.Fatalf("verifiedRows: %d rows, version %d", got.Len(), got.Version())
	}
	page := got.Page(0, 10)
	if page[0].Rank != 2 || page[1].Rank != 4 {
		t.Fatalf("verified rows keep their board ranks: %d, %d", page[0].Rank, page[1].Rank)
	}
	if len(got.Page(5, 10)) != 0 {
		t.Fatal("a page past the end is empty")
	}
	views := rowViews(nil, nil, all.entries, "/b", time.Now())
	if views[0].VerifiedTitle != "" || views[2].VerifiedTitle != "" {
		t.Fatalf("a row not verified for its current values is marked: %+v", views)
	}
	want := "Written by a run Podium admitted; image sha256:abc; job j"
	if views[1].VerifiedTitle != want {
		t.Fatalf("VerifiedTitle = %q, want %q", views[1].VerifiedTitle, want)
	}
	if strings.Contains(views[1].VerifiedTitle, "alice") {
		t.Fatal("the public page names the requester")
	}
	if u := pageURL(2, "reward", "desc", true); u != "?dir=desc&page=2&sort=reward&verified=1" {
		t.Fatalf("pageURL = %q", u)
	}
}
