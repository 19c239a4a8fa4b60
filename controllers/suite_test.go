package controllers_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"podium.dev/podium/controllers"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

var (
	suite     *testenv.Suite
	cfg       *rest.Config
	k8sClient client.Client
	testEnv   *envtest.Environment
	ctx       context.Context
	// rankings is the rank index the suite's manager feeds.
	rankings *ranking.Registry
	// managerDone closes when the manager has stopped.
	managerDone chan struct{}
)

func TestControllers(t *testing.T) { ginkgoenv.RunSpecs(t, "Controllers Suite") }

var _ = BeforeSuite(func() {
	// kube-controller-manager runs the garbage collector and the namespace controller,
	// as in a real cluster.
	suite = ginkgoenv.StartSuite(testenv.SuiteOptions{ControllerManager: true, Output: GinkgoWriter})
	ctx, testEnv, cfg, k8sClient = suite.Ctx, suite.Env, suite.Config, suite.Client

	// The machine is shared: allow the controllers time, never a fixed sleep.
	ginkgoenv.SetEventuallyDefaults(30*time.Second, 50*time.Millisecond)

	mgr, err := newManager(cfg, time.Millisecond*100)
	Expect(err).NotTo(HaveOccurred())
	managerDone = make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(managerDone)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	Eventually(rankings.HasSynced).Should(BeTrue())
})

var _ = AfterSuite(func() {
	suite.Cancel()
	if managerDone != nil {
		<-managerDone
	}
})

// newManager builds a manager with the leaderboard controllers and the rank index, as
// internal/operator's setupLeaderboards does, without the HTTP parts. countDelay is
// short so that tests see row counts soon.
func newManager(cfg *rest.Config, countDelay time.Duration) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultTransform: operator.CacheTransform()},
	})
	if err != nil {
		return nil, err
	}
	if err := index.Register(ctx, mgr); err != nil {
		return nil, err
	}
	rankings = ranking.NewRegistry()
	if err := rankings.Feed(ctx, mgr.GetCache()); err != nil {
		return nil, err
	}
	if err := (&controllers.DatasetReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&controllers.LeaderboardReconciler{Client: mgr.GetClient(), CountDelay: countDelay}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	return mgr, (&controllers.LeaderboardRowReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Events: mgr.GetEventRecorder("podium-leaderboardrow")}).SetupWithManager(mgr)
}
