// Package ginkgoenv is the Ginkgo side of internal/testenv: what the Ginkgo suites
// that run Podium against a real control plane all do around it (start it from a
// BeforeSuite and stop it after the last spec, send their logs to GinkgoWriter, wait
// for RBAC, call the HTTP API and fail the spec on an error). It is a package of its
// own so that the hack/ programs that import testenv do not link Ginkgo, whose init
// registers its command-line flags.
package ginkgoenv

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"podium.dev/podium/internal/testenv"
)

// RunSpecs runs the package's Ginkgo suite from its go test function, Gomega's failures
// failing the running spec.
func RunSpecs(t *testing.T, description string) bool {
	gomega.RegisterFailHandler(ginkgo.Fail)
	return ginkgo.RunSpecs(t, description)
}

// SetEventuallyDefaults sets how long Eventually waits and how often it polls when a
// spec does not say: the suite's bound on what the shared machine may take, never a
// fixed sleep.
func SetEventuallyDefaults(timeout, polling time.Duration) {
	gomega.SetDefaultEventuallyTimeout(timeout)
	gomega.SetDefaultEventuallyPollingInterval(polling)
}

// SetLogger sends controller-runtime's log (in development mode: V(1) lines too) to
// GinkgoWriter, which shows it for a failed spec.
func SetLogger() {
	logf.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true)))
}

// StartSuite starts a testenv.Suite from a BeforeSuite, with SetLogger's log: a
// failure to start fails the suite, and the suite is stopped after the last spec and
// AfterSuite (a DeferCleanup), whether it started or not.
func StartSuite(o testenv.SuiteOptions) *testenv.Suite {
	ginkgo.GinkgoHelper()
	SetLogger()
	s, err := testenv.StartSuite(context.Background(), o)
	ginkgo.DeferCleanup(func() { gomega.Expect(s.Stop()).To(gomega.Succeed()) })
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return s
}

// AwaitOperatorStopped, from an AfterSuite, ends the suite's context and expects its
// operator to stop within 30 s and its manager to return no error; StartSuite's
// clean-up then stops the rest.
func AwaitOperatorStopped(s *testenv.Suite) {
	ginkgo.GinkgoHelper()
	s.Cancel()
	if s.Operator != nil {
		gomega.Eventually(s.Operator.Done).WithTimeout(30 * time.Second).Should(gomega.BeClosed())
		gomega.Expect(s.Operator.Err()).To(gomega.Succeed())
	}
}

// CreateNamespace creates a namespace with a name generated from prefix
// (testenv.Namespace): an org, in most tests.
func CreateNamespace(ctx context.Context, c client.Client, prefix string) *corev1.Namespace {
	ginkgo.GinkgoHelper()
	ns := testenv.Namespace(prefix)
	gomega.Expect(c.Create(ctx, ns)).To(gomega.Succeed())
	return ns
}

// ServiceAccountToken is testenv.ServiceAccountToken (the ServiceAccount ns/name, bound
// to clusterRole in ns unless it is ""), failing the spec on an error.
func ServiceAccountToken(ctx context.Context, cs kubernetes.Interface, ns, name, clusterRole string) string {
	ginkgo.GinkgoHelper()
	token, err := testenv.ServiceAccountToken(ctx, cs, ns, name, clusterRole)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return token
}

// Resource is a resource of an API group ("" for the core group).
type Resource struct{ Group, Resource string }

// AwaitAllowed waits (Eventually's default timeout) until the user cs acts as, called
// who in the failure message, may verb every one of resources in ns: a new RoleBinding
// reaches the apiserver's RBAC authorizer a moment after it is created, and a first
// request sent before would be refused.
func AwaitAllowed(ctx context.Context, cs kubernetes.Interface, who, ns, verb string, resources ...Resource) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func(g gomega.Gomega) {
		for _, r := range resources {
			ok, err := testenv.Allowed(ctx, cs, ns, verb, r.Group, r.Resource)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(ok).To(gomega.BeTrue(), "%s may not %s %s yet", who, verb, r.Resource)
		}
	}).Should(gomega.Succeed())
}

// Call is testenv.CallAPI, failing the spec if the request could not be sent or its
// answer read.
func Call(ctx context.Context, hc *http.Client, method, url, token string, body any) (int, []byte) {
	ginkgo.GinkgoHelper()
	code, out, err := testenv.CallAPI(ctx, hc, method, url, token, body)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return code, out
}
