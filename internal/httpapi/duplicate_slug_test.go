package httpapi_test

import (
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

var _ = Describe("two boards claiming one slug", func() {
	// The controller keeps one of two same-slug boards Ready and marks the other
	// DuplicateName; the read must serve exactly the one it keeps. The pair is
	// recreated until both share a creation second and their UIDs order them the other
	// way round from their object names, so that a read ordering ties by UID (as it
	// once did) would serve the DuplicateName board.
	It("serves the board the controller keeps Ready, even when both were created in the same second", func() {
		ns := newOrg()
		Expect(k8sClient.Create(ctx, &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ds"}})).To(Succeed())
		var first, second *hubv1alpha1.Leaderboard
		for attempt := 0; ; attempt++ {
			Expect(attempt).To(BeNumerically("<", 50), "no same-second pair with UIDs ordered against names")
			first = boardNamed(ns, fmt.Sprintf("a-%d", attempt))
			second = boardNamed(ns, fmt.Sprintf("b-%d", attempt))
			if first.CreationTimestamp.Equal(&second.CreationTimestamp) && second.UID < first.UID {
				break
			}
			Expect(k8sClient.Delete(ctx, first)).To(Succeed())
			Expect(k8sClient.Delete(ctx, second)).To(Succeed())
		}

		var ready, duplicate types.UID
		eventually(func(g Gomega) {
			ready, duplicate = "", ""
			for _, lb := range []*hubv1alpha1.Leaderboard{first, second} {
				var got hubv1alpha1.Leaderboard
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), &got)).To(Succeed())
				c := meta.FindStatusCondition(got.Status.Conditions, hubv1alpha1.ConditionReady)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
				if c.Reason == hubv1alpha1.ReasonDuplicateName {
					duplicate = got.UID
				} else {
					ready = got.UID
				}
			}
			g.Expect(ready).NotTo(BeEmpty())
			g.Expect(duplicate).NotTo(BeEmpty())
		})
		// The controller's rule: same creation second, so the object name decides.
		Expect(ready).To(Equal(first.UID))

		eventually(func(g Gomega) {
			r := read(slugRead(first, 1, 1), "")
			g.Expect(r.status).To(Equal(http.StatusOK), string(r.body))
			g.Expect(r.read().Leaderboard["id"]).To(Equal(string(ready)))
		})
		// And keeps serving it (not a race won once).
		Consistently(func(g Gomega) {
			g.Expect(read(slugRead(first, 1, 1), "").read().Leaderboard["id"]).To(Equal(string(ready)))
		}).WithTimeout(time.Second).Should(Succeed())
	})
})

// boardNamed creates a public board "main" of dataset "ds" in ns under object name name.
func boardNamed(ns, name string) *hubv1alpha1.Leaderboard {
	GinkgoHelper()
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package:    ns + "/ds",
			Name:       "main",
			Title:      "Main board",
			Visibility: hubv1alpha1.VisibilityPublic,
			Columns: []hubv1alpha1.Column{{
				ID: "score", Header: "Score", Accessor: "metrics.score", Type: hubv1alpha1.ColumnNumber,
			}},
			RankBy: []hubv1alpha1.RankRule{{Accessor: "metrics.score", Direction: hubv1alpha1.Descending}},
		},
	}
	Expect(k8sClient.Create(ctx, lb)).To(Succeed())
	return lb
}
