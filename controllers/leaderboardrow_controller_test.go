package controllers_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// validity waits until the row's Valid condition has status and reason, and returns
// the row fresh.
func validity(r *hubv1alpha1.LeaderboardRow, status metav1.ConditionStatus, reason string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		c := valid(g, r)
		g.Expect(c.Status).To(Equal(status), c.Message)
		g.Expect(c.Reason).To(Equal(reason), c.Message)
	}).Should(Succeed())
}

var _ = Describe("The LeaderboardRow controller", func() {
	var ns string
	var lb *hubv1alpha1.Leaderboard
	BeforeEach(func() {
		ns = newNamespace("row")
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
		lb = board(ns, "board", "ds")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		readyBoard(lb)
	})

	It("finds rows by board and by id with field selectors, and labels them at admission whatever the client sent", func() {
		forged := row(ns, "forged", "board", map[string]any{"reward": 1, "cost": 1})
		forged.Labels = map[string]string{hubv1alpha1.LabelLeaderboard: "another-board", "team": "red"}
		Expect(k8sClient.Create(ctx, forged)).To(Succeed())
		Expect(forged.Labels).To(Equal(map[string]string{hubv1alpha1.LabelLeaderboard: "board", "team": "red"}), "the create's answer already holds the label: no controller write")
		long := strings.Repeat("b", 70)
		orphan := row(ns, "long", long, map[string]any{"reward": 1})
		orphan.Labels = map[string]string{hubv1alpha1.LabelLeaderboard: "board"}
		Expect(k8sClient.Create(ctx, orphan)).To(Succeed())
		Expect(orphan.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelLeaderboard, ""), "a board name no label value can hold: a label the client sent is emptied")

		validity(forged, metav1.ConditionTrue, hubv1alpha1.ReasonValuesValid)
		Expect(forged.Status.ID).To(Equal(string(forged.UID)))
		validity(orphan, metav1.ConditionFalse, hubv1alpha1.ReasonLeaderboardNotFound)
		Expect(orphan.Status.ID).To(Equal(string(orphan.UID)))

		byID := &hubv1alpha1.LeaderboardRowList{}
		Expect(k8sClient.List(ctx, byID, client.InNamespace(ns), client.MatchingFields{"status.id": string(forged.UID)})).To(Succeed())
		Expect(byID.Items).To(ConsistOf(HaveField("Name", "forged")))
		byBoard := &hubv1alpha1.LeaderboardRowList{}
		Expect(k8sClient.List(ctx, byBoard, client.InNamespace(ns), client.MatchingFields{"spec.leaderboard": long})).To(Succeed())
		Expect(byBoard.Items).To(ConsistOf(HaveField("Name", "long")))
		Expect(k8sClient.List(ctx, byBoard, client.InNamespace(ns), client.MatchingFields{"spec.leaderboard": "board"})).To(Succeed())
		Expect(byBoard.Items).To(ConsistOf(HaveField("Name", "forged")))
		Expect(k8sClient.List(ctx, byBoard, client.InNamespace(ns), client.MatchingLabels{hubv1alpha1.LabelLeaderboard: "another-board"})).To(Succeed())
		Expect(byBoard.Items).To(BeEmpty())
		Expect(k8sClient.List(ctx, byBoard, client.InNamespace(ns), client.MatchingLabels{hubv1alpha1.LabelLeaderboard: "board"})).To(Succeed())
		Expect(byBoard.Items).To(ConsistOf(HaveField("Name", "forged")), "the long board's row, sent with the label board=board, is not selected by it")

		By("an update cannot move the label away from spec.leaderboard either")
		moved := forged.DeepCopy()
		moved.Labels[hubv1alpha1.LabelLeaderboard] = "another-board"
		Expect(k8sClient.Patch(ctx, moved, client.MergeFrom(forged))).To(Succeed())
		Expect(moved.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelLeaderboard, "board"))
	})

	It("labels a row, owns it through its board, and validates it without writing spec", func() {
		good := row(ns, "good", "board", map[string]any{"reward": 0.9, "cost": 3})
		bad := row(ns, "bad", "board", map[string]any{"reward": "high", "cost": "cheap"})
		bad.Spec.Metadata = raw(map[string]any{"agent": 7})
		Expect(k8sClient.Create(ctx, good)).To(Succeed())
		Expect(k8sClient.Create(ctx, bad)).To(Succeed())

		validity(good, metav1.ConditionTrue, hubv1alpha1.ReasonValuesValid)
		Expect(good.Status.SchemaGeneration).To(Equal(lb.Generation))
		Expect(good.Status.InvalidFields).To(BeEmpty())

		validity(bad, metav1.ConditionFalse, hubv1alpha1.ReasonValuesInvalid)
		Expect(bad.Status.InvalidFields).To(Equal([]hubv1alpha1.FieldError{
			{Field: "metadata.agent", Message: "must be a string"},
			{Field: "metrics.cost", Message: "must be a number"},
			{Field: "metrics.reward", Message: "must be a number"},
		}))
		Expect(valid(Default, bad).Message).To(ContainSubstring("metrics.reward: must be a number"))

		for _, r := range []*hubv1alpha1.LeaderboardRow{good, bad} {
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
				g.Expect(r.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelLeaderboard, "board"))
				g.Expect(r.Labels).NotTo(HaveKey(hubv1alpha1.LabelID), "a row's id is status.id: no label write")
				g.Expect(r.Status.ID).To(Equal(string(r.UID)))
				owner := metav1.GetControllerOf(r)
				g.Expect(owner).NotTo(BeNil())
				g.Expect(owner.UID).To(Equal(lb.UID))
				g.Expect(owner.Kind).To(Equal("Leaderboard"))
				g.Expect(owner.BlockOwnerDeletion).To(Equal(ptr.To(true)))
			}).Should(Succeed())
			Expect(r.Generation).To(Equal(int64(1)), "spec was never written")
		}

		By("counting the rows on the board and ranking only the valid one")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
			g.Expect(lb.Status.Rows).To(Equal(int32(2)))
			g.Expect(lb.Status.RankedRows).To(Equal(int32(1)))
			b := rankings.Board(lb.UID)
			g.Expect(b).NotTo(BeNil())
			g.Expect(b.Len()).To(Equal(1))
		}).Should(Succeed())

		By("hiding the valid row, which leaves the ranking")
		hidden := good.DeepCopy()
		hidden.Spec.Visibility = hubv1alpha1.RowHide
		Expect(k8sClient.Patch(ctx, hidden, client.MergeFrom(good))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
			g.Expect(lb.Status.Rows).To(Equal(int32(2)))
			g.Expect(lb.Status.RankedRows).To(Equal(int32(0)))
		}).Should(Succeed())
	})

	It("re-validates every row when the board's schemas change", func() {
		numeric := row(ns, "numeric", "board", map[string]any{"reward": 0.5})
		textual := row(ns, "textual", "board", map[string]any{"reward": "0.5"})
		Expect(k8sClient.Create(ctx, numeric)).To(Succeed())
		Expect(k8sClient.Create(ctx, textual)).To(Succeed())
		validity(numeric, metav1.ConditionTrue, hubv1alpha1.ReasonValuesValid)
		validity(textual, metav1.ConditionFalse, hubv1alpha1.ReasonValuesInvalid)

		changed := lb.DeepCopy()
		changed.Spec.MetricsSchema = raw(map[string]any{"type": "object", "required": []string{"reward"}, "properties": map[string]any{
			"reward": map[string]any{"type": "string"}, "cost": map[string]any{"type": "number"}}})
		Expect(k8sClient.Patch(ctx, changed, client.MergeFrom(lb))).To(Succeed())
		Expect(changed.Generation).To(Equal(lb.Generation + 1))

		validity(numeric, metav1.ConditionFalse, hubv1alpha1.ReasonValuesInvalid)
		Expect(numeric.Status.InvalidFields).To(Equal([]hubv1alpha1.FieldError{{Field: "metrics.reward", Message: "must be a string"}}))
		Expect(numeric.Status.SchemaGeneration).To(Equal(changed.Generation))
		validity(textual, metav1.ConditionTrue, hubv1alpha1.ReasonValuesValid)
		Expect(textual.Status.SchemaGeneration).To(Equal(changed.Generation))
	})

	It("re-validates a row whose values change", func() {
		r := row(ns, "fixable", "board", map[string]any{"reward": "n/a"})
		Expect(k8sClient.Create(ctx, r)).To(Succeed())
		validity(r, metav1.ConditionFalse, hubv1alpha1.ReasonValuesInvalid)
		fixed := r.DeepCopy()
		fixed.Spec.Metrics = raw(map[string]any{"reward": 0.1})
		Expect(k8sClient.Patch(ctx, fixed, client.MergeFrom(r))).To(Succeed())
		validity(r, metav1.ConditionTrue, hubv1alpha1.ReasonValuesValid)
		Expect(r.Generation).To(Equal(int64(2)))
	})

	It("records in status.updatedAt when the row's values change, by any client, and only then", func() {
		r := row(ns, "edited", "board", map[string]any{"reward": 0.5})
		Expect(k8sClient.Create(ctx, r)).To(Succeed())
		validity(r, metav1.ConditionTrue, hubv1alpha1.ReasonValuesValid)
		created := r.CreationTimestamp.Time
		Expect(r.Status.UpdatedAt).NotTo(BeNil())
		Expect(r.Status.UpdatedAt.Time).To(BeTemporally("==", created), "generation 1 was last changed when created")
		unchanged := func() {
			GinkgoHelper()
			Expect(r.Generation).To(Equal(int64(1)))
			Expect(r.Status.UpdatedAt.Time).To(BeTemporally("==", created))
		}
		// From here on, a time the controller took from its clock is in a later second.
		time.Sleep(time.Until(created.Add(time.Second)))

		By("changing labels only: admission puts the board label back and updatedAt stays")
		labelled := r.DeepCopy()
		labelled.Labels["team"] = "blue"
		delete(labelled.Labels, hubv1alpha1.LabelLeaderboard)
		Expect(k8sClient.Patch(ctx, labelled, client.MergeFrom(r))).To(Succeed())
		Expect(labelled.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelLeaderboard, r.Spec.Leaderboard), "set in the patch's own answer")
		Expect(labelled.Labels).To(HaveKeyWithValue("team", "blue"))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
		unchanged()

		By("writing status only: the controller restores its own and leaves updatedAt")
		wrong := r.DeepCopy()
		wrong.Status.SchemaGeneration = 99
		Expect(k8sClient.Status().Patch(ctx, wrong, client.MergeFrom(r))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
			g.Expect(r.Status.SchemaGeneration).To(Equal(lb.Generation))
		}).Should(Succeed())
		unchanged()

		By("replacing the spec with a plain Update, as kubectl or a GitOps tool would")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
			r.Spec.Metrics = raw(map[string]any{"reward": 0.7})
			g.Expect(k8sClient.Update(ctx, r)).To(Succeed())
		}).Should(Succeed())
		Expect(r.Generation).To(Equal(int64(2)))
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
			g.Expect(r.Status.ObservedGeneration).To(Equal(int64(2)))
		}).Should(Succeed())
		// In the status write that observed generation 2, not in one of its own.
		Expect(r.Status.UpdatedAt.Time).To(BeTemporally(">", created))
		Expect(r.Status.UpdatedAt.Time).To(BeTemporally("<=", time.Now()))
	})

	It("keeps a row whose board does not exist waiting, and validates it when the board appears", func() {
		early := row(ns, "early", "not-yet", map[string]any{"reward": 1})
		Expect(k8sClient.Create(ctx, early)).To(Succeed())
		validity(early, metav1.ConditionFalse, hubv1alpha1.ReasonLeaderboardNotFound)
		Expect(valid(Default, early).Message).To(ContainSubstring(`"not-yet"`))
		Expect(metav1.GetControllerOf(early)).To(BeNil())

		later := board(ns, "not-yet", "ds")
		Expect(k8sClient.Create(ctx, later)).To(Succeed())
		validity(early, metav1.ConditionTrue, hubv1alpha1.ReasonValuesValid)
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(early), early)).To(Succeed())
			g.Expect(metav1.GetControllerOf(early)).NotTo(BeNil())
			g.Expect(metav1.GetControllerOf(early).UID).To(Equal(later.UID))
		}).Should(Succeed())
	})

	It("goes with its board: owner references let the garbage collector delete the rows", func() {
		var rows []*hubv1alpha1.LeaderboardRow
		for _, name := range []string{"r1", "r2", "r3"} {
			r := row(ns, name, "board", map[string]any{"reward": 1})
			Expect(k8sClient.Create(ctx, r)).To(Succeed())
			rows = append(rows, r)
		}
		for _, r := range rows {
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
				g.Expect(metav1.GetControllerOf(r)).NotTo(BeNil())
			}).Should(Succeed())
		}
		Expect(k8sClient.Delete(ctx, lb)).To(Succeed())

		// The suite runs kube-controller-manager's garbage collector, as a cluster does.
		for _, r := range rows {
			Eventually(func() bool {
				return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), &hubv1alpha1.LeaderboardRow{}))
			}).WithTimeout(60 * time.Second).Should(BeTrue())
		}
		Eventually(func() bool { return rankings.Board(lb.UID) == nil }).Should(BeTrue())
	})

	It("reports a board with a broken schema on its rows, without blocking another board's rows", func() {
		broken := board(ns, "broken", "ds")
		broken.Spec.MetadataSchema = raw(map[string]any{"type": "array"})
		Expect(k8sClient.Create(ctx, broken)).To(Succeed())
		stuck := row(ns, "stuck", "broken", map[string]any{"reward": 1})
		fine := row(ns, "fine", "board", map[string]any{"reward": 1})
		Expect(k8sClient.Create(ctx, stuck)).To(Succeed())
		Expect(k8sClient.Create(ctx, fine)).To(Succeed())
		validity(stuck, metav1.ConditionFalse, hubv1alpha1.ReasonLeaderboardNotReady)
		Expect(valid(Default, stuck).Message).To(ContainSubstring(`metadataSchema.type: must be "object"`))
		validity(fine, metav1.ConditionTrue, hubv1alpha1.ReasonValuesValid)
		notReady(broken, hubv1alpha1.ReasonInvalidSchema, "metadataSchema.type")
	})
})
