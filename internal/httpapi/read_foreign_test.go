package httpapi_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

var _ = Describe("A board naming another org's dataset", func() {
	It("is never served under that dataset: answered like a missing board", func() {
		victim, evil := newOrg(), newOrg()
		ds := &hubv1alpha1.Dataset{
			ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "ds"},
			Spec: hubv1alpha1.DatasetSpec{Versions: []hubv1alpha1.DatasetVersion{
				{ID: "0b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51", Tag: "1.0", CreatedAt: metav1.Now()},
			}},
		}
		Expect(k8sClient.Create(ctx, ds)).To(Succeed())

		foreign := func(name, pkg, pkgID string) *hubv1alpha1.Leaderboard {
			lb := &hubv1alpha1.Leaderboard{
				ObjectMeta: metav1.ObjectMeta{Namespace: evil, Name: name},
				Spec: hubv1alpha1.LeaderboardSpec{
					Package: pkg, PackageID: pkgID, Name: name, Title: "Foreign", Visibility: hubv1alpha1.VisibilityPublic,
				},
			}
			Expect(k8sClient.Create(ctx, lb)).To(Succeed())
			return lb
		}
		byID := foreign("by-id", "", string(ds.UID))
		byName := foreign("by-name", victim+"/ds", "")
		// The controller's verdict is in the cache: PackageInOtherOrg.
		for _, lb := range []*hubv1alpha1.Leaderboard{byID, byName} {
			eventually(func(g Gomega) {
				got := &hubv1alpha1.Leaderboard{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), got)).To(Succeed())
				c := meta.FindStatusCondition(got.Status.Conditions, hubv1alpha1.ConditionReady)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(hubv1alpha1.ReasonPackageWrongOrg))
			})
		}
		// Also the control: the evil org's own main board is served.
		waitServed(newBoard(evil, hubv1alpha1.VisibilityPublic))

		missing := read(map[string]any{"leaderboard_id": "1c9a1e7f-4d8b-4e6a-8d2f-3a5b9c8d7e62"}, "")
		Expect(missing.status).To(Equal(http.StatusNotFound))
		for _, lb := range []*hubv1alpha1.Leaderboard{byID, byName} {
			r := read(map[string]any{"leaderboard_id": string(lb.UID)}, "")
			Expect(r.status).To(Equal(http.StatusNotFound), string(r.body))
			Expect(r.apiError().Code).To(Equal("not_found"))
			Expect(string(r.body)).NotTo(ContainSubstring(string(ds.UID)))
		}
		r := read(map[string]any{"package": victim + "/ds", "name": "by-name"}, "")
		Expect(r.status).To(Equal(http.StatusNotFound), string(r.body))
	})
})
