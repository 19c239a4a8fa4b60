package controllers_test

import (
	"time"

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

	It("records a new row's UID and creation time once, and a member cannot change them", func() {
		alice, _ := userClient(ns, "alice", "podium-org-owner")
		r := row(ns, "mine", "board", map[string]any{"reward": 1})
		Expect(alice.Create(ctx, r)).To(Succeed())
		Expect(r.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationID), "a create that sends no id is left alone")
		recorded(r)
		Expect(hubv1alpha1.ID(r)).To(Equal(string(r.UID)))
		Expect(r.Annotations[hubv1alpha1.AnnotationCreatedAt]).To(Equal(r.CreationTimestamp.UTC().Format(time.RFC3339)))

		change(alice, r, func(r *hubv1alpha1.LeaderboardRow) {
			r.Annotations[hubv1alpha1.AnnotationID] = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
			r.Annotations[hubv1alpha1.AnnotationCreatedAt] = "2020-01-01T00:00:00Z"
		})
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
		Expect(hubv1alpha1.ID(r)).To(Equal(string(r.UID)), "the recorded id is put back")
		Expect(r.Annotations[hubv1alpha1.AnnotationCreatedAt]).To(Equal(r.CreationTimestamp.UTC().Format(time.RFC3339)))
	})

	It("gives a member's row that claims another row's id, time and author a new id, with an event", func() {
		victim := row(ns, "victim", "board", map[string]any{"reward": 2})
		Expect(k8sClient.Create(ctx, victim)).To(Succeed())
		recorded(victim)

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
		recorded(orig)
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
