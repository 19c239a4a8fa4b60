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
	// UID indexes Datasets, Leaderboards and HostedSecrets by their record id
	// (hubv1alpha1.ID: the recorded hub.podium.dev/id annotation, else metadata.uid,
	// under the index name it always had). Not LeaderboardRows: a per-row index entry costs about 550 bytes of operator
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

// Field is one field index of the manager's cache: the kind it indexes, its name (what
// a MatchingFields selector names) and the values an object is found by.
type Field struct {
	Object client.Object
	Name   string
	Values client.IndexerFunc
}

// Fields are the field indexes of Podium's records, the one list Register adds to the
// manager's cache and tests give a fake client (WithIndex), so that a test cannot
// index a record differently from the operator.
func Fields() []Field {
	byUID := func(o client.Object) []string { return []string{hubv1alpha1.ID(o)} }
	return []Field{
		{&hubv1alpha1.Dataset{}, UID, byUID},
		{&hubv1alpha1.Leaderboard{}, UID, byUID},
		{&hubv1alpha1.HostedSecret{}, UID, byUID},
		{&hubv1alpha1.Leaderboard{}, BoardSlug, BoardSlugValues},
		{&hubv1alpha1.LeaderboardRow{}, RowBoard, func(o client.Object) []string {
			return []string{o.(*hubv1alpha1.LeaderboardRow).Spec.Leaderboard}
		}},
	}
}

// Register adds Fields to the manager's cache.
func Register(ctx context.Context, mgr manager.Manager) error {
	return RegisterOn(ctx, mgr.GetFieldIndexer())
}

// RegisterOn adds Fields to a cache (the manager's, or a cache built alone, as the
// operator's memory benchmark does).
func RegisterOn(ctx context.Context, fi client.FieldIndexer) error {
	for _, f := range Fields() {
		if err := fi.IndexField(ctx, f.Object, f.Name, f.Values); err != nil {
			return err
		}
	}
	return nil
}
