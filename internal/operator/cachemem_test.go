package operator

import (
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// decodedRow builds a row whose strings are all separate copies, as a JSON decoder
// leaves them.
func decodedRow(name, uid string) *hubv1alpha1.LeaderboardRow {
	c := func(s string) string { return string([]byte(s)) }
	return &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: c("acme"), Name: name, UID: "u-" + types.UID(uid),
			Labels: map[string]string{c(hubv1alpha1.LabelLeaderboard): c("main"), c(hubv1alpha1.LabelID): uid},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: c("hub.podium.dev/v1alpha1"), Kind: c("Leaderboard"), Name: c("main"), UID: types.UID(c("board-uid")),
				Controller: ptr.To(true),
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: hubv1alpha1.LeaderboardRowSpec{
			Leaderboard: c("main"), Visibility: hubv1alpha1.RowVisibility(c("display")),
			Metrics: &apiextensionsv1.JSON{Raw: []byte(`{"score":1}`)},
		},
		Status: hubv1alpha1.LeaderboardRowStatus{Conditions: []metav1.Condition{{
			Type: c("Valid"), Status: metav1.ConditionStatus(c("True")), Reason: c("ValuesValid"), Message: c("metadata and metrics match"),
		}}},
	}
}

func TestCompactCachedObjects(t *testing.T) {
	transform := CacheTransform()
	a, b := decodedRow("a", "1"), decodedRow("b", "2")
	want := a.DeepCopy()
	want.ManagedFields = nil

	outA, err := transform(a)
	if err != nil {
		t.Fatal(err)
	}
	outB, _ := transform(b)
	rowA, rowB := outA.(*hubv1alpha1.LeaderboardRow), outB.(*hubv1alpha1.LeaderboardRow)
	if diff := cmp.Diff(want, rowA); diff != "" {
		t.Errorf("the transform changed a value (-want +got):\n%s", diff)
	}
	same := func(what, x, y string) {
		if unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s is not shared between rows", what)
		}
	}
	same("namespace", rowA.Namespace, rowB.Namespace)
	same("spec.leaderboard", rowA.Spec.Leaderboard, rowB.Spec.Leaderboard)
	same("owner kind", rowA.OwnerReferences[0].Kind, rowB.OwnerReferences[0].Kind)
	same("owner uid", string(rowA.OwnerReferences[0].UID), string(rowB.OwnerReferences[0].UID))
	same("condition message", rowA.Status.Conditions[0].Message, rowB.Status.Conditions[0].Message)
	same("board label", rowA.Labels[hubv1alpha1.LabelLeaderboard], rowB.Labels[hubv1alpha1.LabelLeaderboard])

	// Objects that are not Kubernetes objects pass through untouched.
	if out, err := transform("x"); err != nil || out != "x" {
		t.Errorf("transform(%q) = %v, %v", "x", out, err)
	}
}

func TestCompactSharesLabelKeys(t *testing.T) {
	transform := CacheTransform()
	a, b := decodedRow("a", "1"), decodedRow("b", "2")
	_, _ = transform(a)
	_, _ = transform(b)
	key := func(m map[string]string, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		t.Fatalf("label %q missing", want)
		return ""
	}
	if unsafe.StringData(key(a.Labels, hubv1alpha1.LabelID)) != unsafe.StringData(key(b.Labels, hubv1alpha1.LabelID)) {
		t.Errorf("label keys are not shared between rows")
	}
}

func TestTransformStripsRowHistory(t *testing.T) {
	row := decodedRow("a", "1")
	v := "1"
	at := metav1.NewTime(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
	row.Status.ObservedValues = []hubv1alpha1.ObservedValue{{Field: "metrics.reward", Value: "1"}}
	row.Status.History = []hubv1alpha1.RowChange{
		{Generation: 2, Fields: []hubv1alpha1.FieldChange{{Field: "metrics.reward", New: &v}}},
		{At: at, Generation: 3, By: "alice", Fields: []hubv1alpha1.FieldChange{{Field: "metrics.reward", Old: &v}}},
	}
	if _, err := CacheTransform()(row); err != nil {
		t.Fatal(err)
	}
	if row.Status.ObservedValues != nil || len(row.Status.History) != 1 || row.Status.History[0].Fields != nil ||
		!row.Status.History[0].At.Equal(&at) || row.Status.History[0].By != "" {
		t.Errorf("the cached row keeps more than the newest change's time: %+v, %+v", row.Status.History, row.Status.ObservedValues)
	}
}
