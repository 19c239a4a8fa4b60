package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/boardaccess"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/wire"
)

// RowReadPath is the read of one row by its id alone (docs/http-api.md, "Row read"),
// Harbor's `leaderboard-row-read`.
const RowReadPath = "/v1/leaderboard-row-read"

// rowReadRequest is the body of a row read.
type rowReadRequest struct {
	RowID *string `json:"row_id"`
}

// rowReadResponse is the answer: {"row": <the read's row>}.
type rowReadResponse struct {
	Row servedRow `json:"row"`
}

// servedRow is a row as the read serves it, with rank null for a row that is not
// ranked (hidden, invalid or not validated yet), which only the board's members see.
type servedRow struct {
	wire.Row
	Rank *int `json:"rank"`
}

// ServeRowRead implements POST /v1/leaderboard-row-read {row_id}: the row with the
// read's row shape, under boardaccess.Access like the row history: a ranked row of a
// public board for anyone, any other row for its board's members, and one 404 for
// every refusal (a private row costs what a missing one costs).
func (rd *Read) ServeRowRead(w http.ResponseWriter, r *http.Request) {
	setCORS(w.Header())
	w.Header()["Cache-Control"] = cacheNoStore
	var req rowReadRequest
	if err := apierr.DecodeJSON(r, &req); err != nil {
		apierr.Write(w, err)
		return
	}
	switch {
	case req.RowID == nil:
		apierr.Write(w, apierr.BadRequest("row_id", "required"))
		return
	case !hubv1alpha1.IsUUID(*req.RowID):
		apierr.Write(w, apierr.BadRequest("row_id", "must be a UUID"))
		return
	}
	id := strings.ToLower(*req.RowID)
	lb, e, err := rd.findRow(r.Context(), types.UID(id))
	if err != nil {
		apierr.Write(w, err)
		return
	}
	resp := rowReadResponse{Row: servedRow{Row: rowWire(lb, e)}}
	if e.Rank > 0 {
		resp.Row.Rank = &e.Rank
	}
	body, err := json.Marshal(resp)
	if err != nil {
		rd.o.Log.Error(err, "Encoding a leaderboard row failed", "leaderboard", client.ObjectKeyFromObject(lb))
		apierr.Write(w, apierr.Internal())
		return
	}
	w.Header()["Content-Type"] = contentTypeJSON
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// findRow returns the row with this id and its board if the caller may read it, with
// its rank when it is ranked. A ranked row of a public board is found in the rank
// index, board by board, without walking any rows. Anything else is for authenticated
// callers only (anonymous ones get the 404 at once, without a review, whether the row
// exists or not), and always costs one walk of the cached rows and one review, whether
// the row is hidden, on a private board, or not there at all.
func (rd *Read) findRow(ctx context.Context, uid types.UID) (*hubv1alpha1.Leaderboard, RankedRow, error) {
	notFound := func() error { return apierr.NotFound("row %s not found", uid) }
	unavailable := func(err error) error {
		rd.o.Log.Error(err, "Looking up a leaderboard row in the cache failed")
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the row cannot be read now; try again")
	}
	var boards hubv1alpha1.LeaderboardList
	if err := rd.o.Cache.List(ctx, &boards, &client.ListOptions{UnsafeDisableDeepCopy: &noDeepCopy}); err != nil {
		return nil, RankedRow{}, unavailable(err)
	}
	for i := range boards.Items {
		lb := &boards.Items[i]
		if lb.Spec.Visibility != hubv1alpha1.VisibilityPublic || !boardres.Servable(lb) || rd.o.Ranks == nil {
			continue
		}
		if board := rd.o.Ranks.Board(lb.UID); board != nil {
			if e, ok := board.Find(uid); ok && rd.owns(ctx, lb) {
				return lb, e, nil
			}
		}
	}
	if authn.CallerFrom(ctx).Anonymous {
		return nil, RankedRow{}, notFound()
	}
	row, err := rd.rows.ByUID(ctx, rd.o.Cache, uid)
	if err != nil {
		return nil, RankedRow{}, unavailable(err)
	}
	var lb *hubv1alpha1.Leaderboard
	if row != nil {
		for i := range boards.Items {
			if b := &boards.Items[i]; b.Namespace == row.Namespace && b.Name == row.Spec.Leaderboard && rd.owns(ctx, b) {
				lb = b
			}
		}
	}
	if lb, err = rd.access.Board(ctx, boardaccess.Asked{ID: string(uid)}, lb); err != nil {
		return nil, RankedRow{}, rd.refusal(ctx, err, notFound)
	}
	if row, err = rd.access.Row(ctx, lb, row); err != nil {
		return nil, RankedRow{}, rd.refusal(ctx, err, notFound)
	}
	e := RankedRow{Row: row}
	if rd.o.Ranks != nil {
		if board := rd.o.Ranks.Board(lb.UID); board != nil {
			if ranked, ok := board.Find(uid); ok {
				e = ranked
			}
		}
	}
	return lb, e, nil
}

// owns says whether lb is the board its slug serves (boardres.Owner): the rows of a
// board that lost its slug to another are not served, as the board itself is not.
func (rd *Read) owns(ctx context.Context, lb *hubv1alpha1.Leaderboard) bool {
	pkg, name, ok := boardres.SplitSlug(boardres.Slug(lb))
	if !ok {
		return false
	}
	owner, err := rd.lookup(ctx, target{pkg: pkg, name: name})
	return err == nil && owner != nil && owner.UID == lb.UID
}
