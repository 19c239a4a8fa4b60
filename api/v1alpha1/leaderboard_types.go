package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Visibility says who may read a leaderboard.
// +kubebuilder:validation:Enum=public;private
type Visibility string

const (
	// VisibilityPublic boards are readable by anyone, without signing in.
	VisibilityPublic Visibility = "public"
	// VisibilityPrivate boards are readable only by members of the owning organization.
	VisibilityPrivate Visibility = "private"
)

// ColumnType is how a column's value is formatted.
// +kubebuilder:validation:Enum=text;number;boolean;date;markdown;link
type ColumnType string

const (
	ColumnText     ColumnType = "text"
	ColumnNumber   ColumnType = "number"
	ColumnBoolean  ColumnType = "boolean"
	ColumnDate     ColumnType = "date"
	ColumnMarkdown ColumnType = "markdown"
	ColumnLink     ColumnType = "link"
)

// Align is a column's horizontal alignment.
// +kubebuilder:validation:Enum=left;center;right
type Align string

// Direction orders a ranking rule.
// +kubebuilder:validation:Enum=asc;desc
type Direction string

const (
	// Ascending ranks the lowest value first.
	Ascending Direction = "asc"
	// Descending ranks the highest value first.
	Descending Direction = "desc"
)

// NullsPlacement says where rows without a value go.
// +kubebuilder:validation:Enum=first;last
type NullsPlacement string

const (
	NullsFirst NullsPlacement = "first"
	NullsLast  NullsPlacement = "last"
)

// Column is one display column of a leaderboard, left to right.
type Column struct {
	// id is the column's unique key.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`
	ID string `json:"id"`
	// header is the column's display heading.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	Header string `json:"header"`
	// accessor is the path of the column's value in a row, beginning with "metadata."
	// or "metrics."; it is also the value the column sorts by.
	// +required
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(metadata|metrics)\.[A-Za-z0-9_.-]+$`
	Accessor string `json:"accessor"`
	// type formats the value: text, number, boolean, date, markdown or link (a URL
	// string or an object with url and label).
	// +required
	Type ColumnType `json:"type"`
	// displayAccessor is an alternate value path shown instead of accessor; accessor
	// stays the sort value.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(metadata|metrics)\.[A-Za-z0-9_.-]+$`
	DisplayAccessor string `json:"displayAccessor,omitempty"`
	// displayType formats the displayAccessor value; same values as type.
	// +optional
	DisplayType ColumnType `json:"displayType,omitempty"`
	// align is the column's alignment: left, center or right.
	// +optional
	Align Align `json:"align,omitempty"`
	// description explains the column (shown as a tooltip).
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	Description string `json:"description,omitempty"`
	// enableSorting lets readers sort by this column.
	// +optional
	EnableSorting *bool `json:"enableSorting,omitempty"`
}

// RankRule is one ranking rule; rules apply in order, later ones break ties. A rule may
// name the uncertainty of its value, either as a standard error (stderr) or as an
// interval (intervalLow and intervalHigh); the read then serves each row's rank range
// (docs/ranking.md, "Rank ranges").
// +kubebuilder:validation:XValidation:rule="!has(self.stderr) || (!has(self.intervalLow) && !has(self.intervalHigh))",message="give stderr, or intervalLow and intervalHigh, not both"
// +kubebuilder:validation:XValidation:rule="has(self.intervalLow) == has(self.intervalHigh)",message="intervalLow and intervalHigh must be given together"
type RankRule struct {
	// accessor is the value path, beginning with "metadata." or "metrics.".
	// +required
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(metadata|metrics)\.[A-Za-z0-9_.-]+$`
	Accessor string `json:"accessor"`
	// direction is asc (lowest first) or desc (highest first).
	// +required
	Direction Direction `json:"direction"`
	// nulls places rows without a value first or last (default last, whatever the
	// direction).
	// +optional
	Nulls NullsPlacement `json:"nulls,omitempty"`
	// stderr is the path of the value's standard error, beginning with "metadata." or
	// "metrics."; a row's value then stands for the 95% interval value ± 1.96·stderr.
	// Not with intervalLow and intervalHigh.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(metadata|metrics)\.[A-Za-z0-9_.-]+$`
	Stderr string `json:"stderr,omitempty"`
	// intervalLow is the path of the low bound of the value's interval (with
	// intervalHigh, instead of stderr).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(metadata|metrics)\.[A-Za-z0-9_.-]+$`
	IntervalLow string `json:"intervalLow,omitempty"`
	// intervalHigh is the path of the high bound of the value's interval (with
	// intervalLow).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(metadata|metrics)\.[A-Za-z0-9_.-]+$`
	IntervalHigh string `json:"intervalHigh,omitempty"`
}

