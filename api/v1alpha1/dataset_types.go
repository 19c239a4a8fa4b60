package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TaskPhase says when a task needs an environment variable.
// +kubebuilder:validation:Enum=agent;verifier;environment
type TaskPhase string

const (
	TaskPhaseAgent       TaskPhase = "agent"
	TaskPhaseVerifier    TaskPhase = "verifier"
	TaskPhaseEnvironment TaskPhase = "environment"
)

// TaskEnvVar is an environment variable a task hard-requires.
type TaskEnvVar struct {
	// name is the environment variable's name.
	// +required
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]{0,127}$`
	Name string `json:"name"`
	// phase is when the task needs it: agent, verifier or environment; unset means
	// agent.
	// +optional
	Phase TaskPhase `json:"phase,omitempty"`
}

// DatasetTask is one task of a dataset version.
type DatasetTask struct {
	// name identifies the task inside the version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// requiredEnv lists the environment variables the task hard-requires; preflight
	// reports them as task requirements.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	RequiredEnv []TaskEnvVar `json:"requiredEnv,omitempty"`
}

// DatasetVersion is one published version of a dataset.
type DatasetVersion struct {
	// id is the version's UUID; leaderboards associate with versions by it.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	ID string `json:"id"`
	// tag is the version's human name (for example "1.0" or "2026-10"); a leaderboard
	// may refer to a version by it. "latest" is reserved for the newest version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self != 'latest'",message="tag 'latest' is reserved: it always means the newest version"
	Tag string `json:"tag"`
	// createdAt is when the version was published; the newest is "latest".
	// +required
	CreatedAt metav1.Time `json:"createdAt"`
	// tasks are the version's tasks, with the environment variables each one requires.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=2000
	Tasks []DatasetTask `json:"tasks,omitempty"`
}

// DatasetSpec describes a dataset and its versions. The dataset's package slug is
// "<namespace>/<name>" and its package_id is the object's UID.
// +kubebuilder:validation:XValidation:rule="!has(self.versions) || self.versions.all(v, self.versions.exists_one(w, w.tag == v.tag))",message="versions: every tag must be unique"
type DatasetSpec struct {
	// title is a display name for the dataset.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Title string `json:"title,omitempty"`
	// description says what the dataset measures.
	// +optional
	// +kubebuilder:validation:MaxLength=5000
	Description string `json:"description,omitempty"`
	// versions are the dataset's published versions.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=300
	Versions []DatasetVersion `json:"versions,omitempty"`
}

// Reasons of a Dataset's Ready condition (docs/leaderboards.md, Dataset).
const (
	// ReasonDatasetReady is ReasonReady: every version can be named unambiguously.
	ReasonDatasetReady = ReasonReady
	// ReasonDuplicateVersionID: two version ids differ only in letter case.
	ReasonDuplicateVersionID = "DuplicateVersionID"
)

// DatasetStatus is the observed state of a Dataset.
type DatasetStatus struct {
	// conditions holds Ready, which says whether every version can be named unambiguously: False
	// (DuplicateVersionID) when two version ids differ only in letter case, since
	// ids are matched without regard to case.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// package is the dataset's slug, "<org>/<dataset>".
	// +optional
	Package string `json:"package,omitempty"`
	// latestVersionID is the id of the newest version, what "latest" resolves to now.
	// +optional
	LatestVersionID string `json:"latestVersionID,omitempty"`
}

// Dataset names an evaluation dataset of an organization (the namespace) and its
// versions. Leaderboards rank results for a dataset.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=dset;pds,categories=podium
// +kubebuilder:printcolumn:name="Package",type=string,JSONPath=`.status.package`
// +kubebuilder:printcolumn:name="Latest",type=string,JSONPath=`.status.latestVersionID`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Dataset struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the dataset.
	// +optional
	Spec DatasetSpec `json:"spec,omitempty"`
	// status is the observed state.
	// +optional
	Status DatasetStatus `json:"status,omitempty"`
}

// DatasetList contains a list of Dataset.
// +kubebuilder:object:root=true
type DatasetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Dataset `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Dataset{}, &DatasetList{})
}
