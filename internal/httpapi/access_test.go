package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardres/boardrestest"
	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/scheme"
)

// mapRanks is a rank index of fixed boards.
type mapRanks map[types.UID]*sliceBoard

func (m mapRanks) Board(uid types.UID) httpapi.RankedBoard {
	if b := m[uid]; b != nil {
		return b
	}
	return nil
}

// accessServer is the operator's HTTP stack with every JSON reader of a board mounted,
// over a cache holding lb and row (either may be nil).
func accessServer(t *testing.T, rev *boardrestest.Reviewer, lb *hubv1alpha1.Leaderboard, row *hubv1alpha1.LeaderboardRow) http.Handler {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(scheme.Scheme)
	for _, f := range index.Fields() {
		b = b.WithIndex(f.Object, f.Name, f.Values)
	}
	ranks := mapRanks{}
	if lb != nil {
		b = b.WithObjects(lb)
		board := &sliceBoard{}
		if row != nil && boardrestest.RowRanked == rowState(row) {
			board.rows = []httpapi.RankedRow{{Row: row, Rank: 1}}
		}
		ranks[lb.UID] = board
	}
	if row != nil {
		b = b.WithObjects(row)
	}
	srv := httpapi.New(httpapi.Options{Log: logr.Discard(), Reviewer: rev})
	rd := httpapi.NewRead(httpapi.ReadOptions{Cache: b.Build(), Ranks: ranks, Reviewer: rev, Log: logr.Discard()})
	srv.Handle("POST "+httpapi.ReadPath, rd)
	srv.Handle("POST "+httpapi.RowReadPath, http.HandlerFunc(rd.ServeRowRead))
	for pattern, h := range map[string]http.HandlerFunc{
		httpapi.GetBySlugPath: rd.ServeGET, httpapi.GetByIDPath: rd.ServeGET,
		httpapi.CSVBySlugPath: rd.ServeCSV, httpapi.CSVByIDPath: rd.ServeCSV,
		httpapi.BadgeBySlugPath: rd.ServeBadge, httpapi.BadgeByIDPath: rd.ServeBadge,
		httpapi.HistoryBySlugPath: rd.ServeHistory, httpapi.HistoryByIDPath: rd.ServeHistory,
	} {
		srv.Handle("GET "+pattern, h)
	}
	return srv.Handler()
}

func rowState(row *hubv1alpha1.LeaderboardRow) boardrestest.RowState {
	if row.Spec.Visibility == hubv1alpha1.RowHide {
		return boardrestest.RowHidden
	}
	return boardrestest.RowRanked
}

// accessReaders are the JSON readers of a board, each as the request it sends.
var accessReaders = map[string]func() *http.Request{
	"POST read by slug": func() *http.Request {
		return post(httpapi.ReadPath, `{"package":"`+boardrestest.Package+`","name":"`+boardrestest.Name+`"}`)
	},
	"POST read by id": func() *http.Request {
		return post(httpapi.ReadPath, `{"leaderboard_id":"`+string(boardrestest.BoardUID)+`"}`)
	},
	"GET by slug": func() *http.Request { return getReq(slugPath()) },
	"GET by id":   func() *http.Request { return getReq(idPath()) },
	"CSV by slug": func() *http.Request { return getReq(slugPath() + "/rows.csv") },
	"CSV by id":   func() *http.Request { return getReq(idPath() + "/rows.csv") },
	"badge by slug": func() *http.Request {
		return getReq(slugPath() + "/rows/" + string(boardrestest.RowUID) + "/badge.svg")
	},
	"badge by id":         func() *http.Request { return getReq(idPath() + "/rows/" + string(boardrestest.RowUID) + "/badge.svg") },
	"row history by slug": historyBySlug,
	"row history by id":   historyByID,
	"row read":            rowRead,
}

// rowReaders are the readers of a row that may show a row the public read does not.
var rowReaders = map[string]func() *http.Request{
	"row history by slug": historyBySlug,
	"row history by id":   historyByID,
	"row read":            rowRead,
}

func historyBySlug() *http.Request {
	return getReq(slugPath() + "/rows/" + string(boardrestest.RowUID) + "/history")
}
func historyByID() *http.Request {
	return getReq(idPath() + "/rows/" + string(boardrestest.RowUID) + "/history")
}
func rowRead() *http.Request {
	return post(httpapi.RowReadPath, `{"row_id":"`+string(boardrestest.RowUID)+`"}`)
}

func slugPath() string { return "/v1/leaderboards/" + boardrestest.Slug }
func idPath() string   { return "/v1/leaderboards/" + string(boardrestest.BoardUID) }
func getReq(path string) *http.Request {
	return httptest.NewRequest(http.MethodGet, path, nil)
}
func post(path, body string) *http.Request {
	return httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
}

// TestReadersFollowTheAccessTable: every JSON reader of a board answers the access
// table as boardaccess.Access does, with as many reviews: a private board and a missing
// one cost the same, and are refused with the same 404.
func TestReadersFollowTheAccessTable(t *testing.T) {
	run := func(t *testing.T, readers map[string]func() *http.Request, tc boardrestest.AccessCase) {
		lb := tc.Board()
		row := boardrestest.Row(lb, tc.Row)
		rev := &boardrestest.Reviewer{}
		h := accessServer(t, rev, lb, row)
		for name, req := range readers {
			t.Run(name, func(t *testing.T) {
				r := req()
				if tc.Caller != "" {
					r.Header.Set("Authorization", "Bearer "+tc.Caller)
				}
				w := httptest.NewRecorder()
				rev.Reviews()
				h.ServeHTTP(w, r)
				want := http.StatusNotFound
				if tc.Readable {
					want = http.StatusOK
				}
				if w.Code != want {
					t.Fatalf("status %d, want %d: %s", w.Code, want, w.Body)
				}
				if n := rev.Reviews(); n != tc.Reviews {
					t.Errorf("%d reviews, want %d", n, tc.Reviews)
				}
				if w.Code == http.StatusNotFound {
					if cc := w.Header().Get("Cache-Control"); cc != "no-store" && cc != "private, no-cache" && cc != "" {
						t.Errorf("a refusal with Cache-Control %q", cc)
					}
					if strings.Contains(w.Body.String(), "Access") { // the board's title
						t.Errorf("a refusal shows the board: %s", w.Body)
					}
				}
			})
		}
	}
	for _, tc := range boardrestest.AccessCases() {
		t.Run(tc.Name, func(t *testing.T) { run(t, accessReaders, tc) })
	}
	for _, tc := range boardrestest.RowAccessCases() {
		t.Run(tc.Name, func(t *testing.T) { run(t, rowReaders, tc) })
	}
}

// The refusals of one reader are the same bytes whatever their cause.
func TestRefusalsAreTheSameBytes(t *testing.T) {
	for name, req := range accessReaders {
		t.Run(name, func(t *testing.T) {
			var first string
			for _, lb := range []*hubv1alpha1.Leaderboard{nil, boardrestest.PrivateBoard(), boardrestest.ForeignBoard()} {
				rev := &boardrestest.Reviewer{}
				h := accessServer(t, rev, lb, boardrestest.Row(lb, boardrestest.RowRanked))
				r := req()
				r.Header.Set("Authorization", "Bearer "+boardrestest.Outsider)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				got := fmt.Sprint(w.Code, w.Header().Get("Cache-Control"), w.Body.String())
				if first == "" {
					first = got
				} else if got != first {
					t.Errorf("refusals differ:\n%s\n%s", first, got)
				}
			}
		})
	}
}

var _ client.Object = &hubv1alpha1.Leaderboard{}
