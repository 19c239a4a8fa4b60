package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/boardres/boardrestest"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/scheme"
)

// accessPages serves the pages over a cache holding lb and row (either may be nil),
// reviewed by rev.
func accessPages(t *testing.T, rev authn.Reviewer, lb *hubv1alpha1.Leaderboard, row *hubv1alpha1.LeaderboardRow) http.Handler {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(scheme.Scheme)
	for _, f := range index.Fields() {
		b = b.WithIndex(f.Object, f.Name, f.Values)
	}
	ranked := &fakeRanked{}
	if lb != nil {
		b = b.WithObjects(lb)
	}
	if row != nil {
		b = b.WithObjects(row)
		if row.Spec.Visibility != hubv1alpha1.RowHide {
			ranked.entries = []Entry{{Rank: 1, Row: row}}
		}
	}
	p, err := New(Options{
		Reader:   b.Build(),
		Ranking:  func(types.UID) Ranked { return ranked },
		Sort:     fakeSort,
		Reviewer: rev,
		Log:      logr.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for pattern, h := range p.Routes() {
		mux.Handle(pattern, h)
	}
	return mux
}

// pageRequest is a GET of path by the access table's caller token ("" anonymous).
func pageRequest(path, token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	return r.WithContext(authn.WithCaller(context.Background(), boardrestest.Caller(token)))
}

var (
	tableBoardPath   = "/leaderboards/" + boardrestest.Slug
	tableHistoryPath = tableBoardPath + "/rows/" + string(boardrestest.RowUID) + "/history"
	// The board's charts served alone: a private board's chart is as missing as the
	// board (docs/web.md, "Charts").
	tableIntervalsPath = tableBoardPath + "/" + IntervalsFile
	tableProgressPath  = tableBoardPath + "/" + ProgressFile
)

// TestPagesFollowTheAccessTable: the board and history pages answer the access table as
// boardaccess.Access does, with as many reviews, as every JSON reader does: a missing
// board costs the review a private one costs, and both get the same page.
func TestPagesFollowTheAccessTable(t *testing.T) {
	run := func(t *testing.T, paths map[string]string, tc boardrestest.AccessCase) {
		lb := tc.Board()
		rev := &boardrestest.Reviewer{}
		h := accessPages(t, rev, lb, boardrestest.Row(lb, tc.Row))
		for name, path := range paths {
			t.Run(name, func(t *testing.T) {
				w := httptest.NewRecorder()
				rev.Reviews()
				h.ServeHTTP(w, pageRequest(path, tc.Caller))
				want := http.StatusNotFound
				if tc.Readable {
					want = http.StatusOK
				}
				if w.Code != want {
					t.Fatalf("status %d, want %d", w.Code, want)
				}
				if n := rev.Reviews(); n != tc.Reviews {
					t.Errorf("%d reviews, want %d", n, tc.Reviews)
				}
				if w.Code == http.StatusNotFound && w.Header().Get("Cache-Control") != "no-store" {
					t.Errorf("a refusal with Cache-Control %q", w.Header().Get("Cache-Control"))
				}
			})
		}
	}
	for _, tc := range boardrestest.AccessCases() {
		t.Run(tc.Name, func(t *testing.T) {
			run(t, map[string]string{"board page": tableBoardPath, "history page": tableHistoryPath,
				"interval chart": tableIntervalsPath, "progress chart": tableProgressPath}, tc)
		})
	}
	for _, tc := range boardrestest.RowAccessCases() {
		t.Run(tc.Name, func(t *testing.T) { run(t, map[string]string{"history page": tableHistoryPath}, tc) })
	}
}

// A page's refusals are the same bytes whatever their cause.
func TestPageRefusalsAreTheSameBytes(t *testing.T) {
	for _, path := range []string{tableBoardPath, tableHistoryPath, tableIntervalsPath, tableProgressPath} {
		var first string
		for _, lb := range []*hubv1alpha1.Leaderboard{nil, boardrestest.PrivateBoard(), boardrestest.ForeignBoard()} {
			h := accessPages(t, &boardrestest.Reviewer{}, lb, boardrestest.Row(lb, boardrestest.RowRanked))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, pageRequest(path, boardrestest.Outsider))
			if got := w.Body.String(); first == "" {
				first = got
			} else if got != first || strings.Contains(got, "Access") {
				t.Errorf("%s: refusals differ or show the board:\n%s\n%s", path, first, got)
			}
		}
	}
}

// A chart's refusal is the board page's refusal, headers and bytes: to an outsider a
// private board's chart is as missing as a missing board, and as the board itself.
func TestChartRefusalsAreTheBoardPages(t *testing.T) {
	for _, lb := range []*hubv1alpha1.Leaderboard{nil, boardrestest.PrivateBoard(), boardrestest.ForeignBoard()} {
		h := accessPages(t, &boardrestest.Reviewer{}, lb, boardrestest.Row(lb, boardrestest.RowRanked))
		answer := func(path string) string {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, pageRequest(path, boardrestest.Outsider))
			hd := w.Header()
			return fmt.Sprint(w.Code, "|", hd.Get("Content-Type"), "|", hd.Get("Cache-Control"), "|", hd.Get("Content-Security-Policy"), "|",
				hd.Get("ETag"), "|", w.Body.String())
		}
		want := answer(tableBoardPath)
		if !strings.HasPrefix(want, "404|") {
			t.Fatalf("the board page answers %.40s", want)
		}
		for _, path := range []string{tableIntervalsPath, tableProgressPath, tableIntervalsPath + "?chart_rows=0"} {
			if got := answer(path); got != want {
				t.Errorf("%s answers otherwise than the board page:\n%s\n%s", path, got, want)
			}
		}
	}
}
