package controllers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// A row costs the apiserver its create and one status write (docs/performance.md, "Rows
// in"): its id and creation time need no write of their own. A row created with its
// board's controller reference (as `podium hub leaderboard row create` creates it) is
// served by its UID and creationTimestamp until its next write, which records them at
// admission (config/admission/row_metadata.yaml), whoever makes it; a row the operator
// patches anyway (no owner reference) gets them in that patch.
var _ = Describe("Row writes", func() {
	var (
		ns string
		lb *hubv1alpha1.Leaderboard
	)
	BeforeEach(func() {
		ns = newNamespace("rowwrites")
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
		lb = board(ns, "board", "ds")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
	})

	// owned is a row that carries its board's controller reference, as the CLI sends it.
	owned := func(name string, reward int) *hubv1alpha1.LeaderboardRow {
		r := row(ns, name, "board", map[string]any{"reward": reward})
		t := true
		r.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "Leaderboard",
			Name: lb.Name, UID: lb.UID, Controller: &t,
		}}
		return r
	}
	valid := func(r *hubv1alpha1.LeaderboardRow) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
			g.Expect(r.Status.ObservedGeneration).To(Equal(r.Generation))
			c := meta.FindStatusCondition(r.Status.Conditions, hubv1alpha1.ConditionValid)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	}

	It("writes a row created with its board's owner reference once: its status", func() {
		alice, _ := userClient(ns, "alice", "podium-org-owner")
		// A field manager of its own: the operator's writes show under another one.
		alice = client.WithFieldOwner(alice, "podium-cli")
		r := owned("cli", 1)
		Expect(alice.Create(ctx, r)).To(Succeed())
		valid(r)
		Expect(r.Status.ID).To(Equal(string(r.UID)), "served by its UID")
		Expect(hubv1alpha1.ID(r)).To(Equal(string(r.UID)))
		Expect(hubv1alpha1.CreatedAt(r).UTC()).To(Equal(r.CreationTimestamp.UTC()))
		var writers []string
		for _, e := range r.ManagedFields {
			if e.Subresource == "" {
				writers = append(writers, e.Manager+" "+string(e.Operation))
			}
		}
		Expect(writers).To(ConsistOf("podium-cli Update"), "only the create wrote the row itself")
		Expect(r.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationID), "nothing patched the row")
	})

	It("records the UID and creation time at the row's next write, and a member cannot set others there", func() {
		alice, _ := userClient(ns, "alice", "podium-org-owner")
		r := owned("later", 2)
		Expect(alice.Create(ctx, r)).To(Succeed())
		valid(r)
		uid, created := string(r.UID), r.CreationTimestamp.UTC().Format(time.RFC3339)
		change(alice, r, func(r *hubv1alpha1.LeaderboardRow) {
			r.Spec.Metrics = raw(map[string]any{"reward": 3})
			if r.Annotations == nil {
				r.Annotations = map[string]string{}
			}
			r.Annotations[hubv1alpha1.AnnotationID] = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
			r.Annotations[hubv1alpha1.AnnotationCreatedAt] = "2020-01-01T00:00:00Z"
		})
		Expect(r.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationID, uid), "the update recorded the UID, not the sent id")
		Expect(r.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedAt, created))
		Expect(hubv1alpha1.IdentityRecorded(r)).To(BeTrue())

		// A metadata-only write (a label) records them too.
		other := owned("labelled", 4)
		Expect(alice.Create(ctx, other)).To(Succeed())
		valid(other)
		change(alice, other, func(r *hubv1alpha1.LeaderboardRow) {
			if r.Labels == nil {
				r.Labels = map[string]string{}
			}
			r.Labels["team"] = "a"
		})
		Expect(other.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationID, string(other.UID)))
		Expect(other.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedAt, other.CreationTimestamp.UTC().Format(time.RFC3339)))
		valid(other)
		Expect(other.Status.ID).To(Equal(string(other.UID)))
	})
})
