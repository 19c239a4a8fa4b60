package provenance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

const (
	podUID = "0b7c9c1e-8f7e-4c43-9b55-0d6f7c0e2a11"
	jobUID = "6f1f0d5e-3b1a-4d7e-9c2b-2f5e8a9b1c3d"
)

func rowBy(updatedBy, pod, uid string) *hubv1alpha1.LeaderboardRow {
	row := &hubv1alpha1.LeaderboardRow{}
	row.Generation = 1
	row.Annotations = map[string]string{hubv1alpha1.AnnotationUpdatedBy: updatedBy}
	if pod != "" || uid != "" {
		row.Annotations[hubv1alpha1.AnnotationWriterPod] = pod
		row.Annotations[hubv1alpha1.AnnotationWriterPodUID] = uid
	}
	return row
}

func TestWriterOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		row  *hubv1alpha1.LeaderboardRow
		want Writer
		ok   bool
	}{
		{"pod-bound token", rowBy("system:serviceaccount:acme:alice", "run-1", podUID), Writer{Namespace: "acme", ServiceAccount: "alice", Name: "run-1", UID: podUID, Generation: 1}, true},
		{"a person", rowBy("alice@example.com", "", ""), Writer{}, false},
		{"empty record (a user's later change)", rowBy("system:serviceaccount:acme:alice", "", ""), Writer{}, false},
		{"uid without name", rowBy("system:serviceaccount:acme:alice", "", podUID), Writer{}, false},
		{"writer not a ServiceAccount", rowBy("alice", "run-1", podUID), Writer{}, false},
		{"malformed ServiceAccount", rowBy("system:serviceaccount::alice", "run-1", podUID), Writer{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := WriterOf(tt.row)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("WriterOf = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// admittedPod is a started run of alice with one container that ran a digest.
func admittedPod() *corev1.Pod {
	start := metav1.Unix(1700000000, 0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "run-1", UID: podUID, Generation: 1, Annotations: map[string]string{
			hubv1alpha1.AnnotationRequester: "system:serviceaccount:acme:alice",
			hubv1alpha1.AnnotationJobID:     " " + "6F1F0D5E-3B1A-4D7E-9C2B-2F5E8A9B1C3D",
		}},
		Spec: corev1.PodSpec{ServiceAccountName: "alice", Containers: []corev1.Container{{Name: "eval", Image: "eval:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &start, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "eval", ImageID: "docker.io/library/eval@sha256:abc"},
		}},
	}
}

func TestDecide(t *testing.T) {
	w := Writer{Namespace: "acme", ServiceAccount: "alice", Name: "run-1", UID: podUID, Generation: 3}
	lb := &hubv1alpha1.Leaderboard{Status: hubv1alpha1.LeaderboardStatus{DatasetVersionIDs: []string{"v1"}}}
	mod := func(f func(p *corev1.Pod)) *corev1.Pod { p := admittedPod(); f(p); return p }
	for _, tt := range []struct {
		name   string
		pod    *corev1.Pod
		may    bool
		status metav1.ConditionStatus
		reason string
		retry  bool
	}{
		{"admitted run", admittedPod(), true, metav1.ConditionTrue, hubv1alpha1.ReasonRunVerified, false},
		{"pod gone", nil, true, metav1.ConditionFalse, hubv1alpha1.ReasonPodGone, false},
		{"another pod of the same name", mod(func(p *corev1.Pod) { p.UID = "other" }), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodGone, false},
		{"not admitted (no requester)", mod(func(p *corev1.Pod) { delete(p.Annotations, hubv1alpha1.AnnotationRequester) }), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodNotAdmitted, false},
		{"empty requester", mod(func(p *corev1.Pod) { p.Annotations[hubv1alpha1.AnnotationRequester] = "" }), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodNotAdmitted, false},
		{"other ServiceAccount", mod(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "bob" }), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodNotAdmitted, false},
		{"image not reported yet", mod(func(p *corev1.Pod) { p.Status.ContainerStatuses = nil }), true, metav1.ConditionUnknown, hubv1alpha1.ReasonPodNotStarted, true},
		{"finished without a reported image", mod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = nil
			p.Status.Phase = corev1.PodFailed
		}), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodNotStarted, false},
		{"requester may not write rows", admittedPod(), false, metav1.ConditionFalse, hubv1alpha1.ReasonRequesterMayNotWrite, false},
		{"image swapped after creation", mod(func(p *corev1.Pod) {
			p.Generation = 2
			p.Spec.Containers[0].Image = "evil.example/other:1"
		}), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodChanged, false},
		{"spec changed, status not reported yet", mod(func(p *corev1.Pod) {
			p.Generation = 2
			p.Status.ContainerStatuses = nil
		}), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodChanged, false},
		{"terminating, spec unchanged", mod(func(p *corev1.Pod) {
			now := metav1.Now()
			p.DeletionTimestamp, p.Generation = &now, 2
		}), true, metav1.ConditionTrue, hubv1alpha1.ReasonRunVerified, false},
		{"terminating after a spec change", mod(func(p *corev1.Pod) {
			now := metav1.Now()
			p.DeletionTimestamp, p.Generation = &now, 3
		}), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodChanged, false},
		{"terminating, generation not counted", mod(func(p *corev1.Pod) {
			now := metav1.Now()
			p.DeletionTimestamp, p.Generation = &now, 1
		}), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodChanged, false},
		{"generation not counted", mod(func(p *corev1.Pod) { p.Generation = 0 }), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodChanged, false},
		{"ephemeral container", mod(func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "evil.example/other:1"}}}
		}), true, metav1.ConditionFalse, hubv1alpha1.ReasonPodChanged, false},
		{"init container not reported", mod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "fetch", Image: "fetch:1"}}
		}), true, metav1.ConditionUnknown, hubv1alpha1.ReasonPodNotStarted, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := Decide(w, lb, Facts{Pod: tt.pod, RequesterMayWrite: tt.may})
			if v.Status != tt.status || v.Reason != tt.reason || v.Retry != tt.retry {
				t.Fatalf("Decide = %s %s retry=%v (%s); want %s %s retry=%v", v.Status, v.Reason, v.Retry, v.Message, tt.status, tt.reason, tt.retry)
			}
			if (v.Provenance != nil) != (tt.status == metav1.ConditionTrue) {
				t.Fatalf("provenance %+v with status %s", v.Provenance, v.Status)
			}
		})
	}
	v := Decide(w, lb, Facts{Pod: admittedPod(), RequesterMayWrite: true})
	p := v.Provenance
	if p.PodName != "run-1" || p.PodUID != podUID || p.Requester != "system:serviceaccount:acme:alice" || p.JobID != jobUID ||
		len(p.Images) != 1 || p.Images[0].Digest() != "sha256:abc" || p.Images[0].Image != "eval:1" ||
		p.RanAt == nil || p.RanAt.Unix() != 1700000000 || len(p.DatasetVersionIDs) != 1 || p.Generation != 3 {
		t.Fatalf("provenance = %+v", p)
	}

	// Init containers ran with the Pod's token too: recorded after the containers.
	withInit := admittedPod()
	withInit.Spec.InitContainers = []corev1.Container{{Name: "fetch", Image: "fetch:1"}}
	withInit.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "fetch", ImageID: "docker.io/library/fetch@sha256:def"}}
	p = Decide(w, lb, Facts{Pod: withInit, RequesterMayWrite: true}).Provenance
	if p == nil || len(p.Images) != 2 || p.Images[0].Name != "eval" || p.Images[1].Name != "fetch" || p.Images[1].Digest() != "sha256:def" {
		t.Fatalf("provenance with an init container = %+v", p)
	}
}

