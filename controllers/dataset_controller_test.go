package controllers_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

var _ = Describe("The Dataset controller", func() {
	It("reports the package slug, the newest version and Ready", func() {
		ns := newNamespace("ds")
		ds := dataset(ns, "swe-bench")
		Expect(k8sClient.Create(ctx, ds)).To(Succeed())
		Eventually(func(g Gomega) {
			c := ready(g, ds)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(ds.Status.Package).To(Equal(ns + "/swe-bench"))
			g.Expect(ds.Status.LatestVersionID).To(Equal(v3ID))
		}).Should(Succeed())

		By("following a newer version")
		patched := ds.DeepCopy()
		patched.Spec.Versions = append(patched.Spec.Versions, hubv1alpha1.DatasetVersion{ID: v4ID, Tag: "3.0", CreatedAt: at(30)})
		Expect(k8sClient.Patch(ctx, patched, client.MergeFrom(ds))).To(Succeed())
		Eventually(func(g Gomega) {
			ready(g, ds)
			g.Expect(ds.Status.LatestVersionID).To(Equal(v4ID))
		}).Should(Succeed())
	})
})
