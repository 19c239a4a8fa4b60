package controllers_test

import (
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/controllers"
)

// A record's id and creation time (docs/operations.md, "Backup and restore") are recorded once by the
// operator and kept by admission: a member cannot give a row or a board another
// record's id, time or author, and a restore identity (here the suite's admin, who
// holds every verb, restore among them) re-creates them as they were.
var _ = Describe("Record identity", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace("identity")
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
		Expect(k8sClient.Create(ctx, board(ns, "board", "ds"))).To(Succeed())
	})

	recorded := func(r *hubv1alpha1.LeaderboardRow) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
			g.Expect(hubv1alpha1.IdentityRecorded(r)).To(BeTrue())
			g.Expect(r.Status.ID).To(Equal(hubv1alpha1.ID(r)))
		}).Should(Succeed())
	}

	// ledgered waits until a ledger of the namespace holds the row's identity as it is
	// (its UID and creationTimestamp) and returns the row as it is then.
	ledgered := func(r *hubv1alpha1.LeaderboardRow) *hubv1alpha1.LeaderboardRow {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
			ledgers := &hubv1alpha1.RowIdentityLedgerList{}
			g.Expect(k8sClient.List(ctx, ledgers, client.InNamespace(r.Namespace))).To(Succeed())
			e, held := hubv1alpha1.LedgerIdentity(ledgers.Items, r.Name)
			g.Expect(held).To(BeTrue(), "a ledger names %s", r.Name)
			g.Expect(e.ID).To(Equal(string(r.UID)))
			g.Expect(e.CreatedAt.UTC()).To(Equal(r.CreationTimestamp.UTC()))
			g.Expect(r.Status.ID).To(Equal(string(r.UID)))
		}).Should(Succeed())
		return r
	}

	// This suite runs no row webhook: a row created without one (the operator down)
	// is recorded in a ledger, many rows to a write, never with a write of its own.
	It("records a row created without the row webhook in a ledger, not with a write of the row", func() {
		alice, _ := userClient(ns, "alice", "podium-org-owner")
		r := row(ns, "mine", "board", map[string]any{"reward": 1})
		Expect(alice.Create(ctx, r)).To(Succeed())
		Expect(r.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationID), "a create that sends no id is left alone")
		ledgered(r)
		Expect(r.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationID), "the row itself is not written")
		Expect(r.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationCreatedAt))
		Expect(hubv1alpha1.ID(r)).To(Equal(string(r.UID)))

		change(alice, r, func(r *hubv1alpha1.LeaderboardRow) {
			r.Annotations[hubv1alpha1.AnnotationID] = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
			r.Annotations[hubv1alpha1.AnnotationCreatedAt] = "2020-01-01T00:00:00Z"
		})
		recorded(r)
		Expect(hubv1alpha1.ID(r)).To(Equal(string(r.UID)), "a member's id is refused: the row keeps its own")
		Expect(r.Annotations[hubv1alpha1.AnnotationCreatedAt]).To(Equal(r.CreationTimestamp.UTC().Format(time.RFC3339)))
	})

	It("gives a row re-created under a ledgered name the ledger's id and time (a restore without status)", func() {
		old := &hubv1alpha1.RowIdentityLedger{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restored-ledger"},
			Rows:       map[string]hubv1alpha1.RowIdentity{"back": {ID: "6ba7b810-9dad-11d1-80b4-00c04fd430d1", CreatedAt: metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))}},
		}
		Expect(k8sClient.Create(ctx, old)).To(Succeed()) // the restore identity (the suite's admin)
		back := row(ns, "back", "board", map[string]any{"reward": 5})
		Expect(k8sClient.Create(ctx, back)).To(Succeed())
		recorded(back)
		Expect(hubv1alpha1.ID(back)).To(Equal("6ba7b810-9dad-11d1-80b4-00c04fd430d1"))
		Expect(hubv1alpha1.CreatedAt(back).UTC()).To(Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)))
	})

	It("gives the oldest identity to a row whose ledger is restored after the row", func() {
		late := row(ns, "late", "board", map[string]any{"reward": 6})
		Expect(k8sClient.Create(ctx, late)).To(Succeed())
		ledgered(late) // recorded anew: the operator saw the row before its ledger came back
		Expect(k8sClient.Create(ctx, &hubv1alpha1.RowIdentityLedger{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restored-late"},
			Rows:       map[string]hubv1alpha1.RowIdentity{"late": {ID: "6ba7b810-9dad-11d1-80b4-00c04fd430d2", CreatedAt: metav1.NewTime(time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC))}},
		})).To(Succeed())
		recorded(late)
		Expect(hubv1alpha1.ID(late)).To(Equal("6ba7b810-9dad-11d1-80b4-00c04fd430d2"))
		Expect(hubv1alpha1.CreatedAt(late).UTC()).To(Equal(time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)))
	})

	It("lets no member write a ledger, even one a namespace admin allowed to", func() {
		alice, aliceName := userClient(ns, "ledger-alice", "podium-org-owner")
		forged := func() *hubv1alpha1.RowIdentityLedger {
			return &hubv1alpha1.RowIdentityLedger{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "forged-"},
				Rows: map[string]hubv1alpha1.RowIdentity{"x": {ID: "6ba7b810-9dad-11d1-80b4-00c04fd430d3", CreatedAt: metav1.NewTime(time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC))}}}
		}
		err := alice.Create(ctx, forged())
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the org roles grant no verb on ledgers: %v", err)

		Expect(k8sClient.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger-writer"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"hub.podium.dev"}, Resources: []string{"rowidentityledgers"}, Verbs: []string{"get", "list", "create", "update"}}}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger-writer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "ledger-writer"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "ledger-alice"}}})).To(Succeed())
		Eventually(func(g Gomega) {
			err := alice.Create(ctx, forged())
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring("podium-row-ledger-writer"), "refused by the policy, not by RBAC: %s", aliceName)
		}).Should(Succeed())
	})

	It("gives a member's row that claims another row's id, time and author a new id, with an event", func() {
		victim := row(ns, "victim", "board", map[string]any{"reward": 2})
		Expect(k8sClient.Create(ctx, victim)).To(Succeed())
		ledgered(victim)

		alice, aliceName := userClient(ns, "alice", "podium-org-owner")
		forged := row(ns, "forged", "board", map[string]any{"reward": 3})
		forged.Annotations = map[string]string{
			hubv1alpha1.AnnotationID:        hubv1alpha1.ID(victim),
			hubv1alpha1.AnnotationCreatedAt: "2020-01-01T00:00:00Z",
			hubv1alpha1.AnnotationCreatedBy: "bob",
			hubv1alpha1.AnnotationUpdatedBy: "bob",
		}
		Expect(alice.Create(ctx, forged)).To(Succeed())
		Expect(forged.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationID, ""), "admission refused the id")
		Expect(forged.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedAt, ""))
		Expect(forged.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedBy, aliceName))
		Expect(forged.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationUpdatedBy, aliceName))
		recorded(forged)
		Expect(hubv1alpha1.ID(forged)).To(Equal(string(forged.UID)))

		byID := &hubv1alpha1.LeaderboardRowList{}
		Expect(k8sClient.List(ctx, byID, client.InNamespace(ns), client.MatchingFields{"status.id": hubv1alpha1.ID(victim)})).To(Succeed())
		Expect(byID.Items).To(ConsistOf(HaveField("Name", "victim")), "the victim's id still finds only the victim")
		Eventually(func(g Gomega) {
			evs := &eventsv1.EventList{}
			g.Expect(k8sClient.List(ctx, evs, client.InNamespace(ns))).To(Succeed())
			var reasons []string
			for _, e := range evs.Items {
				if e.Regarding.Name == "forged" {
					reasons = append(reasons, e.Reason)
				}
			}
			g.Expect(reasons).To(ContainElement(controllers.ReasonIDReissued))
		}).Should(Succeed())
	})

	It("lets a restore identity re-create a row with its id, time and authors", func() {
		orig := row(ns, "orig", "board", map[string]any{"reward": 4})
		Expect(k8sClient.Create(ctx, orig)).To(Succeed())
		ledgered(orig)
		id := hubv1alpha1.ID(orig)
		Expect(k8sClient.Delete(ctx, orig)).To(Succeed())

		again := row(ns, "moved", "board", map[string]any{"reward": 4})
		again.Annotations = map[string]string{
			hubv1alpha1.AnnotationID:        id,
			hubv1alpha1.AnnotationCreatedAt: "2020-01-01T00:00:00Z",
			hubv1alpha1.AnnotationCreatedBy: "bob",
			hubv1alpha1.AnnotationUpdatedBy: "carol",
		}
		Expect(k8sClient.Create(ctx, again)).To(Succeed())
		recorded(again)
		Expect(hubv1alpha1.ID(again)).To(Equal(id))
		Expect(again.UID).NotTo(BeEquivalentTo(id))
		Expect(hubv1alpha1.CreatedAt(again).UTC()).To(Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)))
		Expect(again.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedBy, "bob"))
		Expect(again.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationUpdatedBy, "carol"))
		Expect(again.Status.UpdatedAt.UTC()).To(Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)), "generation 1 takes the recorded creation time")
	})

	It("refuses a member's board id and keeps a restored one", func() {
		alice, _ := userClient(ns, "alice", "podium-org-owner")
		lb := board(ns, "mine", "ds")
		lb.Annotations = map[string]string{hubv1alpha1.AnnotationID: "6ba7b810-9dad-11d1-80b4-00c04fd430c8"}
		Expect(alice.Create(ctx, lb)).To(Succeed())
		Expect(lb.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationID, ""))
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
			g.Expect(hubv1alpha1.ID(lb)).To(Equal(string(lb.UID)))
			g.Expect(lb.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelID, string(lb.UID)))
		}).Should(Succeed())

		restored := board(ns, "restored", "ds")
		restored.Annotations = map[string]string{hubv1alpha1.AnnotationID: "6ba7b810-9dad-11d1-80b4-00c04fd430c9"}
		Expect(k8sClient.Create(ctx, restored)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(restored), restored)).To(Succeed())
			g.Expect(hubv1alpha1.ID(restored)).To(Equal("6ba7b810-9dad-11d1-80b4-00c04fd430c9"))
			g.Expect(restored.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelID, "6ba7b810-9dad-11d1-80b4-00c04fd430c9"))
			g.Expect(hubv1alpha1.IdentityRecorded(restored)).To(BeTrue())
		}).Should(Succeed())
	})
})
