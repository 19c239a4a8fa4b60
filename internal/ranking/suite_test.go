package ranking_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

var (
	k8sClient client.Client
	registry  *ranking.Registry
	ctx       context.Context
)

// TestFeed runs the rank index against the real apiserver, fed by a controller-runtime
// cache as the manager's. No controller runs: the tests set each row's Valid condition
// themselves, as the row controller would.
func TestFeed(t *testing.T) { ginkgoenv.RunSpecs(t, "Ranking Suite") }

var _ = BeforeSuite(func() {
	// The machine is shared: waits are bounded generously, they assert no speed.
	ginkgoenv.SetEventuallyDefaults(60*time.Second, 50*time.Millisecond)

	suite := ginkgoenv.StartSuite(testenv.SuiteOptions{})
	ctx, k8sClient = suite.Ctx, suite.Client
	c, err := cache.New(suite.Config, cache.Options{Scheme: scheme.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
	Expect(err).NotTo(HaveOccurred())
	registry = ranking.NewRegistry()
	Expect(registry.HasSynced()).To(BeFalse(), "HasSynced before Feed")
	Expect(registry.Feed(ctx, c)).To(Succeed())
	go func() {
		defer GinkgoRecover()
		Expect(c.Start(ctx)).To(Succeed())
	}()
	Eventually(registry.HasSynced).Should(BeTrue())
})
