package rowadmission

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
)

// TestHandle is the webhook's rule, case by case: what a row's create gets, applied as
// the apiserver applies the answer.
func TestHandle(t *testing.T) {
	board := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "main", UID: "board-uid"}}
	late := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "late", UID: "late-uid"}}
	boards := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(board).Build()
	live := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(board, late).Build()
	h := &Handler{Boards: boards, Live: live,
		Now:   func() time.Time { return time.Date(2026, 11, 27, 21, 0, 0, 5, time.FixedZone("x", 3600)) },
		NewID: func() string { return "0b6f5c1e-0000-4000-8000-000000000001" }}
	boardRef := metav1.OwnerReference{APIVersion: "hub.podium.dev/v1alpha1", Kind: "Leaderboard", Name: "main", UID: "board-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm-uid"}
	foreign := metav1.OwnerReference{APIVersion: "x/v1", Kind: "Thing", Name: "t", UID: "t-uid", Controller: ptr.To(true)}
	recorded := map[string]string{hubv1alpha1.AnnotationID: "0b6f5c1e-0000-4000-8000-000000000001", hubv1alpha1.AnnotationCreatedAt: "2026-11-27T20:00:00Z"}
	with := func(base map[string]string, more map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range more {
			out[k] = v
		}
		return out
	}
	by := map[string]string{hubv1alpha1.AnnotationCreatedBy: "alice", hubv1alpha1.AnnotationUpdatedBy: "alice"}
	for _, tc := range []struct {
		name      string
		op        admissionv1.Operation
		ann       map[string]string
		owners    []metav1.OwnerReference
		board     string
		wantAnn   map[string]string
		wantOwner []metav1.OwnerReference
	}{
		{name: "a plain create gets an id, its time and the board", op: admissionv1.Create, ann: by, board: "main",
			wantAnn: with(by, recorded), wantOwner: []metav1.OwnerReference{boardRef}},
		{name: "no annotations at all", op: admissionv1.Create, board: "main",
			wantAnn: recorded, wantOwner: []metav1.OwnerReference{boardRef}},
		{name: "other owners are kept, the board is added", op: admissionv1.Create, ann: by, owners: []metav1.OwnerReference{other}, board: "main",
			wantAnn: with(by, recorded), wantOwner: []metav1.OwnerReference{other, boardRef}},
		{name: "a board not in the cache yet is read from the apiserver", op: admissionv1.Create, ann: by, board: "late",
			wantAnn: with(by, recorded), wantOwner: []metav1.OwnerReference{{APIVersion: "hub.podium.dev/v1alpha1", Kind: "Leaderboard", Name: "late", UID: "late-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		{name: "a board not found adds no owner", op: admissionv1.Create, ann: by, board: "gone",
			wantAnn: with(by, recorded)},
		{name: "a controller already set (the CLI's) is left alone", op: admissionv1.Create, ann: by, owners: []metav1.OwnerReference{boardRef}, board: "main",
			wantAnn: with(by, recorded), wantOwner: []metav1.OwnerReference{boardRef}},
		{name: "another controller is the row controller's to settle", op: admissionv1.Create, ann: by, owners: []metav1.OwnerReference{foreign}, board: "main",
			wantAnn: with(by, recorded), wantOwner: []metav1.OwnerReference{foreign}},
		{name: "an id admission refused stays refused (the operator reissues it, with an event)", op: admissionv1.Create,
			ann: with(by, map[string]string{hubv1alpha1.AnnotationID: "", hubv1alpha1.AnnotationCreatedAt: ""}), board: "main",
			wantAnn: with(by, map[string]string{hubv1alpha1.AnnotationID: "", hubv1alpha1.AnnotationCreatedAt: ""}), wantOwner: []metav1.OwnerReference{boardRef}},
		{name: "a restore's id and time are the restore's", op: admissionv1.Create,
			ann: with(by, map[string]string{hubv1alpha1.AnnotationID: "restored", hubv1alpha1.AnnotationCreatedAt: "2020-01-01T00:00:00Z"}), board: "main",
			wantAnn: with(by, map[string]string{hubv1alpha1.AnnotationID: "restored", hubv1alpha1.AnnotationCreatedAt: "2020-01-01T00:00:00Z"}), wantOwner: []metav1.OwnerReference{boardRef}},
		{name: "one key alone is not filled in either", op: admissionv1.Create,
			ann: with(by, map[string]string{hubv1alpha1.AnnotationCreatedAt: ""}), board: "main",
			wantAnn: with(by, map[string]string{hubv1alpha1.AnnotationCreatedAt: ""}), wantOwner: []metav1.OwnerReference{boardRef}},
		{name: "an update is never changed", op: admissionv1.Update, ann: by, board: "main", wantAnn: by},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := &hubv1alpha1.LeaderboardRow{
				TypeMeta:   metav1.TypeMeta{APIVersion: "hub.podium.dev/v1alpha1", Kind: "LeaderboardRow"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "r", Annotations: tc.ann, OwnerReferences: tc.owners},
				Spec:       hubv1alpha1.LeaderboardRowSpec{Leaderboard: tc.board},
			}
			raw, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			res := h.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: tc.op, Namespace: "org", Name: "r",
				Resource: metav1.GroupVersionResource{Group: "hub.podium.dev", Version: "v1alpha1", Resource: "leaderboardrows"},
				Object:   runtime.RawExtension{Raw: raw},
			}})
			if !res.Allowed {
				t.Fatalf("refused: %v", res.Result)
			}
			got := row
			if len(res.Patches) > 0 {
				ops, err := json.Marshal(res.Patches)
				if err != nil {
					t.Fatal(err)
				}
				p, err := jsonpatch.DecodePatch(ops)
				if err != nil {
					t.Fatal(err)
				}
				out, err := p.Apply(raw)
				if err != nil {
					t.Fatalf("the apiserver could not apply %s: %v", ops, err)
				}
				got = &hubv1alpha1.LeaderboardRow{}
				if err := json.Unmarshal(out, got); err != nil {
					t.Fatal(err)
				}
			}
			if !equalMaps(got.Annotations, tc.wantAnn) {
				t.Errorf("annotations %v, want %v", got.Annotations, tc.wantAnn)
			}
			if len(got.OwnerReferences) != len(tc.wantOwner) {
				t.Fatalf("owners %v, want %v", got.OwnerReferences, tc.wantOwner)
			}
			for i := range tc.wantOwner {
				g, w := got.OwnerReferences[i], tc.wantOwner[i]
				if g.UID != w.UID || g.Kind != w.Kind || g.APIVersion != w.APIVersion || g.Name != w.Name ||
					ptr.Deref(g.Controller, false) != ptr.Deref(w.Controller, false) || ptr.Deref(g.BlockOwnerDeletion, false) != ptr.Deref(w.BlockOwnerDeletion, false) {
					t.Errorf("owner %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestRecordedAsTheControllerWould: the id is a new random UUID each time and the time
// is what hubv1alpha1.CreatedAt reads back.
func TestRecordedAsTheControllerWould(t *testing.T) {
	h := &Handler{}
	a, b := h.identity(true), h.identity(true)
	ida := a[0].Value.(map[string]string)[hubv1alpha1.AnnotationID]
	idb := b[0].Value.(map[string]string)[hubv1alpha1.AnnotationID]
	if ida == "" || ida == idb || len(ida) != 36 {
		t.Errorf("ids %q and %q: want two different UUIDs", ida, idb)
	}
	at := a[0].Value.(map[string]string)[hubv1alpha1.AnnotationCreatedAt]
	row := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{hubv1alpha1.AnnotationCreatedAt: at}}}
	if got := hubv1alpha1.CreatedAt(row); got.IsZero() || time.Since(got.Time) > time.Minute {
		t.Errorf("created-at %q reads back as %v", at, got)
	}
}

// TestRestoreIdentityGetsNoNewID: a restore identity's create that sends no identity is
// a row restored from a backup older than its recorded identity (or a cluster admin's);
// it gets no new id, so that the identity its ledger holds can still be given to it. The
// board reference is added all the same. An unsure answer counts as a restore identity.
func TestRestoreIdentityGetsNoNewID(t *testing.T) {
	board := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "main", UID: "board-uid"}}
	boards := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(board).Build()
	raw, err := json.Marshal(&hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "r"}, Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "main"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		answer func() (bool, error)
		wantID bool
	}{
		{"a member gets a new id", func() (bool, error) { return false, nil }, true},
		{"a restore identity does not", func() (bool, error) { return true, nil }, false},
		{"nor does anyone when the review fails", func() (bool, error) { return false, errors.New("apiserver away") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked authenticationv1.UserInfo
			h := &Handler{Boards: boards, Restorer: func(_ context.Context, u authenticationv1.UserInfo, ns string) (bool, error) {
				asked = u
				if ns != "org" {
					t.Errorf("asked about namespace %q", ns)
				}
				return tc.answer()
			}}
			res := h.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Create, Namespace: "org", Name: "r", UserInfo: authenticationv1.UserInfo{Username: "velero"},
				Resource: metav1.GroupVersionResource{Group: "hub.podium.dev", Version: "v1alpha1", Resource: "leaderboardrows"},
				Object:   runtime.RawExtension{Raw: raw},
			}})
			if asked.Username != "velero" {
				t.Errorf("asked about %q", asked.Username)
			}
			ops, _ := json.Marshal(res.Patches)
			gotID := strings.Contains(string(ops), "hub.podium.dev~1id") || strings.Contains(string(ops), `"hub.podium.dev/id"`)
			if gotID != tc.wantID {
				t.Errorf("patch %s: new id %v, want %v", ops, gotID, tc.wantID)
			}
			if !strings.Contains(string(ops), "board-uid") {
				t.Errorf("patch %s: the board reference is added whoever creates", ops)
			}
		})
	}
}
