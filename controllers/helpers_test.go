package controllers_test

import (
	"encoding/json"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// Version ids of the datasets the tests create: v1 is the oldest, v3 the newest.
const (
	v1ID = "11111111-1111-4111-8111-111111111111"
	v2ID = "22222222-2222-4222-8222-222222222222"
	v3ID = "33333333-3333-4333-8333-333333333333"
	v4ID = "44444444-4444-4444-8444-444444444444"
)

// newNamespace creates a namespace of its own for one test.
func newNamespace(prefix string) string {
	ns := testenv.Namespace(prefix)
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func raw(v any) *apiextensionsv1.JSON {
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return &apiextensionsv1.JSON{Raw: b}
}

func at(days int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, days))
}

// dataset returns a Dataset with three versions tagged 1.0, 1.1 and 2.0.
func dataset(ns, name string) *hubv1alpha1.Dataset {
	return &hubv1alpha1.Dataset{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: hubv1alpha1.DatasetSpec{Versions: []hubv1alpha1.DatasetVersion{
			{ID: v2ID, Tag: "1.1", CreatedAt: at(10)},
			{ID: v1ID, Tag: "1.0", CreatedAt: at(0)},
			{ID: v3ID, Tag: "2.0", CreatedAt: at(20)},
		}},
	}
}

// board returns a valid Leaderboard of package ns/ds: a number reward, ranked by it.
func board(ns, objName, ds string) *hubv1alpha1.Leaderboard {
	return &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: objName},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: ns + "/" + ds,
			Name:    objName,
			Title:   "Board " + objName,
			MetadataSchema: raw(map[string]any{"type": "object", "properties": map[string]any{
				"agent": map[string]any{"type": "string"}}}),
			MetricsSchema: raw(map[string]any{"type": "object", "properties": map[string]any{
				"reward": map[string]any{"type": "number"},
				"cost":   map[string]any{"type": "number"}}}),
			Columns: []hubv1alpha1.Column{
				{ID: "agent", Header: "Agent", Accessor: "metadata.agent", Type: hubv1alpha1.ColumnText},
				{ID: "reward", Header: "Reward", Accessor: "metrics.reward", Type: hubv1alpha1.ColumnNumber},
			},
			RankBy: []hubv1alpha1.RankRule{{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending}},
		},
	}
}

func row(ns, name, boardName string, metrics map[string]any) *hubv1alpha1.LeaderboardRow {
	return &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: hubv1alpha1.LeaderboardRowSpec{
			Leaderboard: boardName,
			Metadata:    raw(map[string]any{"agent": name}),
			Metrics:     raw(metrics),
		},
	}
}

// ready returns a board's Ready condition once it describes the board's generation.
func ready(g Gomega, obj client.Object) *metav1.Condition {
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	var conds []metav1.Condition
	var observed int64
	switch o := obj.(type) {
	case *hubv1alpha1.Leaderboard:
		conds, observed = o.Status.Conditions, o.Status.ObservedGeneration
	case *hubv1alpha1.Dataset:
		conds, observed = o.Status.Conditions, o.Status.ObservedGeneration
	}
	g.Expect(observed).To(Equal(obj.GetGeneration()), "status describes the current generation")
	c := meta.FindStatusCondition(conds, hubv1alpha1.ConditionReady)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.ObservedGeneration).To(Equal(obj.GetGeneration()))
	return c
}

// valid returns a row's Valid condition once it describes the row's generation.
func valid(g Gomega, r *hubv1alpha1.LeaderboardRow) *metav1.Condition {
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
	c := meta.FindStatusCondition(r.Status.Conditions, hubv1alpha1.ConditionValid)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.ObservedGeneration).To(Equal(r.Generation))
	g.Expect(r.Status.ObservedGeneration).To(Equal(r.Generation))
	return c
}
