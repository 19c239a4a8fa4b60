// Package index names the manager's cache field indexes, so that a record is found by
// its id or slug without listing a namespace.
package index

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardres"
)

const (
	// UID indexes Datasets, Leaderboards and HostedSecrets by metadata.uid (a record's
	// id). Not LeaderboardRows: a per-row index entry costs about 550 bytes of operator
	// memory per row (two keys and a set each), a quarter of the budget, and rows are
	// found by id through the hub.podium.dev/id label instead.
	UID = "metadata.uid"
	// BoardSlug indexes Leaderboards by "<org>/<dataset>/<name>" (boardres.Slug).
	BoardSlug = "spec.slug"
	// RowBoard indexes LeaderboardRows by their board's object name (spec.leaderboard).
	RowBoard = "spec.leaderboard"
)

// BoardSlugValues is the BoardSlug index function: a Leaderboard's slug, none while
// its package is unknown. Tests give it to a fake client's WithIndex.
func BoardSlugValues(o client.Object) []string {
	if s := boardres.Slug(o.(*hubv1alpha1.Leaderboard)); s != "" {
		return []string{s}
	}
	return nil
}

// Register adds Podium's field indexes to the manager's cache.
func Register(ctx context.Context, mgr manager.Manager) error {
	return RegisterOn(ctx, mgr.GetFieldIndexer())
}

// RegisterOn adds Podium's field indexes to a cache (the manager's, or a cache built
// alone, as the operator's memory benchmark does).
func RegisterOn(ctx context.Context, fi client.FieldIndexer) error {
	byUID := func(o client.Object) []string { return []string{string(o.GetUID())} }
	for _, obj := range []client.Object{&hubv1alpha1.Dataset{}, &hubv1alpha1.Leaderboard{}, &hubv1alpha1.HostedSecret{}} {
		if err := fi.IndexField(ctx, obj, UID, byUID); err != nil {
			return err
		}
	}
	if err := fi.IndexField(ctx, &hubv1alpha1.Leaderboard{}, BoardSlug, BoardSlugValues); err != nil {
		return err
	}
	return fi.IndexField(ctx, &hubv1alpha1.LeaderboardRow{}, RowBoard, func(o client.Object) []string {
		return []string{o.(*hubv1alpha1.LeaderboardRow).Spec.Leaderboard}
	})
}
