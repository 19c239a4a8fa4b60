package authn_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

var (
	cfg       *rest.Config
	clientset *kubernetes.Clientset
	ctx       context.Context
	// reviews counts TokenReviews and SubjectAccessReviews sent through countedCfg.
	tokenReviews, accessReviews atomic.Int64
	countedCfg                  *rest.Config
)

func TestAuthn(t *testing.T) { ginkgoenv.RunSpecs(t, "Authn Suite") }

var _ = BeforeSuite(func() {
	// Rows and boards reach the read through the controllers and informers: on a busy
	// 2-core machine that may take more than Gomega's default second.
	ginkgoenv.SetEventuallyDefaults(30*time.Second, 100*time.Millisecond)
	suite := ginkgoenv.StartSuite(testenv.SuiteOptions{})
	ctx, cfg, clientset = suite.Ctx, suite.Config, suite.Clientset

	countedCfg = rest.CopyConfig(cfg)
	countedCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			switch {
			case strings.HasSuffix(r.URL.Path, "/tokenreviews"):
				tokenReviews.Add(1)
			case strings.HasSuffix(r.URL.Path, "/subjectaccessreviews"):
				accessReviews.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
})

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
