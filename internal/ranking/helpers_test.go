package ranking

import (
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

const testNamespace = "org"

// epoch is the creation time of the first test row; row i is created i seconds later.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testRow is a displayed row, valid for its generation, named name, created at
// epoch+created seconds, with metrics and metadata given as JSON ("" for none).
func testRow(name string, created int, metrics, metadata string) *hubv1alpha1.LeaderboardRow {
	row := &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         testNamespace,
			UID:               types.UID("uid-" + name),
			Generation:        1,
			ResourceVersion:   "1",
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(created) * time.Second)),
		},
		Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "board", Visibility: hubv1alpha1.RowDisplay},
	}
	if metrics != "" {
		row.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(metrics)}
	}
	if metadata != "" {
		row.Spec.Metadata = &apiextensionsv1.JSON{Raw: []byte(metadata)}
	}
	setValid(row, true)
	return row
}

// setValid sets the row's Valid condition for its current generation.
func setValid(row *hubv1alpha1.LeaderboardRow, valid bool) {
	status := metav1.ConditionTrue
	if !valid {
		status = metav1.ConditionFalse
	}
	row.Status.Conditions = []metav1.Condition{{
		Type:               hubv1alpha1.ConditionValid,
		Status:             status,
		Reason:             hubv1alpha1.ReasonValuesValid,
		ObservedGeneration: row.Generation,
	}}
}

// changed returns a copy of row as the informer would hand it after an update of its
// metrics (a new object, a new generation, Valid again for it).
func changed(row *hubv1alpha1.LeaderboardRow, metrics string) *hubv1alpha1.LeaderboardRow {
	c := row.DeepCopy()
	c.Generation++
	c.ResourceVersion = fmt.Sprint(c.Generation)
	c.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(metrics)}
	setValid(c, true)
	return c
}

func testBoard(rules ...hubv1alpha1.RankRule) *hubv1alpha1.Leaderboard {
	return &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Name: "board", Namespace: testNamespace, UID: "uid-board", ResourceVersion: "1"},
		Spec:       hubv1alpha1.LeaderboardSpec{Name: "board", Title: "Board", RankBy: rules},
	}
}

func rule(accessor string, dir hubv1alpha1.Direction, nulls hubv1alpha1.NullsPlacement) hubv1alpha1.RankRule {
	return hubv1alpha1.RankRule{Accessor: accessor, Direction: dir, Nulls: nulls}
}

// ranks renders entries as "rank name", which reads well in a diff.
func ranks(entries []Entry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, fmt.Sprintf("%d %s", e.Rank, e.Row.Name))
	}
	return out
}
