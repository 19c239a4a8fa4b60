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
		{"pod-bound token", rowBy("system:serviceaccount:acme:alice", "run-1", podUID), Writer{"acme", "alice", "run-1", podUID}, true},
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
		ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "run-1", UID: podUID, Annotations: map[string]string{
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
	w := Writer{Namespace: "acme", ServiceAccount: "alice", Name: "run-1", UID: podUID}
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
		p.RanAt == nil || p.RanAt.Unix() != 1700000000 || len(p.DatasetVersionIDs) != 1 {
		t.Fatalf("provenance = %+v", p)
	}
}

func TestNeedsAsksOnlyWhenTheRestHolds(t *testing.T) {
	w := Writer{Namespace: "acme", ServiceAccount: "alice", Name: "run-1", UID: podUID}
	if r, ask := Needs(w, admittedPod()); !ask || r != "system:serviceaccount:acme:alice" {
		t.Fatalf("Needs(admitted) = %q, %v", r, ask)
	}
	notAdmitted := admittedPod()
	delete(notAdmitted.Annotations, hubv1alpha1.AnnotationRequester)
	for _, pod := range []*corev1.Pod{nil, notAdmitted} {
		if _, ask := Needs(w, pod); ask {
			t.Fatalf("Needs asks for %+v", pod)
		}
	}
}

func TestKeptHoldsOnlyForTheRecordedWriter(t *testing.T) {
	row := rowBy("system:serviceaccount:acme:alice", "run-1", podUID)
	row.Status.Provenance = &hubv1alpha1.RowProvenance{PodName: "run-1", PodUID: podUID, Requester: "system:serviceaccount:acme:alice"}
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
