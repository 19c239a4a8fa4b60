package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Verified rows (docs/verified-rows.md): admission records which Pod wrote a row's
// values, the row controller checks that the Pod was a run Podium admitted and records
// what it ran.
const (
	// AnnotationWriterPod records, on a LeaderboardRow, the name of the Pod whose
	// Pod-bound ServiceAccount token wrote the row's current values (the apiserver's
	// request.userInfo.extra["authentication.kubernetes.io/pod-name"]); '' when the
	// values were written without such a token. Set at admission, never by a client.
	AnnotationWriterPod = "hub.podium.dev/writer-pod"
	// AnnotationWriterPodUID records the UID of that Pod, as AnnotationWriterPod.
	AnnotationWriterPodUID = "hub.podium.dev/writer-pod-uid"

	// ConditionVerified is True when a LeaderboardRow's current values were written by
	// a run Podium admitted (docs/verified-rows.md).
	ConditionVerified = "Verified"
)

// Reasons of a LeaderboardRow's Verified condition, and of its Valid condition on a
// verified-only board.
const (
	// ReasonRunVerified: the values were written by a run Podium admitted.
	ReasonRunVerified = "RunVerified"
	// ReasonNotWrittenByRun: the values were written without a Pod-bound token (a
	// person, a CI account, kubectl).
	ReasonNotWrittenByRun = "NotWrittenByRun"
	// ReasonPodNotAdmitted: the writing Pod carries no record of Podium's admission.
	ReasonPodNotAdmitted = "PodNotAdmitted"
	// ReasonPodGone: the writing Pod was deleted before the controller could record
	// what it ran.
	ReasonPodGone = "PodGone"
	// ReasonPodNotStarted: the writing Pod's containers have no image digest yet (the
	// kubelet has not reported them); the row is checked again.
	ReasonPodNotStarted = "PodNotStarted"
	// ReasonPodChanged: the writing Pod's spec was changed after it was created (an
	// image swapped, an ephemeral container added, a resize): what it ran when it
	// wrote the values is not known.
	ReasonPodChanged = "PodChanged"
	// ReasonRequesterMayNotWrite: the run's requester may not write rows in the
	// board's namespace.
	ReasonRequesterMayNotWrite = "RequesterMayNotWrite"
	// ReasonNotVerified is the Valid condition's reason on a verified-only board for a
	// row that is not verified: it is kept and not ranked.
	ReasonNotVerified = "NotVerified"
)

// Submissions says which rows a leaderboard ranks.
// +kubebuilder:validation:Enum=any;verified-only
type Submissions string

const (
	// SubmissionsAny ranks every valid row (the default).
	SubmissionsAny Submissions = "any"
	// SubmissionsVerifiedOnly ranks only verified rows; the others are kept and
	// reported (Valid=False, reason NotVerified).
	SubmissionsVerifiedOnly Submissions = "verified-only"
)

// RowProvenance is what the row controller recorded about the run that wrote a row's
// values, while the run's Pod existed: it stays when the Pod is gone.
type RowProvenance struct {
	// podName is the writing Pod's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	PodName string `json:"podName"`
	// podUID is the writing Pod's UID: the provenance holds while the row's
	// hub.podium.dev/writer-pod-uid annotation names it.
	// +required
	// +kubebuilder:validation:MaxLength=36
	PodUID string `json:"podUID"`
	// requester is the run's owner, as Podium's admission of the run recorded it.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Requester string `json:"requester,omitempty"`
	// jobID is the run's job id (its hub.podium.dev/job-id annotation), when it has one.
	// +optional
	// +kubebuilder:validation:MaxLength=36
	JobID string `json:"jobID,omitempty"`
	// images are the Pod's containers and the image digests they ran, in spec order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Images []ContainerImage `json:"images,omitempty"`
	// ranAt is when the Pod started (its status.startTime).
	// +optional
	RanAt *metav1.Time `json:"ranAt,omitempty"`
	// datasetVersionIDs are the board's dataset versions when the row was verified
	// (the first 16).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=36
	DatasetVersionIDs []string `json:"datasetVersionIDs,omitempty"`
	// generation is the row generation whose values the run wrote.
	// +optional
	Generation int64 `json:"generation,omitempty"`
}

// ContainerImage is one container of a run and the image it ran.
type ContainerImage struct {
	// name is the container's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// image is the image the Pod spec named.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image,omitempty"`
	// imageID is the image the container ran, as the kubelet reported it (a digest).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	ImageID string `json:"imageID,omitempty"`
}

// Digest is the sha256:... digest in an imageID ("docker-pullable://repo@sha256:...",
// "repo@sha256:..." or "sha256:..."), or the imageID itself when it holds none.
func (c ContainerImage) Digest() string {
	id := c.ImageID
	for i := 0; i+7 <= len(id); i++ {
		if id[i:i+7] == "sha256:" {
			return id[i:]
		}
	}
	return id
}
