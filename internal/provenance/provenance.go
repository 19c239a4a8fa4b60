// Package provenance decides whether a leaderboard row is verified: whether its current
// values were written by a run Podium admitted, and what that run was (docs/verified-rows.md).
//
// Admission (config/admission/row_metadata.yaml) records on the row the Pod whose
// Pod-bound ServiceAccount token wrote its values (the annotations
// hub.podium.dev/writer-pod and hub.podium.dev/writer-pod-uid). The row controller reads
// that Pod once per write of the values, while it exists, and Decide turns what it found
// into the row's Verified condition and the provenance kept in the row's status; once
// recorded, the provenance holds for as long as the row's values are the ones that Pod
// wrote (the same generation), whether or not the Pod still exists. A Pod whose spec was
// changed after it was created (an image swapped, an ephemeral container added) verifies
// nothing it writes: what it ran when it wrote is not known.
package provenance

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// maxVersions bounds the dataset versions recorded per row.
const maxVersions = 16

// maxImages bounds the containers recorded per row.
const maxImages = 16

// Writer is the Pod admission recorded as the writer of a row's current values.
type Writer struct {
	// Namespace is the Pod's namespace: its ServiceAccount's, read from the user that
	// wrote the values (hub.podium.dev/updated-by, "system:serviceaccount:<ns>:<name>").
	Namespace string
	// ServiceAccount is the name of that ServiceAccount.
	ServiceAccount string
	Name           string
	UID            string
	// Generation is the row's generation: the values the Pod wrote.
	Generation int64
}

// WriterOf returns the Pod that wrote row's current values; ok is false when admission
// recorded none (the values were written without a Pod-bound token) or the recorded
// writer is not a ServiceAccount.
func WriterOf(row *hubv1alpha1.LeaderboardRow) (w Writer, ok bool) {
	a := row.GetAnnotations()
	w.Name, w.UID = a[hubv1alpha1.AnnotationWriterPod], a[hubv1alpha1.AnnotationWriterPodUID]
	if w.Name == "" || w.UID == "" {
		return Writer{}, false
	}
	parts := strings.Split(a[hubv1alpha1.AnnotationUpdatedBy], ":")
	if len(parts) != 4 || parts[0] != "system" || parts[1] != "serviceaccount" || parts[2] == "" || parts[3] == "" {
		return Writer{}, false
	}
	w.Namespace, w.ServiceAccount = parts[2], parts[3]
	w.Generation = row.Generation
	return w, true
}

// Facts is what the controller found about a row's writer.
type Facts struct {
	// Pod is the writing Pod as read from the apiserver; nil when no Pod of that name
	// exists.
	Pod *corev1.Pod
	// RequesterMayWrite says whether the run's requester may create rows in the row's
	// namespace (asked of the apiserver's authorizer only when the rest holds).
	RequesterMayWrite bool
}

// Verdict is a row's Verified condition and the provenance its status keeps.
type Verdict struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
	// Provenance is the run's record when Status is True, else nil.
	Provenance *hubv1alpha1.RowProvenance
	// Retry says the verdict may change without a change of the row (the Pod's
	// containers have not been reported yet): the controller checks again.
	Retry bool
}

// Verified says whether v verifies the row.
func (v Verdict) Verified() bool { return v.Status == metav1.ConditionTrue }

// Kept returns the verdict of a row whose status already holds the provenance of its
// current values: it stays verified without reading the Pod again (the Pod may be gone).
// The provenance is that of the values it was decided for: the Verified condition's
// generation. A later write of the values by the same Pod is a new generation, decided
// again from the Pod as it is then (its image may have been swapped since). ok is false
// when the controller must look at the Pod.
//
// A row a restore identity re-created from a backup (its recorded id is not its UID)
// starts again at generation 1 with the status it had: at generation 1, its values are
// the ones backed up, and the provenance restored with them is kept (docs/verified-rows.md).
func Kept(row *hubv1alpha1.LeaderboardRow) (Verdict, bool) {
	w, ok := WriterOf(row)
	p := row.Status.Provenance
	if !ok || p == nil || p.PodUID != w.UID || p.PodName != w.Name {
		return Verdict{}, false
	}
	c := meta.FindStatusCondition(row.Status.Conditions, hubv1alpha1.ConditionVerified)
	if c == nil || c.Status != metav1.ConditionTrue {
		return Verdict{}, false
	}
	switch {
	case c.ObservedGeneration == row.Generation:
		return verified(p), true
	case row.Generation == 1 && restored(row):
		kept := *p
		kept.Generation = row.Generation
		return verified(&kept), true
	}
	return Verdict{}, false
}

