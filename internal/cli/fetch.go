package cli

import (
	"context"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// The verbs' reads of boards and rows, in one place.

// board finds a leaderboard by UUID or "<org>/<dataset>/<leaderboard>", connecting on
// first use.
func (a *app) board(ctx context.Context, ref string) (*hub.Client, *hubv1alpha1.Leaderboard, error) {
	return find(a, func(cl *hub.Client) (*hubv1alpha1.Leaderboard, error) { return cl.Board(ctx, ref) })
}

// find connects on first use and finds one record with get.
func find[T any](a *app, get func(*hub.Client) (T, error)) (*hub.Client, T, error) {
	var none T
	cl, err := a.hub()
	if err != nil {
		return nil, none, err
	}
	v, err := get(cl)
	if err != nil {
		return nil, none, err
	}
	return cl, v, nil
}

// rankedBoard is a board with every one of its rows (the Kubernetes list is read page
// after page to its end, never cut at one page), in the read's rank order, then the
// unranked rows (hidden, invalid, not yet validated) in creation order.
func (a *app) rankedBoard(ctx context.Context, ref string) (*hubv1alpha1.Leaderboard, []hub.RankedRow, error) {
	cl, lb, err := a.board(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	rows, err := cl.BoardRows(ctx, lb)
	if err != nil {
		return nil, nil, err
	}
	return lb, hub.Ranked(lb, rows), nil
}

// rankedOnly keeps the rows the read serves: the ranked ones, in rank order.
func rankedOnly(rows []hub.RankedRow) []hub.RankedRow {
	var out []hub.RankedRow
	for _, r := range rows {
		if r.Rank > 0 {
			out = append(out, r)
		}
	}
	return out
}

// rowAndBoard finds a row by its UUID, and its board.
func (a *app) rowAndBoard(ctx context.Context, id string) (*hub.Client, *hubv1alpha1.LeaderboardRow, *hubv1alpha1.Leaderboard, error) {
	cl, row, err := a.row(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	lb, err := cl.BoardOf(ctx, row)
	if err != nil {
		return nil, nil, nil, err
	}
	return cl, row, lb, nil
}

// row finds a row by its UUID, connecting on first use.
func (a *app) row(ctx context.Context, id string) (*hub.Client, *hubv1alpha1.LeaderboardRow, error) {
	return find(a, func(cl *hub.Client) (*hubv1alpha1.LeaderboardRow, error) { return cl.Row(ctx, id) })
}
