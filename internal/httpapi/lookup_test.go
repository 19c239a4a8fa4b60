package httpapi_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/scheme"
)

// The read looks boards up in the Leaderboard informer's indexer under the index names
// and keys controller-runtime's cache uses internally ("field:<field>",
// "<namespace>/<value>", "__all_namespaces/<value>"; lookup.go). Were an upgrade of
// controller-runtime to change them, the read would quietly fall back to List; this
// fails loudly instead, against a real cache.
var _ = Describe("the read's indexer lookup", func() {
	It("finds boards under the index names and keys of controller-runtime's cache", func() {
		c, err := cache.New(cfg, cache.Options{Scheme: scheme.Scheme})
		Expect(err).NotTo(HaveOccurred())
		Expect(c.IndexField(ctx, &hubv1alpha1.Leaderboard{}, index.UID, func(o client.Object) []string {
			return []string{string(o.GetUID())}
		})).To(Succeed())
		Expect(c.IndexField(ctx, &hubv1alpha1.Leaderboard{}, index.BoardSlug, index.BoardSlugValues)).To(Succeed())
		cctx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go func() { defer GinkgoRecover(); Expect(c.Start(cctx)).To(Succeed()) }()
		Expect(c.WaitForCacheSync(cctx)).To(BeTrue())

		inf, err := c.GetInformer(ctx, &hubv1alpha1.Leaderboard{})
		Expect(err).NotTo(HaveOccurred())
		ii, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
		Expect(ok).To(BeTrue(), "the cache's informer no longer gives its indexer")
		idx := ii.GetIndexer()

		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		Eventually(func(g Gomega) {
			got, usable, ok := httpapi.IndexerLookup(idx, lb.Spec.Package, lb.Spec.Name, "")
			g.Expect(usable).To(BeTrue(), "controller-runtime's field index names changed")
			g.Expect(ok).To(BeTrue())
			g.Expect(got).NotTo(BeNil(), "no board under the slug key")
			g.Expect(got.UID).To(Equal(lb.UID))
			got, _, ok = httpapi.IndexerLookup(idx, "", "", string(lb.UID))
			g.Expect(ok).To(BeTrue())
			g.Expect(got).NotTo(BeNil(), "no board under the all-namespaces id key")
			g.Expect(got.UID).To(Equal(lb.UID))
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})
})
