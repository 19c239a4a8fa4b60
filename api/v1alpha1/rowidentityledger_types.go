package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RowIdentityLedger records, for rows whose identity is not in their own annotations,
// the id and creation time users see (docs/operations.md, "Backup and restore"): rows
// stored before Podium recorded identities, and rows created while the operator's row
// webhook could not be reached. One object holds up to RowIdentityLedgerCapacity rows of
// its namespace, so that recording them costs a write per ledger, never a write per row
// (docs/performance.md, "Rows in"). A backup that keeps the namespace's objects keeps
// it; after a restore, a row without recorded identity whose name a ledger holds takes
// that identity (the oldest entry when several ledgers name it). Only the operator and
// restore identities write ledgers; org roles grant no verb on them.
// It is not in the category podium (`kubectl get podium`): it is the operator's record,
// not one users write.
// +kubebuilder:object:root=true
type RowIdentityLedger struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// rows maps a row's object name to its identity.
	// +optional
	// +kubebuilder:validation:MaxProperties=1000
	// +mapType=atomic
	//nolint:kubeapilinter // A map on purpose: a ledger is written whole by the operator (an update at its resourceVersion, never server-side apply, so no list merge semantics are lost), and the operator looks a row's name up in every ledger of its namespace for each row it reconciles (100 ledgers at 100,000 rows): a map keyed by the row's name keeps that lookup constant, where a list would be scanned.
	Rows map[string]RowIdentity `json:"rows,omitempty"`
}

// RowIdentity is one row's recorded id and creation time.
type RowIdentity struct {
	// id is the row's id: the UID of the row when it was first recorded.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	ID string `json:"id"`
	// createdAt is when the row was first created.
	// +required
	CreatedAt metav1.Time `json:"createdAt"`
}

// RowIdentityLedgerCapacity is how many rows one ledger holds at most: about 120 bytes a
// row, so a write of a ledger (always whole) is at most about 120 KB, and an upgrade over
// 100,000 rows writes 100 ledgers. The map is atomic for server-side apply's field
// tracking: the apiserver records one managed field for it, not one per row, on each
// write.
const RowIdentityLedgerCapacity = 1000

// RowIdentityLedgerList contains a list of RowIdentityLedger.
// +kubebuilder:object:root=true
type RowIdentityLedgerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RowIdentityLedger `json:"items"`
}

func init() {
	SchemeBuilder.Register(&RowIdentityLedger{}, &RowIdentityLedgerList{})
}
