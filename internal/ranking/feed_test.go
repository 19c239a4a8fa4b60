package ranking_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/testenv"
)

func newBoard(ns, name string, rules ...hubv1alpha1.RankRule) *hubv1alpha1.Leaderboard {
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: ns + "/bench",
			Name:    name,
			Title:   "Board " + name,
			RankBy:  rules,
		},
	}
	Expect(k8sClient.Create(ctx, lb)).To(Succeed())
	return lb
}

// newRow creates a row of board with these metrics and, when valid, sets its Valid
// condition for its generation as the row controller would.
func newRow(ns, board, name, metrics string, valid bool) *hubv1alpha1.LeaderboardRow {
	row := &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: hubv1alpha1.LeaderboardRowSpec{
			Leaderboard: board,
			Metrics:     &apiextensionsv1.JSON{Raw: []byte(metrics)},
		},
	}
	Expect(k8sClient.Create(ctx, row)).To(Succeed())
	setValid(row, valid)
	return row
}

// setValid writes the row's Valid condition for its current generation through the
// status subresource.
func setValid(row *hubv1alpha1.LeaderboardRow, valid bool) {
	status := metav1.ConditionTrue
	if !valid {
		status = metav1.ConditionFalse
	}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(row), row)).To(Succeed())
		meta.SetStatusCondition(&row.Status.Conditions, metav1.Condition{
			Type:               hubv1alpha1.ConditionValid,
			Status:             status,
			Reason:             hubv1alpha1.ReasonValuesValid,
			Message:            "set by the test",
			ObservedGeneration: row.Generation,
		})
		g.Expect(k8sClient.Status().Update(ctx, row)).To(Succeed())
	}).Should(Succeed())
}

// ranked returns the board's ranking as "rank name", or nil when the board is unknown.
func ranked(uid types.UID) func() []string {
	return func() []string {
		b := registry.Board(uid)
		if b == nil {
			return nil
		}
		out := []string{}
		for _, e := range b.Page(0, 100) {
			out = append(out, fmt.Sprintf("%d %s", e.Rank, e.Row.Name))
		}
		return out
	}
}

// tieOrder names two rows in the order of a tie: creation time, then UID (rows created
// in the same second are ordered by UID).
func tieOrder(p, q *hubv1alpha1.LeaderboardRow) (string, string) {
	if p.CreationTimestamp.Equal(&q.CreationTimestamp) && q.UID < p.UID || q.CreationTimestamp.Before(&p.CreationTimestamp) {
		return q.Name, p.Name
	}
	return p.Name, q.Name
}

var _ = Describe("The rank index fed by the manager's cache", func() {
	var ns string
	BeforeEach(func() {
		n := testenv.Namespace("ranking")
		Expect(k8sClient.Create(ctx, n)).To(Succeed())
		ns = n.Name
	})

	It("ranks the displayed, valid rows of a board and follows their changes", func() {
		lb := newBoard(ns, "main",
			hubv1alpha1.RankRule{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending},
			hubv1alpha1.RankRule{Accessor: "metrics.cost", Direction: hubv1alpha1.Ascending})
		a := newRow(ns, "main", "a", `{"reward": 0.9, "cost": 2}`, true)
		b := newRow(ns, "main", "b", `{"reward": 0.9, "cost": 1}`, true)
		c := newRow(ns, "main", "c", `{"reward": 0.5}`, true)
		newRow(ns, "main", "d", `{"cost": 1}`, true)
		newRow(ns, "main", "invalid", `{"reward": 5}`, false)
		hidden := newRow(ns, "main", "hidden", `{"reward": 7}`, true)
		hidden.Spec.Visibility = hubv1alpha1.RowHide
		Expect(k8sClient.Update(ctx, hidden)).To(Succeed())
		setValid(hidden, true)
		newRow(ns, "other", "elsewhere", `{"reward": 9}`, true)

		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 b", "2 a", "3 c", "4 d"}))
		Expect(registry.Board(lb.UID).Len()).To(Equal(4))

		By("a change leaves the ranking until it is validated, then moves the row")
		version := registry.Board(lb.UID).Version()
		a.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(`{"reward": 1, "cost": 3}`)}
		Expect(k8sClient.Update(ctx, a)).To(Succeed())
		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 b", "2 c", "3 d"}))
		setValid(a, true)
		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 a", "2 b", "3 c", "4 d"}))
		Expect(registry.Board(lb.UID).Version()).NotTo(Equal(version))

		By("a row that equals another shares its rank")
		c.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(`{"reward": 0.9, "cost": 1}`)}
		Expect(k8sClient.Update(ctx, c)).To(Succeed())
		setValid(c, true)
		x, y := tieOrder(b, c)
		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 a", "2 " + x, "2 " + y, "4 d"}))

		By("hiding and deleting rows")
		b.Spec.Visibility = hubv1alpha1.RowHide
		Expect(k8sClient.Update(ctx, b)).To(Succeed())
		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 a", "2 c", "3 d"}))
		Expect(k8sClient.Delete(ctx, c)).To(Succeed())
		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 a", "2 d"}))

		By("a change of rules re-sorts the board")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
		lb.Spec.RankBy = []hubv1alpha1.RankRule{{Accessor: "metrics.cost", Direction: hubv1alpha1.Ascending, Nulls: hubv1alpha1.NullsFirst}}
		Expect(k8sClient.Update(ctx, lb)).To(Succeed())
		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 d", "2 a"}))
	})

	It("indexes rows that came before their board, and drops the index with the board", func() {
		newRow(ns, "late", "first", `{"reward": 1}`, true)
		newRow(ns, "late", "second", `{"reward": 2}`, true)
		lb := newBoard(ns, "late", hubv1alpha1.RankRule{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending})
		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 second", "2 first"}))

		Expect(k8sClient.Delete(ctx, lb)).To(Succeed())
		Eventually(func() *ranking.Board { return registry.Board(lb.UID) }).Should(BeNil())
	})

	It("ranks in creation order without rules", func() {
		lb := newBoard(ns, "plain")
		one := newRow(ns, "plain", "one", `{"reward": 1}`, true)
		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 one"}))
		two := newRow(ns, "plain", "two", `{"reward": 9}`, true)
		x, y := tieOrder(one, two)
		Eventually(ranked(lb.UID)).Should(Equal([]string{"1 " + x, "2 " + y}))
	})
})
