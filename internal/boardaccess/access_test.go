package boardaccess_test

import (
	"context"
	"errors"
	"testing"

	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/boardaccess"
	"podium.dev/podium/internal/boardres/boardrestest"
)

// TestAccess runs the access table against the rule itself, by slug and by id; every
// reader runs the same table against its handler.
func TestAccess(t *testing.T) {
	rev := &boardrestest.Reviewer{}
	a := boardaccess.Access{Reviewer: rev}
	asks := map[string]boardaccess.Asked{
		"by slug": {Package: boardrestest.Package, Name: boardrestest.Name},
		"by id":   {ID: string(boardrestest.BoardUID)},
	}
	for _, tc := range boardrestest.AccessCases() {
		for how, asked := range asks {
			t.Run(tc.Name+" "+how, func(t *testing.T) {
				ctx := authn.WithCaller(context.Background(), boardrestest.Caller(tc.Caller))
				rev.Reviews()
				lb := tc.Board()
				if lb != nil && how == "by slug" && lb.Namespace != boardrestest.Org {
					lb = nil // a slug is looked up in its org's namespace only
				}
				got, err := a.Board(ctx, asked, lb)
				if tc.Readable != (err == nil) || (err != nil && !errors.Is(err, boardaccess.ErrNotFound)) {
					t.Fatalf("Board() = %v, %v; want readable %v", got, err, tc.Readable)
				}
				if n := rev.Reviews(); n != tc.Reviews {
					t.Errorf("%d reviews, want %d", n, tc.Reviews)
				}
			})
		}
	}
	for _, tc := range boardrestest.RowAccessCases() {
		t.Run(tc.Name, func(t *testing.T) {
			ctx := authn.WithCaller(context.Background(), boardrestest.Caller(tc.Caller))
			rev.Reviews()
			lb, err := a.Board(ctx, boardaccess.Asked{ID: string(boardrestest.BoardUID)}, tc.Board())
			if err != nil {
				t.Fatalf("Board() = %v; the table's row cases are on readable boards", err)
			}
			row, err := a.Row(ctx, lb, boardrestest.Row(lb, tc.Row))
			if tc.Readable != (err == nil) || (err != nil && !errors.Is(err, boardaccess.ErrNotFound)) {
				t.Fatalf("Row() = %v, %v; want readable %v", row, err, tc.Readable)
			}
			if n := rev.Reviews(); n != tc.Reviews {
				t.Errorf("%d reviews, want %d", n, tc.Reviews)
			}
		})
	}
}

// A review that cannot be run is a ReviewError, never a 404 nor a read.
func TestAccessReviewFails(t *testing.T) {
	a := boardaccess.Access{Reviewer: failing{}}
	ctx := authn.WithCaller(context.Background(), boardrestest.Caller(boardrestest.Member))
	var re *boardaccess.ReviewError
	if _, err := a.Board(ctx, boardaccess.Asked{ID: "x"}, boardrestest.PrivateBoard()); !errors.As(err, &re) {
		t.Errorf("Board() error = %v, want a ReviewError", err)
	}
	lb := boardrestest.PublicBoard()
	if _, err := a.Row(ctx, lb, boardrestest.Row(lb, boardrestest.RowHidden)); !errors.As(err, &re) {
		t.Errorf("Row() error = %v, want a ReviewError", err)
	}
}

type failing struct{}

func (failing) Allowed(context.Context, *authn.Caller, authn.Attributes) (bool, error) {
	return false, errors.New("apiserver down")
}
