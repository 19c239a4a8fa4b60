package ranking_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

var (
	k8sClient client.Client
	testEnv   *envtest.Environment
	registry  *ranking.Registry
	ctx       context.Context
	cancel    context.CancelFunc
)

// TestFeed runs the rank index against the real apiserver, fed by a controller-runtime
// cache as the manager's. No controller runs: the tests set each row's Valid condition
// themselves, as the row controller would.
func TestFeed(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Ranking Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())
	// The machine is shared: waits are bounded generously, they assert no speed.
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)

	var cfg *rest.Config
	var err error
	testEnv, cfg, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())

	c, err := cache.New(cfg, cache.Options{Scheme: scheme.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
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

var _ = AfterSuite(func() {
	cancel()
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})