func TestNeedsAsksOnlyWhenTheRestHolds(t *testing.T) {
	w := Writer{Namespace: "acme", ServiceAccount: "alice", Name: "run-1", UID: podUID}
	if r, ask := Needs(w, admittedPod()); !ask || r != "system:serviceaccount:acme:alice" {
		t.Fatalf("Needs(admitted) = %q, %v", r, ask)
	}
	notAdmitted := admittedPod()
	delete(notAdmitted.Annotations, hubv1alpha1.AnnotationRequester)
	swapped := admittedPod()
	swapped.Generation = 2
	for _, pod := range []*corev1.Pod{nil, notAdmitted, swapped} {
		if _, ask := Needs(w, pod); ask {
			t.Fatalf("Needs asks for %+v", pod)
		}
	}
}

// verifiedRow is a row run-1 wrote at generation gen, verified then.
func verifiedRow(gen int64) *hubv1alpha1.LeaderboardRow {
	row := rowBy("system:serviceaccount:acme:alice", "run-1", podUID)
	row.Generation, row.UID = gen, "9d8e7f60-1a2b-4c3d-8e9f-a0b1c2d3e4f5"
	row.Annotations[hubv1alpha1.AnnotationID] = string(row.UID)
	row.Status.Provenance = &hubv1alpha1.RowProvenance{PodName: "run-1", PodUID: podUID, Requester: "system:serviceaccount:acme:alice", Generation: gen}
	row.Status.Conditions = []metav1.Condition{{Type: hubv1alpha1.ConditionVerified, Status: metav1.ConditionTrue,
		Reason: hubv1alpha1.ReasonRunVerified, ObservedGeneration: gen}}
	return row
}

