package operator

import (
	"reflect"
	"strconv"
	"strings"
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

func TestMapKey(t *testing.T) {
	type pair struct {
		name string
		a, b map[string]string
		same bool
	}
	cases := []pair{
		{"equal maps", map[string]string{"a": "1", "b": "2"}, map[string]string{"b": "2", "a": "1"}, true},
		{"another value", map[string]string{"a": "1"}, map[string]string{"a": "2"}, false},
		{"another key", map[string]string{"a": "1"}, map[string]string{"b": "1"}, false},
		{"an entry more", map[string]string{"a": "1"}, map[string]string{"a": "1", "b": ""}, false},
		{"separator in a key", map[string]string{"a:b": "c"}, map[string]string{"a": "b:c"}, false},
		{"length digits in a value", map[string]string{"a": "1:b", "c": ""}, map[string]string{"a": "", "b": "1:c"}, false},
		{"entries run together", map[string]string{"ab": "", "c": ""}, map[string]string{"a": "bc"}, false},
		{"empty value", map[string]string{"a": ""}, map[string]string{"a": "", "": ""}, false},
	}
	// A value holding what a separator would be must not read as more entries.
	for _, sep := range []string{",", ":", "=", ";", "\x00", "\n", "1:", "2:"} {
		cases = append(cases, pair{"separator " + strconv.Quote(sep),
			map[string]string{"a": "b" + sep + "c" + sep + "d"}, map[string]string{"a": "b", "c": "d"}, false})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ka, kb := mapKey(tc.a), mapKey(tc.b)
			if ka == "" || kb == "" {
				t.Fatalf("mapKey of a non-empty map is empty: %q, %q", ka, kb)
			}
			if (ka == kb) != tc.same {
				t.Errorf("mapKey(%v) = %q, mapKey(%v) = %q: same = %v, want %v", tc.a, ka, tc.b, kb, ka == kb, tc.same)
			}
		})
	}
	if mapKey(nil) != "" || mapKey(map[string]string{}) != "" {
		t.Errorf("empty maps have a key: they must not be shared (nil and empty stay apart)")
	}
}

