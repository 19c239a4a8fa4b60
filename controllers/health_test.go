package controllers_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// healthIs waits until kstatus computes want for obj with a message holding every
// fragment, and the Argo CD health check of docs/gitops.md the matching health.
func healthIs(obj client.Object, want status.Status, fragments ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		res, err := testenv.Health(ctx, k8sClient, obj)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Status).To(Equal(want), res.Message)
		g.Expect(argoHealth(g, obj)).To(Equal(argoFor[want]), "Argo CD, with the check of docs/gitops.md")
		for _, f := range fragments {
			g.Expect(res.Message).To(ContainSubstring(f))
		}
	}).Should(Succeed())
}

// conditionTypes returns the condition types of a Podium object, read fresh.
func conditionTypes(g Gomega, obj client.Object) []string {
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	var conds []string
	switch o := obj.(type) {
	case *hubv1alpha1.Leaderboard:
		for _, c := range o.Status.Conditions {
			conds = append(conds, c.Type)
		}
	case *hubv1alpha1.LeaderboardRow:
		for _, c := range o.Status.Conditions {
			conds = append(conds, c.Type)
		}
	case *hubv1alpha1.Dataset:
		for _, c := range o.Status.Conditions {
			conds = append(conds, c.Type)
		}
	}
	return conds
}

var _ = Describe("Health as GitOps tools compute it (kstatus)", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace("health") })

	It("calls a row that fails its board's schema Failed, not Current, until it is fixed", func() {
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
		lb := board(ns, "board", "ds")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		readyBoard(lb)
		healthIs(lb, status.CurrentStatus)

		good := row(ns, "good", "board", map[string]any{"reward": 0.9})
		bad := row(ns, "bad", "board", map[string]any{"reward": "high"})
		Expect(k8sClient.Create(ctx, good)).To(Succeed())
		Expect(k8sClient.Create(ctx, bad)).To(Succeed())
		healthIs(good, status.CurrentStatus)
		healthIs(bad, status.FailedStatus, "metrics.reward: must be a number")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(bad), bad)).To(Succeed())
			r := meta.FindStatusCondition(bad.Status.Conditions, hubv1alpha1.ConditionReady)
			g.Expect(r).NotTo(BeNil())
			g.Expect(r.Status).To(BeEquivalentTo("False"))
			g.Expect(r.Reason).To(Equal(hubv1alpha1.ReasonValuesInvalid))
			s := meta.FindStatusCondition(bad.Status.Conditions, hubv1alpha1.ConditionStalled)
			g.Expect(s).NotTo(BeNil())
			g.Expect(s.ObservedGeneration).To(Equal(bad.Generation))
		}).Should(Succeed())
		Expect(conditionTypes(Default, good)).To(ConsistOf(hubv1alpha1.ConditionValid, hubv1alpha1.ConditionReady),
			"a healthy row carries no Stalled or Reconciling condition")

		By("fixing the row's values makes it Current again, with Stalled gone")
		Expect(testenv.Update(ctx, k8sClient, bad, func(r *hubv1alpha1.LeaderboardRow) {
			r.Spec.Metrics = raw(map[string]any{"reward": 0.1})
		})).To(Succeed())
		healthIs(bad, status.CurrentStatus)
		Expect(conditionTypes(Default, bad)).To(ConsistOf(hubv1alpha1.ConditionValid, hubv1alpha1.ConditionReady))

		By("a row whose board does not exist yet is in progress, not failed")
		early := row(ns, "early", "later-board", map[string]any{"reward": 0.5})
		Expect(k8sClient.Create(ctx, early)).To(Succeed())
		healthIs(early, status.InProgressStatus, "later-board")
		later := board(ns, "later-board", "ds")
		Expect(k8sClient.Create(ctx, later)).To(Succeed())
		healthIs(early, status.CurrentStatus)
	})

	It("calls boards their author must fix Failed and boards waiting for a dataset InProgress", func() {
		ds := dataset(ns, "ds")
		Expect(k8sClient.Create(ctx, ds)).To(Succeed())
		healthIs(ds, status.CurrentStatus)
		Expect(conditionTypes(Default, ds)).To(ConsistOf(hubv1alpha1.ConditionReady))

		first := board(ns, "first", "ds")
		first.Spec.Name = "shared"
		Expect(k8sClient.Create(ctx, first)).To(Succeed())
		readyBoard(first)
		dup := board(ns, "second", "ds")
		dup.Spec.Name = "shared"
		Expect(k8sClient.Create(ctx, dup)).To(Succeed())
		healthIs(dup, status.FailedStatus, `"shared"`)

		typo := board(ns, "typo", "ds")
		typo.Spec.Columns[1].Accessor = "metrics.rewrd"
		Expect(k8sClient.Create(ctx, typo)).To(Succeed())
		healthIs(typo, status.FailedStatus, `"metrics.rewrd"`)

		badSchema := board(ns, "bad-schema", "ds")
		badSchema.Spec.MetricsSchema = raw(map[string]any{"type": "object", "properties": map[string]any{"reward": map[string]any{"type": "float"}}})
		Expect(k8sClient.Create(ctx, badSchema)).To(Succeed())
		healthIs(badSchema, status.FailedStatus, `unknown type "float"`)

		By("a row of a board with an invalid schema cannot be validated until the board is fixed")
		orphan := row(ns, "orphan", "bad-schema", map[string]any{"reward": 0.5})
		Expect(k8sClient.Create(ctx, orphan)).To(Succeed())
		healthIs(orphan, status.FailedStatus, "invalid schema")

		other := newNamespace("health-other")
		Expect(k8sClient.Create(ctx, dataset(other, "theirs"))).To(Succeed())
		foreign := board(ns, "foreign", "ds")
		foreign.Spec.Package = other + "/theirs"
		Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
		healthIs(foreign, status.FailedStatus, "another organization")

		By("a board waiting for its dataset is in progress, and Current once it appears")
		early := board(ns, "early", "later")
		Expect(k8sClient.Create(ctx, early)).To(Succeed())
		healthIs(early, status.InProgressStatus, "later")
		Expect(conditionTypes(Default, early)).To(ConsistOf(hubv1alpha1.ConditionReady, hubv1alpha1.ConditionReconciling))
		Expect(k8sClient.Create(ctx, dataset(ns, "later"))).To(Succeed())
		healthIs(early, status.CurrentStatus)
		Expect(conditionTypes(Default, early)).To(ConsistOf(hubv1alpha1.ConditionReady))

		By("a board waiting for its dataset that also has a bad schema is stalled: waiting will not help")
		both := board(ns, "both", "missing")
		both.Spec.MetricsSchema = badSchema.Spec.MetricsSchema
		Expect(k8sClient.Create(ctx, both)).To(Succeed())
		healthIs(both, status.FailedStatus)
		Eventually(func(g Gomega) {
			g.Expect(ready(g, both).Reason).To(Equal(hubv1alpha1.ReasonInvalidSchema))
		}).Should(Succeed())
	})
})
