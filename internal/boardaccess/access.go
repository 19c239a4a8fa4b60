// Package boardaccess is the one rule of who may read a board and its rows, and how a
// refusal looks, for every reader (the HTTP API and the web pages); the board rules it
// builds on (Servable, slugs) are boardres'.
package boardaccess

import (
	"context"
	"errors"
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/ranking"
)

// Who may read a board, and how a refusal looks (docs/http-api.md, "Private boards";
// docs/web.md, "Authorization"). Every reader decides through Access: the JSON read
// (POST and GET), the CSV, the badge, the row history, the row read, and the web board
// and history pages. The rule:
//
//   - A public board that is Servable is read by anyone, with no access review.
//   - Anything else (a private board, a board of another org's package, a missing
//     board) is for authenticated callers the review allows (get leaderboards in the
//     board's namespace). Anonymous callers are refused without a review.
//   - A missing or unservable board is reviewed exactly like a private one, so that
//     the time of a refusal does not tell an authenticated caller whether a private
//     board exists; then it is refused whatever the review said.
//   - Every refusal is ErrNotFound, which readers answer with one 404 whatever its
//     cause. A review that fails is a ReviewError (a 503 that names nothing).
//
// Rows follow their board (Access.Row): a ranked row of a public board is public; any
// other row, or a row that is not there, is for the board's members, reviewed whether
// or not it exists.

// Reviewer runs the access review; authn.Reviewer is one.
type Reviewer interface {
	Allowed(ctx context.Context, c *authn.Caller, a authn.Attributes) (bool, error)
}

// Asked names what a caller asked for, as they named it. It names the review of a board
// that is not there, so that a missing board costs what a private one costs.
type Asked struct {
	// ID is the board's id, or the row's for a read by row id (a lowercase UUID); ""
	// for a read by slug.
	ID string
	// Package ("<org>/<dataset>") and Name name a board by slug.
	Package, Name string
}

// ErrNotFound is the one refusal: a missing board or row, a private one the caller may
// not read, a board of another org's package. Readers answer it with the same 404 (and
// the same bytes) whatever the cause, and never let a cache store it.
var ErrNotFound = errors.New("not found")

// ReviewError is an access review that could not be run. Readers log Err and answer
// 503 without naming the board.
type ReviewError struct{ Err error }

func (e *ReviewError) Error() string { return "reviewing a leaderboard read: " + e.Err.Error() }
func (e *ReviewError) Unwrap() error { return e.Err }

// Access decides reads. The zero value (no Reviewer) serves public boards only.
type Access struct {
	Reviewer Reviewer
}

// Board decides whether the caller in ctx may read lb, the board the caller asked for
// (nil when there is none): lb, or ErrNotFound, or a *ReviewError.
func (a Access) Board(ctx context.Context, asked Asked, lb *hubv1alpha1.Leaderboard) (*hubv1alpha1.Leaderboard, error) {
	if lb != nil && !boardres.Servable(lb) {
		lb = nil // named another org's dataset: answered like a missing board
	}
	if lb != nil && lb.Spec.Visibility == hubv1alpha1.VisibilityPublic {
		return lb, nil
	}
	caller := authn.CallerFrom(ctx)
	var attrs authn.Attributes
	switch {
	case lb != nil:
		attrs = boardAttributes(lb)
	case asked.ID != "":
		attrs = authn.Attributes{Verb: "get", Resource: "leaderboards", Namespace: caller.ServiceAccountNamespace, Name: asked.ID}
	default:
		org, _, _ := strings.Cut(asked.Package, "/")
		attrs = authn.Attributes{Verb: "get", Resource: "leaderboards", Namespace: org, Name: asked.Name}
	}
	ok, err := a.review(ctx, caller, attrs)
	if err != nil {
		return nil, err
	}
	if !ok || lb == nil {
		return nil, ErrNotFound
	}
	return lb, nil
}

// Row decides whether the caller in ctx may read row (nil when there is none) of lb, a
// board Board let the caller read: row, or ErrNotFound, or a *ReviewError. A row
// PublicRow shows is read by anyone. On a private board Board has reviewed the caller
// already. On a public board any other row, and a row that is not there, costs one
// review, so that the time of a refusal does not tell a hidden row from a missing one.
func (a Access) Row(ctx context.Context, lb *hubv1alpha1.Leaderboard, row *hubv1alpha1.LeaderboardRow) (*hubv1alpha1.LeaderboardRow, error) {
	if row != nil && (row.Namespace != lb.Namespace || row.Spec.Leaderboard != lb.Name) {
		row = nil // another board's row
	}
	if PublicRow(lb, row) {
		return row, nil
	}
	if lb.Spec.Visibility == hubv1alpha1.VisibilityPublic {
		ok, err := a.review(ctx, authn.CallerFrom(ctx), boardAttributes(lb))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ErrNotFound
		}
	}
	if row == nil {
		return nil, ErrNotFound
	}
	return row, nil
}

// PublicRow says whether anyone may read a row of a board: the public read shows it
// (a ranked row of a public board).
func PublicRow(lb *hubv1alpha1.Leaderboard, row *hubv1alpha1.LeaderboardRow) bool {
	return lb.Spec.Visibility == hubv1alpha1.VisibilityPublic && row != nil && ranking.Ranked(row)
}

// review asks whether the caller may get leaderboards as attrs say; anonymous callers
// may not and cost no review.
func (a Access) review(ctx context.Context, caller *authn.Caller, attrs authn.Attributes) (bool, error) {
	if caller.Anonymous || a.Reviewer == nil {
		return false, nil
	}
	ok, err := a.Reviewer.Allowed(ctx, caller, attrs)
	if err != nil {
		return false, &ReviewError{Err: err}
	}
	return ok, nil
}

func boardAttributes(lb *hubv1alpha1.Leaderboard) authn.Attributes {
	return authn.Attributes{Verb: "get", Resource: "leaderboards", Namespace: lb.Namespace, Name: lb.Name}
}
