package controllers_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// A row's board becomes its controller in the row's create, at admission
// (config/admission/row_owner.yaml; docs/leaderboards.md, "Ownership, labels, and what
// controllers write"): checked with server-side dry-run creates, which admission answers
// and no controller ever sees, so what comes back is admission's work alone. The
// apiserver's parameter cache learns of a new board a moment after its create, hence
// Eventually.
var _ = Describe("A row's controller reference, at admission", func() {
	var ns string
	var lb *hubv1alpha1.Leaderboard
	BeforeEach(func() {
		ns = newNamespace("row-owner")
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
		Expect(k8sClient.Create(ctx, board(ns, "other", "ds"))).To(Succeed())
		lb = board(ns, "board", "ds")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
	})

	// dryRun creates r as c without storing it and returns what admission made of it.
	dryRun := func(g Gomega, c client.Client, r *hubv1alpha1.LeaderboardRow) *hubv1alpha1.LeaderboardRow {
		r = r.DeepCopy()
		g.Expect(c.Create(ctx, r, client.DryRunAll)).To(Succeed())
		return r
	}
	boardRef := func(lb *hubv1alpha1.Leaderboard) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "Leaderboard",
			Name: lb.Name, UID: lb.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	}

	It("makes the row's board its controller, for an org owner and for an admin, whatever other boards the namespace holds", func() {
		alice, _ := userClient(ns, "alice", "podium-org-owner")
		for _, c := range []client.Client{alice, k8sClient} {
			Eventually(func(g Gomega) {
				got := dryRun(g, c, row(ns, "r", "board", map[string]any{"reward": 1}))
				g.Expect(got.OwnerReferences).To(ConsistOf(boardRef(lb)))
			}).Should(Succeed())
		}
	})

	It("never points a row at another namespace's board, at a UID a client chose, or at a second controller", func() {
		alice, _ := userClient(ns, "alice", "podium-org-owner")
		// Another namespace holds a board of the name this row asks for; this one
		// does not.
		elsewhere := newNamespace("row-owner-elsewhere")
		Expect(k8sClient.Create(ctx, dataset(elsewhere, "ds"))).To(Succeed())
		foreignBoard := board(elsewhere, "only-there", "ds")
		Expect(k8sClient.Create(ctx, foreignBoard)).To(Succeed())
		// What the policy does is visible once the apiserver's cache holds this
		// namespace's board.
		Eventually(func(g Gomega) {
			g.Expect(dryRun(g, alice, row(ns, "r", "board", map[string]any{"reward": 1})).OwnerReferences).To(ConsistOf(boardRef(lb)))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(dryRun(g, k8sClient, row(elsewhere, "r", "only-there", map[string]any{"reward": 1})).OwnerReferences).To(ConsistOf(boardRef(foreignBoard)))
		}).Should(Succeed())

		By("a row naming a board only another namespace holds gets no reference")
		Expect(dryRun(Default, alice, row(ns, "r", "only-there", map[string]any{"reward": 1})).OwnerReferences).To(BeEmpty())

		By("a row that names its own controller keeps it, and gets no second one")
		foreign := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "mine",
			UID: "0f3f7a2e-0000-4000-8000-000000000001", Controller: ptr.To(true)}
		r := row(ns, "r", "board", map[string]any{"reward": 1})
		r.OwnerReferences = []metav1.OwnerReference{foreign}
		Expect(dryRun(Default, alice, r).OwnerReferences).To(ConsistOf(foreign))

		By("a reference a client sends with the board's UID is left to the row controller, never doubled")
		forged := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "forged", UID: lb.UID}
		r = row(ns, "r", "board", map[string]any{"reward": 1})
		r.OwnerReferences = []metav1.OwnerReference{forged}
		Expect(dryRun(Default, alice, r).OwnerReferences).To(ConsistOf(forged))

		By("a row with another, non-controller reference gets the board's beside it")
		other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "0f3f7a2e-0000-4000-8000-000000000002"}
		r = row(ns, "r", "board", map[string]any{"reward": 1})
		r.OwnerReferences = []metav1.OwnerReference{other}
		Expect(dryRun(Default, alice, r).OwnerReferences).To(ConsistOf(other, boardRef(lb)))

		By("a row naming a board that does not exist gets no reference")
		Expect(dryRun(Default, alice, row(ns, "r", "missing", map[string]any{"reward": 1})).OwnerReferences).To(BeEmpty())
	})

	It("adds nothing for a board being deleted", func() {
		gone := board(ns, "going", "ds")
		gone.Finalizers = []string{"test.podium.dev/hold"}
		Expect(k8sClient.Create(ctx, gone)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(dryRun(g, k8sClient, row(ns, "r", "going", map[string]any{"reward": 1})).OwnerReferences).To(ConsistOf(boardRef(gone)))
		}).Should(Succeed())
		Expect(k8sClient.Delete(ctx, gone)).To(Succeed())
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(gone), gone))).To(Succeed())
			gone.Finalizers = nil
			Expect(client.IgnoreNotFound(k8sClient.Update(ctx, gone))).To(Succeed())
		})
		Eventually(func(g Gomega) {
			g.Expect(dryRun(g, k8sClient, row(ns, "r", "going", map[string]any{"reward": 1})).OwnerReferences).To(BeEmpty())
		}).Should(Succeed())
	})
})