// restored says whether row was re-created from a backup: only a restore identity may
// create a row with a recorded id (config/admission/row_metadata.yaml), and the operator
// records every other row's UID as its id.
func restored(row *hubv1alpha1.LeaderboardRow) bool {
	id := row.Annotations[hubv1alpha1.AnnotationID]
	return id != "" && id != string(row.UID)
}

// NotWritten is the verdict of a row whose values no Pod wrote.
func NotWritten() Verdict {
	return Verdict{Status: metav1.ConditionFalse, Reason: hubv1alpha1.ReasonNotWrittenByRun,
		Message: "the row's values were not written by a run: admission recorded no Pod-bound token for the last change"}
}

// Needs says what Decide needs after the Pod was read: whether the requester's right to
// write rows must be asked (only when everything else holds) and of whom.
func Needs(w Writer, pod *corev1.Pod) (requester string, ask bool) {
	if pod == nil || string(pod.UID) != w.UID || serviceAccountOf(pod) != w.ServiceAccount {
		return "", false
	}
	r := pod.Annotations[hubv1alpha1.AnnotationRequester]
	if r == "" || changed(pod) {
		return "", false
	}
	if _, ready := images(pod); !ready {
		return "", false
	}
	return r, true
}

// Decide decides a row's verdict from its recorded writer w, the board (nil when it does
// not exist) and what the controller found.
func Decide(w Writer, lb *hubv1alpha1.Leaderboard, f Facts) Verdict {
	pod := f.Pod
	if pod == nil || string(pod.UID) != w.UID {
		return Verdict{Status: metav1.ConditionFalse, Reason: hubv1alpha1.ReasonPodGone,
			Message: fmt.Sprintf("Pod %s/%s that wrote the row's values was deleted before its run could be recorded", w.Namespace, w.Name)}
	}
	if serviceAccountOf(pod) != w.ServiceAccount {
		// A Pod's ServiceAccount cannot change; a token of another account names
		// another Pod. Not expected, refused all the same.
		return Verdict{Status: metav1.ConditionFalse, Reason: hubv1alpha1.ReasonPodNotAdmitted,
			Message: fmt.Sprintf("Pod %s/%s does not run as the ServiceAccount that wrote the row's values", w.Namespace, w.Name)}
	}
	requester := pod.Annotations[hubv1alpha1.AnnotationRequester]
	if requester == "" {
		return Verdict{Status: metav1.ConditionFalse, Reason: hubv1alpha1.ReasonPodNotAdmitted,
			Message: fmt.Sprintf("Pod %s/%s that wrote the row's values is not a run Podium admitted (it carries no %s)", w.Namespace, w.Name, hubv1alpha1.AnnotationRequester)}
	}
	if changed(pod) {
		return Verdict{Status: metav1.ConditionFalse, Reason: hubv1alpha1.ReasonPodChanged,
			Message: fmt.Sprintf("Pod %s/%s that wrote the row's values had its spec changed after it was created (an image, an ephemeral container, its resources): what it ran when it wrote them is not known", w.Namespace, w.Name)}
	}
	imgs, ready := images(pod)
	if !ready {
		v := Verdict{Status: metav1.ConditionFalse, Reason: hubv1alpha1.ReasonPodNotStarted,
			Message: fmt.Sprintf("Pod %s/%s that wrote the row's values has containers without a reported image digest", w.Namespace, w.Name)}
		v.Retry = pod.Status.Phase == corev1.PodPending || pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == ""
		if v.Retry {
			v.Status = metav1.ConditionUnknown
		}
		return v
	}
	if !f.RequesterMayWrite {
		return Verdict{Status: metav1.ConditionFalse, Reason: hubv1alpha1.ReasonRequesterMayNotWrite,
			Message: fmt.Sprintf("the requester of Pod %s/%s, %s, may not write rows in this namespace", w.Namespace, w.Name, requester)}
	}
	p := &hubv1alpha1.RowProvenance{
		PodName:    w.Name,
		PodUID:     w.UID,
		Requester:  requester,
		JobID:      jobID(pod.Annotations[hubv1alpha1.AnnotationJobID]),
		Images:     imgs,
		RanAt:      pod.Status.StartTime,
		Generation: w.Generation,
	}
	if lb != nil {
		vs := lb.Status.DatasetVersionIDs
		if len(vs) > maxVersions {
			vs = vs[:maxVersions]
		}
		p.DatasetVersionIDs = append([]string(nil), vs...)
	}
	return verified(p)
}

