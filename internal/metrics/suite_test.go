package metrics_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

var (
	suite     *testenv.Suite
	ctx       context.Context
	k8sClient client.Client
	op        *testenv.Operator
	// metricsURL serves controller-runtime's registry as the manager's /metrics
	// endpoint does (promhttp over the same registry): the in-process test operator
	// binds no metrics port of its own.
	metricsURL string
)

func TestMetrics(t *testing.T) { ginkgoenv.RunSpecs(t, "Metrics Suite") }

var _ = BeforeSuite(func() {
	ginkgoenv.SetEventuallyDefaults(30*time.Second, 100*time.Millisecond)
	suite = ginkgoenv.StartSuite(testenv.SuiteOptions{
		ClusterRoles: []*rbacv1.ClusterRole{{
			ObjectMeta: metav1.ObjectMeta{Name: "test-run-submitter"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "create"}}},
		}},
		Operator: true, Delivery: true,
	})
	ctx, k8sClient, op = suite.Ctx, suite.Client, suite.Operator
	srv := httptest.NewServer(promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))
	DeferCleanup(srv.Close)
	metricsURL = srv.URL + "/metrics"
})

// scrape reads /metrics as Prometheus does (the text format) and returns its families
// by name, and the raw text.
func scrape(g Gomega) (map[string]*dto.MetricFamily, string) {
	resp, err := http.Get(metricsURL)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	g.Expect(err).NotTo(HaveOccurred())
	return fams, string(body)
}

// value sums the samples of family name whose labels include want (a histogram's
// sample count); found says whether any series matched.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (sum float64, found bool) {
	for _, m := range testenv.Series(fams[name], want) {
		found = true
		switch {
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

// metricValue is value for use in Eventually: 0 when no series matches.
func metricValue(name string, want map[string]string) func(Gomega) float64 {
	return func(g Gomega) float64 {
		fams, _ := scrape(g)
		v, _ := value(fams, name, want)
		return v
	}
}

// person is an org member (a ServiceAccount) who may also create Pods.
type person struct {
	User  string
	Token string
	CS    *kubernetes.Clientset
}

func newPerson(ns, name string) person {
	GinkgoHelper()
	token := ginkgoenv.ServiceAccountToken(ctx, suite.Clientset, ns, name, "podium-org-member")
	Expect(testenv.BindClusterRole(ctx, suite.Clientset, ns, name+"-runs", "test-run-submitter", ns, name)).To(Succeed())
	cs, err := testenv.ClientsetAs(suite.Config, token, nil)
	Expect(err).NotTo(HaveOccurred())
	return person{User: "system:serviceaccount:" + ns + ":" + name, Token: token, CS: cs}
}

// store stores a secret over the HTTP API as p.
func store(p person, fields map[string]any) {
	GinkgoHelper()
	code, body := ginkgoenv.Call(ctx, nil, http.MethodPost, op.BaseURL+"/v1/secrets", p.Token, fields)
	Expect(code).To(Equal(http.StatusCreated), string(body))
}
