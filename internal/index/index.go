// Package index names the manager's cache field indexes, so that a record is found by
// its id or slug without listing a namespace.
package index

import (
	"context"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

const (
	// UID indexes Datasets, Leaderboards and HostedSecrets by their record id
	// (hubv1alpha1.ID: the recorded hub.podium.dev/id annotation, else metadata.uid,
	// under the index name it always had). Not LeaderboardRows: a per-row index entry costs about 550 bytes of operator
	// memory per row (two keys and a set each), a quarter of the budget, and rows are
	// found by id through the hub.podium.dev/id label instead.
	UID = "metadata.uid"
	// BoardSlug indexes Leaderboards by "<org>/<dataset>/<name>".
	BoardSlug = "spec.slug"
	// RowBoard indexes LeaderboardRows by their board's object name (spec.leaderboard).
	RowBoard = "spec.leaderboard"
)

// Servable says whether a board may be served (the public read, the web pages): not
// when its package belongs to another organization than the board's namespace. Such a
// board (the controller reports it not Ready, reason PackageInOtherOrg) would otherwise
// be shown under another org's dataset and id. It is answered like a missing board.
// The same holds while its package is unknown.
func Servable(lb *hubv1alpha1.Leaderboard) bool {
	for _, c := range lb.Status.Conditions {
		if c.Type == hubv1alpha1.ConditionReady && c.Reason == hubv1alpha1.ReasonPackageInOtherOrg {
			return false
		}
	}
	pkg := lb.Spec.Package
	if pkg == "" {
		pkg = lb.Status.Package
	}
	// A board named by packageID alone is served once the controller has resolved the
	// id in the board's own namespace (status.package): until then nobody knows whose
	// dataset it names.
	org, _, ok := strings.Cut(pkg, "/")
	return ok && org == lb.Namespace
}

// Slug returns a board's "<org>/<dataset>/<name>", or "" while its package is unknown
// (a board named by packageID before the controller resolved it).
func Slug(lb *hubv1alpha1.Leaderboard) string {
	pkg := lb.Spec.Package
	if pkg == "" {
		pkg = lb.Status.Package
	}
	if pkg == "" {
		return ""
	}
	return pkg + "/" + lb.Spec.Name
}

// SplitSlug splits "<org>/<dataset>/<name>" into the package and the name.
func SplitSlug(slug string) (pkg, name string, ok bool) {
	parts := strings.Split(slug, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0] + "/" + parts[1], parts[2], true
}

// BoardSlugValues is the BoardSlug index function: a Leaderboard's slug, none while
// its package is unknown. Tests give it to a fake client's WithIndex.
func BoardSlugValues(o client.Object) []string {
	if s := Slug(o.(*hubv1alpha1.Leaderboard)); s != "" {
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
	byUID := func(o client.Object) []string { return []string{hubv1alpha1.ID(o)} }
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
