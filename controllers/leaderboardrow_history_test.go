package controllers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

// userClient returns a client acting as a new ServiceAccount of ns bound to clusterRole
// (one of config/rbac/org_roles.yaml, which the suite applies), and its user name.
func userClient(ns, name, clusterRole string) (client.Client, string) {
	GinkgoHelper()
	token := ginkgoenv.ServiceAccountToken(ctx, suite.Clientset, ns, name, clusterRole)
	cl, err := testenv.ClientAs(cfg, token)
	Expect(err).NotTo(HaveOccurred())
	// The RoleBinding reaches the RBAC authorizer a moment after it is created.
	Eventually(func() error {
		return cl.List(ctx, &hubv1alpha1.LeaderboardRowList{}, client.InNamespace(ns))
	}).Should(Succeed())
	return cl, "system:serviceaccount:" + ns + ":" + name
}

// change updates a row as c, retrying on conflicts with the controller's writes.
func change(c client.Client, r *hubv1alpha1.LeaderboardRow, edit func(*hubv1alpha1.LeaderboardRow)) {
	GinkgoHelper()
	Eventually(func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(r), r); err != nil {
			return err
		}
		edit(r)
		return c.Update(ctx, r)
	}).Should(Succeed())
}

// observed waits until the row's status describes its generation and returns the row.
func observed(r *hubv1alpha1.LeaderboardRow) *hubv1alpha1.LeaderboardRow {
	GinkgoHelper()
	got := &hubv1alpha1.LeaderboardRow{}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), got)).To(Succeed())
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(got.Status.ObservedValues).NotTo(BeEmpty())
	}).Should(Succeed())
	return got
}

func str(s string) *string { return &s }

var _ = Describe("Who last changed a row", func() {
	It("is the user of the create or of the last update of the values, recorded at admission, never forged", func() {
		ns := newNamespace("updated-by")
		alice, aliceName := userClient(ns, "alice", "podium-org-owner")
		bob, bobName := userClient(ns, "bob", "podium-org-owner")
		gitops, gitopsName := userClient(ns, "gitops-controller", "podium-org-owner")
		lb := board(ns, "b", "ds")
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())

		r := row(ns, "r1", "b", map[string]any{"reward": 0.5})
		r.Annotations = map[string]string{hubv1alpha1.AnnotationUpdatedBy: "mallory"}
		Expect(alice.Create(ctx, r)).To(Succeed())
		Expect(r.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationUpdatedBy, aliceName), "a forged author is replaced")

		By("the operator's metadata patch (the board's owner reference) does not make it the author")
		Eventually(func(g Gomega) {
			got := observed(r)
			g.Expect(metav1.GetControllerOf(got)).NotTo(BeNil())
			g.Expect(got.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationUpdatedBy, aliceName))
		}).Should(Succeed())

		By("another user's metadata-only writes cannot set, change or remove it")
		change(bob, r, func(r *hubv1alpha1.LeaderboardRow) {
			r.Labels["team"] = "red"
			r.Annotations[hubv1alpha1.AnnotationUpdatedBy] = bobName
		})
		Expect(r.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationUpdatedBy, aliceName))
		change(bob, r, func(r *hubv1alpha1.LeaderboardRow) { delete(r.Annotations, hubv1alpha1.AnnotationUpdatedBy) })
		Expect(r.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationUpdatedBy, aliceName))

		By("a change of the values makes its user the author, whatever the request says")
		change(bob, r, func(r *hubv1alpha1.LeaderboardRow) {
			r.Spec.Metrics = raw(map[string]any{"reward": 0.6})
			r.Annotations[hubv1alpha1.AnnotationUpdatedBy] = aliceName
		})
		Expect(r.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationUpdatedBy, bobName))
		Expect(r.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedBy, aliceName), "the creator stays")

		By("a GitOps controller applying the row is named as itself")
		apply := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": hubv1alpha1.GroupVersion.String(), "kind": "LeaderboardRow",
			"metadata": map[string]any{"namespace": ns, "name": "r1"},
			"spec":     map[string]any{"leaderboard": "b", "metadata": map[string]any{"agent": "r1"}, "metrics": map[string]any{"reward": 0.7}},
		}}
		Expect(gitops.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner("gitops"), client.ForceOwnership)).To(Succeed())
		got := &hubv1alpha1.LeaderboardRow{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), got)).To(Succeed())
		Expect(got.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationUpdatedBy, gitopsName))
	})
})

