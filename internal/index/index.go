// Package index is the one place that registers the manager's cache field indexes, so
// that a record is found by its id, slug or slot without listing a namespace. A
// consumer queries an index by the name registered here (a test checks every
// MatchingFields and field selector of the tree against Fields).
package index

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/delivery"
	"podium.dev/podium/internal/secrets"
)

const (
	// UID indexes Datasets, Leaderboards, HostedSecrets and Namespaces (organizations,
	// controllers.OrgIdentityRecorder) by their record id
	// (hubv1alpha1.ID: the recorded hub.podium.dev/id annotation, else metadata.uid,
	// under the index name it always had). Not LeaderboardRows: a per-row index entry costs about 550 bytes of operator
	// memory per row (two keys and a set each), a quarter of the budget, and rows are
	// found by id through the hub.podium.dev/id label instead.
	UID = "metadata.uid"
	// BoardSlug indexes Leaderboards by "<org>/<dataset>/<name>" (boardres.Slug).
	BoardSlug = "spec.slug"
	// RowBoard indexes LeaderboardRows by their board's object name (spec.leaderboard).
	RowBoard = "spec.leaderboard"
	// RunSecretUses indexes run Secrets by the UIDs of the HostedSecrets they hold
	// (delivery.ParseUsed of their hub.podium.dev/hosted-secrets annotation), so a revoked
	// secret finds the run Secrets to empty.
	RunSecretUses = "podium.runSecretUses"
	// RunSecretOf indexes the cached Jobs and Pods (the cache holds only those admission
	// gave a run Secret) by the run Secret they were given (label hub.podium.dev/run-secret),
	// so the run Secret controller finds a Secret's run without scanning the namespace.
	RunSecretOf = "podium.runSecret"
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

// Fields are every field index of the manager's cache, the one list Register adds: the
// RecordFields, Namespaces by their record id (an organization found by its org_id,
// hubv1alpha1.ID: the recorded id, else the UID), HostedSecrets by
// slot (secrets.SlotIndex), run Secrets by the secrets they hold (RunSecretUses) and runs
// by their run Secret (RunSecretOf).
func Fields() []Field {
	return append(RecordFields(),
		Field{&corev1.Namespace{}, UID, func(o client.Object) []string { return []string{hubv1alpha1.ID(o)} }},
		Field{&hubv1alpha1.HostedSecret{}, secrets.SlotIndex, func(o client.Object) []string {
			return []string{secrets.SlotIndexValue(o.(*hubv1alpha1.HostedSecret))}
		}},
		Field{&corev1.Secret{}, RunSecretUses, runSecretUses},
		Field{&batchv1.Job{}, RunSecretOf, runSecretOf},
		Field{&corev1.Pod{}, RunSecretOf, runSecretOf},
	)
}

// RunsOf selects, in a cached read, the Jobs or Pods admission gave run Secret name.
func RunsOf(name string) client.ListOption { return client.MatchingFields{RunSecretOf: name} }

// runSecretOf is the RunSecretOf index function: a run's run Secret, if any.
func runSecretOf(o client.Object) []string {
	if name := o.GetLabels()[hubv1alpha1.LabelRunSecret]; name != "" {
		return []string{name}
	}
	return nil
}

// runSecretUses is the RunSecretUses index function: the HostedSecret UIDs a run Secret
// holds; nothing for another Secret.
func runSecretUses(o client.Object) []string {
	if o.GetLabels()[hubv1alpha1.LabelRunFor] == "" {
		return nil
	}
	var uids []string
	for _, u := range delivery.ParseUsed(o.GetAnnotations()[hubv1alpha1.AnnotationRunHostedSecrets]) {
		uids = append(uids, string(u.UID))
	}
	return uids
}

// RecordFields are the field indexes of Podium's records (Datasets, Leaderboards,
// HostedSecrets, LeaderboardRows), the list tests give a fake client (WithIndex), so
// that a test cannot index a record differently from the operator.
func RecordFields() []Field {
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
	return RegisterOn(ctx, mgr.GetFieldIndexer(), Fields())
}

// RegisterOn adds fields to a cache (the manager's, or a cache of Podium's records
// built alone with RecordFields, as the operator's memory benchmark does).
func RegisterOn(ctx context.Context, fi client.FieldIndexer, fields []Field) error {
	for _, f := range fields {
		if err := fi.IndexField(ctx, f.Object, f.Name, f.Values); err != nil {
			return err
		}
	}
	return nil
}