func verified(p *hubv1alpha1.RowProvenance) Verdict {
	return Verdict{Status: metav1.ConditionTrue, Reason: hubv1alpha1.ReasonRunVerified, Provenance: p,
		Message: fmt.Sprintf("the row's values were written by Pod %s, a run of %s that Podium admitted", p.PodName, p.Requester)}
}

// changed says whether pod's spec was changed after the Pod was created. The apiserver
// sets a Pod's metadata.generation to 1 at creation and raises it by one on every change
// of its spec (an image, the pods/ephemeralcontainers and pods/resize subresources
// included) and once when a deletion starts (deletionTimestamp set); nothing else raises
// it (binding a Pod to a node does not). So a Pod whose generation is more than that has
// had its spec changed, perhaps back and forth, and its containers' reported digests no
// longer say what ran when it wrote. Any other value (0: an apiserver that does not
// count) is taken as changed.
func changed(pod *corev1.Pod) bool {
	want := int64(1)
	if pod.DeletionTimestamp != nil {
		want++
	}
	return pod.Generation != want || len(pod.Spec.EphemeralContainers) > 0
}

func serviceAccountOf(pod *corev1.Pod) string {
	switch {
	case pod.Spec.ServiceAccountName != "":
		return pod.Spec.ServiceAccountName
	case pod.Spec.DeprecatedServiceAccount != "":
		return pod.Spec.DeprecatedServiceAccount
	}
	return "default"
}

// images returns the Pod's containers (spec order), then its init containers (which ran
// before them, or beside them as sidecars, with the same token), with the image each
// ran; ready is false while one of them has no reported image digest.
func images(pod *corev1.Pod) (out []hubv1alpha1.ContainerImage, ready bool) {
	ids := make(map[string]string, len(pod.Status.ContainerStatuses)+len(pod.Status.InitContainerStatuses))
	for _, s := range pod.Status.ContainerStatuses {
		ids[s.Name] = s.ImageID
	}
	for _, s := range pod.Status.InitContainerStatuses {
		ids[s.Name] = s.ImageID
	}
	ready = len(pod.Spec.Containers) > 0
	add := func(name, image string) {
		id := ids[name]
		if id == "" {
			ready = false
		}
		if len(out) < maxImages {
			out = append(out, hubv1alpha1.ContainerImage{Name: name, Image: image, ImageID: id})
		}
	}
	for _, c := range pod.Spec.Containers {
		add(c.Name, c.Image)
	}
	for _, c := range pod.Spec.InitContainers {
		add(c.Name, c.Image)
	}
	return out, ready
}

// jobID is the run's job id when it is a UUID (as delivery reads it), else "".
func jobID(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if len(v) != 36 {
		return ""
	}
	for i, c := range v {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return ""
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return ""
			}
		}
	}
	return v
}

// GroupsOf are the groups the authorizer is asked about for requester: a ServiceAccount's
// own groups, else only system:authenticated (admission records a requester's name, not
// its groups: rights a person holds only through a group are not seen).
func GroupsOf(requester string) []string {
	parts := strings.Split(requester, ":")
	if len(parts) == 4 && parts[0] == "system" && parts[1] == "serviceaccount" {
		return []string{"system:serviceaccounts", "system:serviceaccounts:" + parts[2], "system:authenticated"}
	}
	return []string{"system:authenticated"}
}