// HasUncertainty says whether the rule names an uncertainty (stderr or an interval).
func (r *RankRule) HasUncertainty() bool {
	return r.Stderr != "" || r.IntervalLow != "" || r.IntervalHigh != ""
}

// LeaderboardSpec is a leaderboard's definition (docs/leaderboards.md).
// +kubebuilder:validation:XValidation:rule="has(self.package) != has(self.packageID)",message="exactly one of package or packageID must be set"
// +kubebuilder:validation:XValidation:rule="has(self.package) == has(oldSelf.package) && has(self.packageID) == has(oldSelf.packageID)",message="package and packageID are immutable"
type LeaderboardSpec struct {
	// package is the dataset's slug, "<org>/<dataset>"; the org must be this
	// object's namespace. Exactly one of package and packageID is set. Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="package is immutable"
	Package string `json:"package,omitempty"`
	// packageID is the dataset's UUID (its Dataset object's UID). Immutable.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="packageID is immutable"
	PackageID string `json:"packageID,omitempty"`
	// name is the leaderboard's slug, unique within its dataset: at most 100
	// characters, a lowercase letter or digit first, then lowercase letters, digits,
	// ".", "_" or "-". Immutable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9._-]*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="name is immutable"
	Name string `json:"name"`
	// title is the display title, 1 to 200 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	Title string `json:"title"`
	// description is at most 5,000 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=5000
	Description *string `json:"description,omitempty"`
	// visibility is public (anyone may read) or private (org members only; default).
	// +optional
	// +kubebuilder:default=private
	Visibility Visibility `json:"visibility,omitempty"`
	// showAuthors makes a public board's read show who created each row (created_by).
	// User names can be personal data, so a public board does not show them unless it
	// opts in; a private board, read by its org's members only, always does.
	// +optional
	ShowAuthors bool `json:"showAuthors,omitempty"`
	// submissions says which rows the board ranks: any (default) ranks every valid row;
	// verified-only ranks only rows written by a run Podium admitted
	// (docs/verified-rows.md), and keeps the others with Valid=False, reason
	// NotVerified.
	// +optional
	// +kubebuilder:default=any
	Submissions Submissions `json:"submissions,omitempty"`
	// metadataSchema is a JSON-Schema style object schema for each row's metadata
	// (type: object, properties with per-property type).
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	MetadataSchema *apiextensionsv1.JSON `json:"metadataSchema,omitempty"`
	// metricsSchema is a JSON-Schema style object schema for each row's metrics.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	MetricsSchema *apiextensionsv1.JSON `json:"metricsSchema,omitempty"`
	// columns are the display columns, left to right; ids are unique.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	Columns []Column `json:"columns,omitempty"`
	// rankBy are the ranking rules, evaluated in order to break ties; with none, rows
	// rank in creation order.
	// At most one rule names an uncertainty (stderr or an interval).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.filter(r, has(r.stderr) || has(r.intervalLow) || has(r.intervalHigh)).size() <= 1",message="at most one rank rule may name an uncertainty (stderr or intervalLow/intervalHigh)"
	RankBy []RankRule `json:"rankBy,omitempty"`
	// datasetVersionRefs are version refs ("latest" or a tag), resolved to fixed
	// version UUIDs when the leaderboard is created. When both datasetVersionRefs and
	// datasetVersionIDs are omitted the board is associated with every version that
	// exists at creation; when both are [] with none.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	DatasetVersionRefs *[]string `json:"datasetVersionRefs,omitempty"`
	// datasetVersionIDs are version UUIDs; they may be combined with refs.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	DatasetVersionIDs *[]string `json:"datasetVersionIDs,omitempty"`
}