var _ = Describe("A row's change history", func() {
	It("records who changed which values from what to what, in the row's own status write", func() {
		ns := newNamespace("history")
		alice, aliceName := userClient(ns, "alice", "podium-org-owner")
		bob, bobName := userClient(ns, "bob", "podium-org-owner")
		member, _ := userClient(ns, "carol", "podium-org-member")
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
		Expect(k8sClient.Create(ctx, board(ns, "b", "ds"))).To(Succeed())

		r := row(ns, "r1", "b", map[string]any{"reward": 0.5})
		Expect(alice.Create(ctx, r)).To(Succeed())
		got := observed(r)
		Expect(got.Status.History).To(BeEmpty(), "a creation is not a change")
		Expect(got.Status.ObservedValues).To(ContainElement(hubv1alpha1.ObservedValue{Field: "metrics.reward", Value: "0.5"}))

		By("a change of metrics and status by another user")
		change(bob, r, func(r *hubv1alpha1.LeaderboardRow) {
			r.Spec.Metrics = raw(map[string]any{"reward": 0.7, "cost": 2})
			r.Spec.Visibility = hubv1alpha1.RowHide
		})
		got = observed(r)
		Expect(got.Status.History).To(HaveLen(1))
		e := got.Status.History[0]
		Expect(e.By).To(Equal(bobName))
		Expect(e.Generation).To(Equal(got.Generation))
		Expect(e.At).To(Equal(*got.Status.UpdatedAt), "the change's time is the row's updatedAt")
		Expect(e.Fields).To(Equal([]hubv1alpha1.FieldChange{
			{Field: "metrics.cost", New: str("2")},
			{Field: "metrics.reward", Old: str("0.5"), New: str("0.7")},
			{Field: "status", Old: str(`"display"`), New: str(`"hide"`)},
		}))

		By("trial links are values too; metadata-only writes are not changes")
		change(alice, r, func(r *hubv1alpha1.LeaderboardRow) {
			r.Spec.TrialIDs = []string{"aaaaaaaa-0000-4000-8000-000000000000"}
		})
		got = observed(r)
		Expect(got.Status.History).To(HaveLen(2))
		Expect(got.Status.History[1].By).To(Equal(aliceName))
		Expect(got.Status.History[1].Fields).To(Equal([]hubv1alpha1.FieldChange{
			{Field: "trial_ids", New: str(`["aaaaaaaa-0000-4000-8000-000000000000"]`)},
		}))
		change(bob, r, func(r *hubv1alpha1.LeaderboardRow) { r.Labels["team"] = "red" })
		Consistently(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), got)).To(Succeed())
			g.Expect(got.Status.History).To(HaveLen(2))
		}).WithTimeout(time.Second).Should(Succeed())

		By("members and owners cannot write the history: status is the operator's")
		forged := got.DeepCopy()
		forged.Status.History = nil
		Expect(apierrors.IsForbidden(member.Status().Update(ctx, forged))).To(BeTrue(), "a member's status write")
		Expect(apierrors.IsForbidden(alice.Status().Update(ctx, forged))).To(BeTrue(), "an owner's status write")
		change(alice, r, func(r *hubv1alpha1.LeaderboardRow) {
			r.Status.History = nil
			r.Status.ObservedValues = nil
			r.Spec.Metadata = raw(map[string]any{"agent": "renamed"})
		})
		got = observed(r)
		Expect(got.Status.History).To(HaveLen(3), "status sent with the object is ignored")
		Expect(got.Status.History[2].Fields).To(Equal([]hubv1alpha1.FieldChange{
			{Field: "metadata.agent", Old: str(`"r1"`), New: str(`"renamed"`)},
		}))

		By("at most 10 changes are kept, the oldest go first")
		for i := range 9 {
			change(bob, r, func(r *hubv1alpha1.LeaderboardRow) { r.Spec.Metrics = raw(map[string]any{"reward": i}) })
			observed(r)
		}
		got = observed(r)
		Expect(got.Status.History).To(HaveLen(rowhistory.MaxEntries))
		Expect(got.Status.History[0].Fields[0].Field).To(Equal("metadata.agent"), "the first two changes were dropped")
		Expect(got.Status.History[9].Generation).To(Equal(got.Generation))

		By("a row deleted and created again starts a new history")
		Expect(k8sClient.Delete(ctx, got)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), got)) }).Should(BeTrue())
		again := row(ns, "r1", "b", map[string]any{"reward": 0.5})
		Expect(alice.Create(ctx, again)).To(Succeed())
		Expect(observed(again).Status.History).To(BeEmpty())
	})
})
