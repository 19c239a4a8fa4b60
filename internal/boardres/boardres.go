// Package boardres is board resolution: which Leaderboard owns a slug
// ("<org>/<dataset>/<name>") when more than one object claims it.
//
// The rule (docs/leaderboards.md, "Duplicate names"): the board created first owns the
// slug; boards created in the same second (creationTimestamp has whole seconds) are
// ordered by object name, which is unique in the namespace every claimant shares. A
// board being deleted owns the slug only while no claimant that is not being deleted
// exists. The leaderboard controller keeps the owner Ready and marks every other
// claimant DuplicateName; the public read, the web pages and the CLI serve the owner.
// Every one of them decides through Owner, so they cannot disagree.
package boardres

import (
	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Before reports whether a takes precedence over b for a slug both claim.
func Before(a, b *hubv1alpha1.Leaderboard) bool {
	if ad, bd := !a.DeletionTimestamp.IsZero(), !b.DeletionTimestamp.IsZero(); ad != bd {
		return bd
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// Owner returns the board that owns the slug among boards, all claiming it, or nil
// when boards is empty.
func Owner(boards []hubv1alpha1.Leaderboard) *hubv1alpha1.Leaderboard {
	var best *hubv1alpha1.Leaderboard
	for i := range boards {
		if best == nil || Before(&boards[i], best) {
			best = &boards[i]
		}
	}
	return best
}
