package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A record's identity (docs/operations.md, "What a restore keeps"): the id and the
// creation time users see are assigned once, when the object is first created, and
// survive a backup and restore, which gives every object a new metadata.uid and
// creationTimestamp. The operator records both in annotations: a row's in its create
// (its row webhook, internal/rowadmission: a new UUID and the time of the create), any
// other object's, and a row's the webhook missed, the first time it sees the object (the
// UID and the creationTimestamp of that first object); and admission
// (config/admission/record_identity.yaml, and row_metadata.yaml for rows) lets nobody
// but a restore identity set or change them: the custom verb restore on the kind,
// which the ClusterRole podium-restorer grants.
const (
	// AnnotationID records an object's id (Datasets, Leaderboards, LeaderboardRows,
	// HostedSecrets). Unset or empty, the id is the object's UID: every object created
	// before the annotation existed keeps the id it had.
	AnnotationID = "hub.podium.dev/id"
	// AnnotationCreatedAt records, as an RFC 3339 time, when the record was first
	// created. Unset, empty or unparsable, it is the object's creationTimestamp.
	AnnotationCreatedAt = "hub.podium.dev/created-at"
	// VerbRestore is the custom RBAC verb that lets a client create an object with its
	// recorded id, creation time and authors (a restore from a backup, or a move).
	VerbRestore = "restore"
)

// ID is an object's id: the recorded AnnotationID, else its UID.
func ID(o metav1.Object) string {
	if id := o.GetAnnotations()[AnnotationID]; id != "" {
		return id
	}
	return string(o.GetUID())
}

// CreatedAt is when an object's record was first created: the recorded
// AnnotationCreatedAt, else its creationTimestamp.
func CreatedAt(o metav1.Object) metav1.Time {
	if v := o.GetAnnotations()[AnnotationCreatedAt]; v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return metav1.NewTime(t)
		}
	}
	return o.GetCreationTimestamp()
}

// IdentityRecorded says whether an object's id and creation time are recorded in its
// annotations, so that a backup of its metadata keeps them.
func IdentityRecorded(o metav1.Object) bool {
	a := o.GetAnnotations()
	return a[AnnotationID] != "" && a[AnnotationCreatedAt] != ""
}

// IdentityRefused says whether admission refused an id or creation time the object's
// creator sent (it lacks the restore verb): the policy then leaves an empty value, and
// the object gets a new id, which the operator reports with an event.
func IdentityRefused(o metav1.Object) bool {
	a := o.GetAnnotations()
	id, hasID := a[AnnotationID]
	at, hasAt := a[AnnotationCreatedAt]
	return (hasID && id == "") || (hasAt && at == "")
}

// IdentityAnnotations are the annotations that record an object's identity as it is
// now: what the operator writes once.
func IdentityAnnotations(o metav1.Object) map[string]string {
	return LedgerAnnotations(RowIdentity{ID: ID(o), CreatedAt: CreatedAt(o)})
}

// LedgerIdentity is the identity the row ledgers of a namespace hold for the row named
// name (RowIdentityLedger): the entry with the oldest creation time when several name it
// (a ledger restored from a backup after the operator had already recorded the restored
// row anew holds the older, true one), the smaller id on a tie.
func LedgerIdentity(ledgers []RowIdentityLedger, name string) (RowIdentity, bool) {
	var best RowIdentity
	found := false
	for i := range ledgers {
		e, ok := ledgers[i].Rows[name]
		if !ok || e.ID == "" {
			continue
		}
		if !found || e.CreatedAt.Before(&best.CreatedAt) || (e.CreatedAt.Equal(&best.CreatedAt) && e.ID < best.ID) {
			best, found = e, true
		}
	}
	return best, found
}

// LedgerAnnotations are the annotations that record, on the row itself, the identity a
// ledger holds for it: what the operator writes on a row re-created from a backup.
func LedgerAnnotations(e RowIdentity) map[string]string {
	return map[string]string{
		AnnotationID:        e.ID,
		AnnotationCreatedAt: e.CreatedAt.UTC().Format(time.RFC3339),
	}
}
