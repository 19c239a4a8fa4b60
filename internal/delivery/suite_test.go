package delivery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

var (
	cfg       *rest.Config
	k8sClient client.Client
	clientset *kubernetes.Clientset
	testEnv   *envtest.Environment
	ctx       context.Context
	cancel    context.CancelFunc
	op        *testenv.Operator
	suite     *testenv.Suite
)

// orphanGrace is the test operator's wait for a run that never appears.
const orphanGrace = 3 * time.Second

func TestDelivery(t *testing.T) { ginkgoenv.RunSpecs(t, "Secret Delivery Suite") }

var _ = BeforeSuite(func() {
	ginkgoenv.SetEventuallyDefaults(30*time.Second, 50*time.Millisecond)
	// The controllers that make Pods from templates, as their own ServiceAccounts. The
	// Jobs of the tests that play the Job controller themselves name another manager.
	suite = ginkgoenv.StartSuite(testenv.SuiteOptions{
		ClusterRoles: []*rbacv1.ClusterRole{runSubmitterRole()},
		Workloads:    testenv.WorkloadControllers,
		Output:       GinkgoWriter,
		Operator:     true, Delivery: true, OrphanGrace: orphanGrace,
	})
	use(suite)
})

// use makes s the suite the tests and benchmarks act on.
func use(s *testenv.Suite) {
	ctx, cancel = s.Ctx, s.Cancel
	testEnv, cfg, k8sClient, clientset, op = s.Env, s.Config, s.Client, s.Clientset, s.Operator
}

// runSubmitterRole lets a person create and change Pods and every kind that holds a pod
// template (what an org's platform team grants; the org roles are about Podium's own
// kinds). It grants nothing on Secrets.
func runSubmitterRole() *rbacv1.ClusterRole {
	verbs := []string{"get", "list", "create", "update", "patch", "delete"}
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-run-submitter"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: verbs},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets", "statefulsets", "daemonsets"}, Verbs: verbs},
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/ephemeralcontainers", "podtemplates", "replicationcontrollers"}, Verbs: verbs},
		},
	}
}

type org struct{ Name, UID string }

func newOrg(prefix string) org { return newLabelledOrg(prefix, nil) }

// newLabelledOrg is newOrg with labels on the org's namespace.
func newLabelledOrg(prefix string, labels map[string]string) org {
	ns := testenv.Namespace(prefix)
	ns.Labels = labels
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return org{Name: ns.Name, UID: string(ns.UID)}
}

// person is a ServiceAccount of an org (an org member who may also submit runs), with
// a clientset acting as it that records the warnings it is sent.
type person struct {
	User     string
	Token    string
	CS       *kubernetes.Clientset
	warnings *warningLog
}

type warningLog struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningLog) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

// take returns the warnings received since the last take.
func (w *warningLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

func newPerson(o org, name string) person {
	GinkgoHelper()
	token := ginkgoenv.ServiceAccountToken(ctx, clientset, o.Name, name, "podium-org-member")
	bindRuns(o.Name, o.Name, name)
	cs, w := clientAs(token)
	// Wait until the person may submit runs, or a first create can get a 403.
	ginkgoenv.AwaitAllowed(ctx, cs, name, o.Name, "create", ginkgoenv.Resource{Group: "batch", Resource: "jobs"}, ginkgoenv.Resource{Resource: "pods"})
	return person{User: "system:serviceaccount:" + o.Name + ":" + name, Token: token, CS: cs, warnings: w}
}

// bindRuns lets the ServiceAccount saNS/sa submit runs in ns.
func bindRuns(ns, saNS, sa string) {
	ExpectWithOffset(1, testenv.BindClusterRole(ctx, clientset, ns, saNS+"-"+sa+"-runs", "test-run-submitter", saNS, sa)).To(Succeed())
}

// clientAs is a clientset acting with token that records the warnings it receives.
func clientAs(token string) (*kubernetes.Clientset, *warningLog) {
	w := &warningLog{}
	cs, err := testenv.ClientsetAs(cfg, token, w)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return cs, w
}

// call sends a request to the operator's HTTP API as p.
func call(p person, method, path string, body any) (int, []byte) {
	GinkgoHelper()
	return ginkgoenv.Call(ctx, nil, method, op.BaseURL+path, p.Token, body)
}

type record struct {
	ID         string  `json:"id"`
	Scope      string  `json:"scope"`
	EnvVar     string  `json:"env_var"`
	LastUsedAt *string `json:"last_used_at"`
}

// store stores a secret over HTTP as p and returns its record.
func store(p person, fields map[string]any) record {
	code, body := call(p, http.MethodPost, "/v1/secrets", fields)
	ExpectWithOffset(1, code).To(Equal(http.StatusCreated), string(body))
	var r record
	ExpectWithOffset(1, json.Unmarshal(body, &r)).To(Succeed())
	return r
}

// listed returns p's records by id, as GET /v1/secrets shows them.
func listed(p person) map[string]record {
	code, body := call(p, http.MethodGet, "/v1/secrets", nil)
	ExpectWithOffset(1, code).To(Equal(http.StatusOK), string(body))
	var out struct{ Secrets []record }
	ExpectWithOffset(1, json.Unmarshal(body, &out)).To(Succeed())
	m := map[string]record{}
	for _, r := range out.Secrets {
		m[r.ID] = r
	}
	return m
}