func TestKeptHoldsOnlyForTheRecordedWriter(t *testing.T) {
	row := verifiedRow(1)
	if v, ok := Kept(row); !ok || !v.Verified() {
		t.Fatalf("Kept = %+v, %v", v, ok)
	}
	// A person's later change blanks the recorded writer: the provenance no longer holds.
	changed := row.DeepCopy()
	changed.Annotations[hubv1alpha1.AnnotationWriterPod], changed.Annotations[hubv1alpha1.AnnotationWriterPodUID] = "", ""
	if _, ok := Kept(changed); ok {
		t.Fatal("kept after a change by a person")
	}
	// Another Pod's change: the new Pod must be checked.
	other := row.DeepCopy()
	other.Annotations[hubv1alpha1.AnnotationWriterPodUID] = "11111111-2222-3333-4444-555555555555"
	if _, ok := Kept(other); ok {
		t.Fatal("kept after another Pod's change")
	}
}

func TestDigest(t *testing.T) {
	for in, want := range map[string]string{
		"docker-pullable://eval@sha256:abc": "sha256:abc",
		"sha256:abc":                        "sha256:abc",
		"eval:1":                            "eval:1",
		"":                                  "",
	} {
		if got := (hubv1alpha1.ContainerImage{ImageID: in}).Digest(); got != want {
			t.Errorf("Digest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGroupsOf(t *testing.T) {
	if g := GroupsOf("system:serviceaccount:acme:alice"); len(g) != 3 || g[1] != "system:serviceaccounts:acme" {
		t.Fatalf("GroupsOf(sa) = %v", g)
	}
	if g := GroupsOf("alice@example.com"); len(g) != 1 || g[0] != "system:authenticated" {
		t.Fatalf("GroupsOf(person) = %v", g)
	}
}

func TestKeptHoldsOnlyForTheValuesItWasDecidedFor(t *testing.T) {
	// A change of anything but the values (no new generation) keeps it.
	if _, ok := Kept(verifiedRow(2)); !ok {
		t.Fatal("not kept at the generation it was decided for")
	}
	// The same Pod wrote new values (its image may have been swapped since): decided again.
	rewritten := verifiedRow(2)
	rewritten.Generation = 3
	if _, ok := Kept(rewritten); ok {
		t.Fatal("kept after the same Pod wrote new values")
	}
	// Not verified, or never decided: nothing to keep.
	unknown := verifiedRow(2)
	unknown.Status.Conditions[0].Status = metav1.ConditionUnknown
	none := verifiedRow(2)
	none.Status.Conditions = nil
	for _, row := range []*hubv1alpha1.LeaderboardRow{unknown, none} {
		if _, ok := Kept(row); ok {
			t.Fatalf("kept with conditions %+v", row.Status.Conditions)
		}
	}

	// Re-created from a backup with its status (a new UID, the recorded id kept,
	// generation 1 again): the values are the ones backed up, the provenance is kept and
	// now belongs to generation 1.
	restoredRow := verifiedRow(4)
	restoredRow.Generation, restoredRow.UID = 1, "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
	v, ok := Kept(restoredRow)
	if !ok || !v.Verified() || v.Provenance.Generation != 1 {
		t.Fatalf("Kept(restored) = %+v, %v", v, ok)
	}
	if restoredRow.Status.Provenance.Generation != 4 {
		t.Fatal("Kept changed the row's status")
	}
	// ... but not once the restored row's values were written again.
	restoredRow.Generation = 2
	if _, ok := Kept(restoredRow); ok {
		t.Fatal("kept after new values on a restored row")
	}
	// A row that is not restored starts at generation 1 with its own id.
	fresh := verifiedRow(4)
	fresh.Generation = 1
	if _, ok := Kept(fresh); ok {
		t.Fatal("kept on a row that was not restored, at another generation")
	}
}