// Reasons of a Leaderboard's Ready condition (docs/leaderboards.md, Validation).
const (
	ReasonReady             = "Ready"
	ReasonDatasetNotFound   = "DatasetNotFound"
	ReasonVersionNotFound   = "VersionNotFound"
	ReasonDuplicateName     = "DuplicateName"
	ReasonUnknownAccessor   = "UnknownAccessor"
	ReasonInvalidSchema     = "InvalidSchema"
	ReasonPackageInOtherOrg = "PackageInOtherOrg"
)

// Reasons of a LeaderboardRow's Valid condition (docs/leaderboards.md, Validation).
const (
	ReasonValuesValid         = "ValuesValid"
	ReasonValuesInvalid       = "ValuesInvalid"
	ReasonLeaderboardNotFound = "LeaderboardNotFound"
	ReasonLeaderboardNotReady = "LeaderboardNotReady"
)

// Reasons of Podium's events about leaderboards.
const (
	// ReasonRowsInvalid is the board's Warning event when rows fail its schemas.
	ReasonRowsInvalid = "RowsInvalid"
)

// LeaderboardStatus is the observed state of a Leaderboard.
type LeaderboardStatus struct {
	// conditions holds Ready, which says whether the definition is usable and, if not, why.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// updatedAt is when the definition (spec) last changed, by any client: the time the
	// controller first saw the current generation, or the creation time for generation
	// 1. Label, annotation and status writes do not move it. Unset on boards whose
	// current generation was observed before the field existed.
	// +optional
	UpdatedAt *metav1.Time `json:"updatedAt,omitempty"`
	// package is the resolved dataset slug, "<org>/<dataset>".
	// +optional
	Package string `json:"package,omitempty"`
	// packageID is the resolved dataset UUID.
	// +optional
	PackageID string `json:"packageID,omitempty"`
	// datasetVersionIDs are the associated dataset versions, resolved once from the
	// spec's refs and ids.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=300
	DatasetVersionIDs []string `json:"datasetVersionIDs,omitempty"`
	// resolvedFrom records the spec refs and ids the versions were resolved from, so
	// they are resolved again only when those change. Bounded by the spec's bounds on
	// refs and ids (100 of 128 characters each, JSON-escaped, and 100 UUIDs).
	// +optional
	// +kubebuilder:validation:MaxLength=81920
	ResolvedFrom string `json:"resolvedFrom,omitempty"`
	// versionsResolved is true once datasetVersionIDs has been resolved.
	// +optional
	VersionsResolved bool `json:"versionsResolved,omitempty"`
	// rows is the number of rows of the board.
	// +optional
	Rows int32 `json:"rows"`
	// rankedRows is the number of rows shown and ranked (display and valid).
	// +optional
	RankedRows int32 `json:"rankedRows"`
	// invalidRows is the number of rows whose values fail the board's schemas (their
	// Valid condition is False with reason ValuesInvalid); they are not ranked. A
	// definition change applied with kubectl or GitOps that invalidates rows shows here
	// (the CLI refuses such a change instead), with a Warning event RowsInvalid.
	// +optional
	InvalidRows int32 `json:"invalidRows,omitempty"`
	// invalidRowNames names a few of the invalid rows (object names, at most 5, in
	// name order).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:items:MaxLength=253
	InvalidRowNames []string `json:"invalidRowNames,omitempty"`
}

// Leaderboard is a ranked table of results for a dataset: its definition. Its rows are
// LeaderboardRow objects in the same namespace.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=lb;lbs,categories=podium
// +kubebuilder:printcolumn:name="Package",type=string,JSONPath=`.status.package`
// +kubebuilder:printcolumn:name="Board",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Visibility",type=string,JSONPath=`.spec.visibility`
// +kubebuilder:printcolumn:name="Rows",type=integer,JSONPath=`.status.rows`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Leaderboard struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the leaderboard's definition.
	// +required
	Spec LeaderboardSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status LeaderboardStatus `json:"status,omitempty"`
}

// LeaderboardList contains a list of Leaderboard.
// +kubebuilder:object:root=true
type LeaderboardList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Leaderboard `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Leaderboard{}, &LeaderboardList{})
}