func TestOwnersKey(t *testing.T) {
	ref := func(mod func(*metav1.OwnerReference)) []metav1.OwnerReference {
		r := metav1.OwnerReference{APIVersion: "hub.podium.dev/v1alpha1", Kind: "Leaderboard", Name: "main", UID: "u", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
		mod(&r)
		return []metav1.OwnerReference{r}
	}
	base := ownersKey(ref(func(*metav1.OwnerReference) {}))
	if base == "" {
		t.Fatal("ownersKey of a reference is empty")
	}
	if got := ownersKey(ref(func(*metav1.OwnerReference) {})); got != base {
		t.Errorf("equal references: %q != %q", got, base)
	}
	for name, mod := range map[string]func(*metav1.OwnerReference){
		"uid":                      func(r *metav1.OwnerReference) { r.UID = "v" },
		"name":                     func(r *metav1.OwnerReference) { r.Name = "other" },
		"kind":                     func(r *metav1.OwnerReference) { r.Kind = "Dataset" },
		"api version":              func(r *metav1.OwnerReference) { r.APIVersion = "v1" },
		"controller false":         func(r *metav1.OwnerReference) { r.Controller = ptr.To(false) },
		"controller unset":         func(r *metav1.OwnerReference) { r.Controller = nil },
		"blockOwnerDeletion unset": func(r *metav1.OwnerReference) { r.BlockOwnerDeletion = nil },
		"name into kind":           func(r *metav1.OwnerReference) { r.Kind, r.Name = "Leaderboardm", "ain" },
	} {
		if ownersKey(ref(mod)) == base {
			t.Errorf("another %s gives the same key %q", name, base)
		}
	}
	if ownersKey(nil) != "" {
		t.Errorf("no references have a key")
	}
}

// mapData is the identity of a map's storage.
func mapData(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }

func TestTransformSharesRowValues(t *testing.T) {
	transform := CacheTransform()
	mk := func(name, uid, author string) *hubv1alpha1.LeaderboardRow {
		row := decodedRow(name, uid)
		delete(row.Labels, hubv1alpha1.LabelID) // the id lives in status.id now
		row.Annotations = map[string]string{hubv1alpha1.AnnotationCreatedBy: string([]byte(author))}
		row.Status.ID = string([]byte("u-" + uid))
		return row
	}
	a, b, c := mk("a", "1", "alice"), mk("b", "2", "alice"), mk("c", "3", "bob")
	var want []*hubv1alpha1.LeaderboardRow
	for _, row := range []*hubv1alpha1.LeaderboardRow{a, b, c} {
		w := row.DeepCopy()
		w.ManagedFields = nil
		want = append(want, w)
		if _, err := transform(row); err != nil {
			t.Fatal(err)
		}
	}
	for i, row := range []*hubv1alpha1.LeaderboardRow{a, b, c} {
		if diff := cmp.Diff(want[i], row); diff != "" {
			t.Errorf("the transform changed row %s (-want +got):\n%s", row.Name, diff)
		}
	}
	if mapData(a.Labels) != mapData(b.Labels) || mapData(a.Labels) != mapData(c.Labels) {
		t.Errorf("equal labels are not one map")
	}
	if mapData(a.Annotations) != mapData(b.Annotations) {
		t.Errorf("equal annotations are not one map")
	}
	if mapData(a.Annotations) == mapData(c.Annotations) {
		t.Errorf("different annotations share a map")
	}
	if &a.OwnerReferences[0] != &b.OwnerReferences[0] {
		t.Errorf("equal owner references are not one slice")
	}
	if unsafe.StringData(a.Status.ID) != unsafe.StringData(string(a.UID)) {
		t.Errorf("status.id is not the UID's string")
	}

	// Nil and empty maps stay what they were.
	empty := mk("d", "4", "")
	empty.Labels, empty.Annotations = map[string]string{}, nil
	if _, err := transform(empty); err != nil {
		t.Fatal(err)
	}
	if empty.Labels == nil || len(empty.Labels) != 0 || empty.Annotations != nil {
		t.Errorf("labels %#v, annotations %#v: want empty and nil", empty.Labels, empty.Annotations)
	}
}

func TestShareTableBound(t *testing.T) {
	var tab shareTable[int]
	for i := range maxShared + 10 {
		if got := tab.share(strconv.Itoa(i), i); got != i {
			t.Fatalf("share(%d) = %d", i, got)
		}
		if len(tab.m) > maxShared {
			t.Fatalf("the table holds %d values, over %d", len(tab.m), maxShared)
		}
	}
	if got := tab.share(strconv.Itoa(maxShared+9), -1); got != maxShared+9 {
		t.Errorf("a stored key gave %d, want the stored value %d", got, maxShared+9)
	}
	long := strings.Repeat("x", maxSharedKey+1)
	tab.share(long, 1)
	if got := tab.share(long, 2); got != 2 {
		t.Errorf("a key over %d bytes was stored", maxSharedKey)
	}
	if got := tab.share("", 3); got != 3 || tab.share("", 4) != 4 {
		t.Errorf("the empty key was stored")
	}
}

func TestCompactSharesAnnotations(t *testing.T) {
	transform := CacheTransform()
	c := func(s string) string { return string([]byte(s)) }
	long := strings.Repeat("x", maxInternedValue+1)
	a, b := decodedRow("a", "1"), decodedRow("b", "2")
	a.Annotations = map[string]string{c(hubv1alpha1.AnnotationCreatedBy): c("alice"), c(hubv1alpha1.AnnotationUpdatedBy): c("alice"), c("big"): c(long)}
	b.Annotations = map[string]string{c(hubv1alpha1.AnnotationCreatedBy): c("bob"), c(hubv1alpha1.AnnotationUpdatedBy): c("alice"), c("big"): c(long)}
	_, _ = transform(a)
	_, _ = transform(b)
	if mapData(a.Annotations) == mapData(b.Annotations) {
		t.Fatal("different annotations share a map")
	}
	key := func(m map[string]string, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		t.Fatalf("annotation %q missing", want)
		return ""
	}
	if unsafe.StringData(key(a.Annotations, hubv1alpha1.AnnotationCreatedBy)) != unsafe.StringData(key(b.Annotations, hubv1alpha1.AnnotationCreatedBy)) {
		t.Errorf("annotation keys are not shared between rows")
	}
	if unsafe.StringData(a.Annotations[hubv1alpha1.AnnotationCreatedBy]) != unsafe.StringData(b.Annotations[hubv1alpha1.AnnotationUpdatedBy]) {
		t.Errorf("equal short annotation values are not shared")
	}
	if unsafe.StringData(a.Annotations["big"]) == unsafe.StringData(b.Annotations["big"]) {
		t.Errorf("a value over %d bytes was interned", maxInternedValue)
	}
	if a.Annotations[hubv1alpha1.AnnotationCreatedBy] != "alice" || b.Annotations[hubv1alpha1.AnnotationCreatedBy] != "bob" || a.Annotations["big"] != long {
		t.Errorf("annotations changed: %v, %v", a.Annotations, b.Annotations)
	}
}
