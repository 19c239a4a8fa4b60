package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RowVisibility is the row's status in the read and the CLI: display shows the row,
// hide hides it. It is called visibility here because status is the Kubernetes
// observed state.
// +kubebuilder:validation:Enum=display;hide
type RowVisibility string

const (
	RowDisplay RowVisibility = "display"
	RowHide    RowVisibility = "hide"
)

// LeaderboardRowSpec is one result row of a leaderboard (docs/leaderboards.md).
type LeaderboardRowSpec struct {
	// leaderboard is the object name of the Leaderboard (same namespace) this row
	// belongs to. Immutable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="leaderboard is immutable"
	Leaderboard string `json:"leaderboard"`
	// metadata holds values matching the board's metadataSchema.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Metadata *apiextensionsv1.JSON `json:"metadata,omitempty"`
	// metrics holds values matching the board's metricsSchema; scores are computed by
	// the owner, never by Podium.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Metrics *apiextensionsv1.JSON `json:"metrics,omitempty"`
	// visibility is the row's status in the read and the CLI: display (default) shows
	// the row, hide hides it.
	// +optional
	// +kubebuilder:default=display
	Visibility RowVisibility `json:"visibility,omitempty"`
	// trialIDs are the linked trials' UUIDs, without duplicates.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	TrialIDs []string `json:"trialIDs,omitempty"`
}

// LeaderboardRowStatus is the observed state of a LeaderboardRow.
type LeaderboardRowStatus struct {
	// conditions holds Valid, which says whether metadata and metrics match the board's schemas
	// and, if not, names every failing field. An invalid row is kept, not ranked.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// updatedAt is when the row's values (spec) last changed, by any client: the time
	// the controller first saw the current generation, or the creation time for
	// generation 1. Label, annotation and status writes do not move it. Unset on rows
	// whose current generation was observed before the field existed.
	// +optional
	UpdatedAt *metav1.Time `json:"updatedAt,omitempty"`
	// schemaGeneration is the board generation the row was validated against.
	// +optional
	SchemaGeneration int64 `json:"schemaGeneration,omitempty"`
	// invalidFields lists the fields that fail the board's schemas (the first 100).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	InvalidFields []FieldError `json:"invalidFields,omitempty"`
	// trialLinks records when each linked trial was linked: the trials of
	// spec.trialIDs grouped by the time the controller first saw them there (the
	// creation time for trials the row was created with). Trials unlinked since are
	// dropped; a trial linked again gets the new time.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	TrialLinks []TrialLinkGroup `json:"trialLinks,omitempty"`
	// id is the row's id (its metadata.uid), written by the controller with the row's
	// first status. It is a selectable field: a row is found by id with the field
	// selector status.id=<uuid>, which needs no label and so no second write per row.
	// +optional
	// +kubebuilder:validation:MaxLength=36
	ID string `json:"id,omitempty"`
	// history lists the last changes of the row's values (metadata, metrics, status,
	// trial ids), oldest first: when, who, which fields, old and new values. At most 10
	// entries and 16 KiB; the oldest go first (docs/leaderboards.md, "Change history").
	// Written by the controller in the status write it makes for a new generation anyway.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	History []RowChange `json:"history,omitempty"`
	// provenance is what the controller recorded about the run that wrote the row's
	// values, when a run Podium admitted wrote them (docs/verified-rows.md); the
	// Verified condition says whether it holds for the current values.
	// +optional
	Provenance *RowProvenance `json:"provenance,omitempty"`
	// observedValues are the row's values at observedGeneration, field by field (cut to
	// 256 bytes, with a digest of longer ones): what the next change is compared with.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=140
	ObservedValues []ObservedValue `json:"observedValues,omitempty"`
}

// RowChange is one change of a row's values as the controller saw it: the changes of
// the generations it did not see on their own are in the next one's entry.
type RowChange struct {
	// at is when the controller first saw the changed generation (the row's
	// status.updatedAt for it).
	// +required
	At metav1.Time `json:"at"`
	// by is the Kubernetes user that made the change, as admission recorded it in the
	// hub.podium.dev/updated-by annotation; empty when unknown.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	By string `json:"by,omitempty"`
	// generation is the row's generation after the change.
	// +required
	Generation int64 `json:"generation"`
	// fields are the changed fields (the first 16, in field order).
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Fields []FieldChange `json:"fields"`
	// omittedFields counts the changed fields not listed in fields.
	// +optional
	// +kubebuilder:validation:Minimum=0
	OmittedFields int32 `json:"omittedFields,omitempty"`
}

// FieldChange is one field's old and new value. A value is compact JSON cut to 256
// bytes (then marked truncated); an absent value means the field did not exist.
type FieldChange struct {
	// field is metadata.<key>, metrics.<key>, status or trial_ids (metadata or metrics
	// for a section tracked as a whole).
	// +required
	// +kubebuilder:validation:MaxLength=140
	Field string `json:"field"`
	// old is the value before the change; absent when the field was added.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Old *string `json:"old,omitempty"`
	// oldTruncated says old was cut to 256 bytes.
	// +optional
	OldTruncated bool `json:"oldTruncated,omitempty"`
	// new is the value after the change; absent when the field was removed.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	New *string `json:"new,omitempty"`
	// newTruncated says new was cut to 256 bytes.
	// +optional
	NewTruncated bool `json:"newTruncated,omitempty"`
}

// ObservedValue is one field's value at the observed generation.
type ObservedValue struct {
	// field is named as in FieldChange.
	// +required
	// +kubebuilder:validation:MaxLength=140
	Field string `json:"field"`
	// value is the compact JSON of the value, cut to 256 bytes.
	// +required
	// +kubebuilder:validation:MaxLength=256
	Value string `json:"value"`
	// truncated says value was cut; digest then identifies the whole value.
	// +optional
	Truncated bool `json:"truncated,omitempty"`
	// digest is the hex SHA-256 (first 32 digits) of the whole value, for a cut one.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Digest string `json:"digest,omitempty"`
}

// TrialLinkGroup is the trials linked to a row at one time.
type TrialLinkGroup struct {
	// linkedAt is when these trials were linked.
	// +required
	LinkedAt metav1.Time `json:"linkedAt"`
	// trialIDs are the trials linked at that time.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MaxLength=36
	TrialIDs []string `json:"trialIDs"`
}

// FieldError names one field that fails validation and why.
type FieldError struct {
	// field is the value path, for example "metrics.reward".
	// +required
	Field string `json:"field"`
	// message says what is wrong, for example "must be a number".
	// +required
	Message string `json:"message"`
}

// LeaderboardRow is one result of a Leaderboard: metadata, metrics, whether it is
// shown, and linked trial ids. It is owned by its Leaderboard.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=lbrow;lbrows,categories=podium
// +kubebuilder:selectablefield:JSONPath=`.spec.leaderboard`
// +kubebuilder:selectablefield:JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Board",type=string,JSONPath=`.spec.leaderboard`
// +kubebuilder:printcolumn:name="Visibility",type=string,JSONPath=`.spec.visibility`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Verified",type=string,JSONPath=`.status.conditions[?(@.type=="Verified")].status`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type LeaderboardRow struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the row's content.
	// +required
	Spec LeaderboardRowSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status LeaderboardRowStatus `json:"status,omitempty"`
}

// LeaderboardRowList contains a list of LeaderboardRow.
// +kubebuilder:object:root=true
type LeaderboardRowList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LeaderboardRow `json:"items"`
}

func init() {
	SchemeBuilder.Register(&LeaderboardRow{}, &LeaderboardRowList{})
}
