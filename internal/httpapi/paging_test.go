package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/httpapi"
)

// TestReadWithoutPaging: a read that gives neither page nor page_size gets the whole
// board up to WholeBoardMax rows, and past it a 400 naming the row count and telling
// the client to page; it never gets a part of the board as if it were all of it. A
// read that pages reads any board.
func TestReadWithoutPaging(t *testing.T) {
	for _, n := range []int{0, 1, httpapi.WholeBoardMax, httpapi.WholeBoardMax + 1, 2500} {
		t.Run(fmt.Sprint(n, " rows"), func(t *testing.T) {
			lb := &hubv1alpha1.Leaderboard{
				ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "big", UID: "b1d39e6a-6973-4ed1-bd7c-038473968c01", ResourceVersion: "3"},
				Spec:       hubv1alpha1.LeaderboardSpec{Package: "acme/ds", Name: "big", Title: "Big", Visibility: hubv1alpha1.VisibilityPublic},
			}
			board := &sliceBoard{}
			for i := range n {
				row := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("r", i), UID: types.UID(fmt.Sprintf("uid-%06d", i))}}
				board.rows = append(board.rows, httpapi.RankedRow{Row: row, Rank: i + 1})
			}
			srv := httpapi.New(httpapi.Options{Log: logr.Discard()})
			rd := httpapi.NewRead(httpapi.ReadOptions{Cache: newOneBoard(lb), Ranks: sliceRanks{board}, Log: logr.Discard()})
			srv.Handle("POST "+httpapi.ReadPath, rd)
			srv.Handle("GET "+httpapi.GetBySlugPath, http.HandlerFunc(rd.ServeGET))
			h := srv.Handler()
			do := func(r *http.Request) *httptest.ResponseRecorder {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}
			whole := []*http.Request{
				httptest.NewRequest(http.MethodPost, httpapi.ReadPath, strings.NewReader(`{"package":"acme/ds","name":"big"}`)),
				httptest.NewRequest(http.MethodGet, "/v1/leaderboards/acme/ds/big", nil),
			}
			for _, r := range whole {
				w := do(r)
				if n > httpapi.WholeBoardMax {
					var e struct {
						Error struct {
							Code, Message string
							Details       []struct{ Field string }
						}
					}
					if w.Code != http.StatusBadRequest || json.Unmarshal(w.Body.Bytes(), &e) != nil {
						t.Fatalf("%s %s: status %d %s, want a 400", r.Method, r.URL, w.Code, w.Body)
					}
					if !strings.Contains(e.Error.Message, fmt.Sprint(n, " rows")) || !strings.Contains(e.Error.Message, "in pages") ||
						len(e.Error.Details) != 1 || e.Error.Details[0].Field != "page" {
						t.Errorf("%s: the 400 does not say how many rows and to page: %s", r.Method, w.Body)
					}
					if cc := w.Header().Get("Cache-Control"); r.Method == http.MethodGet && cc != "no-store" {
						t.Errorf("GET: a 400 with Cache-Control %q", cc)
					}
					continue
				}
				b := decodeBody(t, w)
				if len(b.Rows) != n || b.Pagination.Total != n || b.Pagination.Page != 1 || b.Pagination.PageSize != httpapi.MaxPageSize {
					t.Errorf("%s: %d rows, pagination %+v; want all %d", r.Method, len(b.Rows), b.Pagination, n)
				}
			}
			// Paging reads every row of any board, whatever its size.
			got := 0
			for page := 1; ; page++ {
				w := do(httptest.NewRequest(http.MethodPost, httpapi.ReadPath,
					strings.NewReader(fmt.Sprintf(`{"package":"acme/ds","name":"big","page":%d,"page_size":%d}`, page, httpapi.MaxPageSize))))
				b := decodeBody(t, w)
				got += len(b.Rows)
				if page >= b.Pagination.TotalPages {
					break
				}
			}
			if got != n {
				t.Errorf("the pages hold %d rows, want %d", got, n)
			}
		})
	}
}

type pagedBody struct {
	Rows       []json.RawMessage `json:"rows"`
	Pagination struct {
		Total      int `json:"total"`
		Page       int `json:"page"`
		PageSize   int `json:"page_size"`
		TotalPages int `json:"total_pages"`
	} `json:"pagination"`
}

func decodeBody(t *testing.T, w *httptest.ResponseRecorder) pagedBody {
	t.Helper()
	var b pagedBody
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	return b
}
