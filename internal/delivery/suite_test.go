package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"podium.dev/podium/internal/testenv"
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

func TestDelivery(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Secret Delivery Suite")
}

var _ = BeforeSuite(func() {
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())
	// The controllers that make Pods from templates, as their own ServiceAccounts. The
	// Jobs of the tests that play the Job controller themselves name another manager.
	var err error
	suite, err = testenv.StartSuite(ctx, testenv.SuiteOptions{
		ClusterRoles: []*rbacv1.ClusterRole{runSubmitterRole()},
		Workloads:    testenv.WorkloadControllers,
		Output:       GinkgoWriter,
		Operator:     true, Delivery: true, OrphanGrace: orphanGrace,
	})
	Expect(err).NotTo(HaveOccurred())
	testEnv, cfg, k8sClient, clientset, op = suite.Env, suite.Config, suite.Client, suite.Clientset, suite.Operator
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	Expect(suite.Stop()).To(Succeed())
})

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
	token, err := testenv.ServiceAccountToken(ctx, clientset, o.Name, name, "podium-org-member")
	Expect(err).NotTo(HaveOccurred())
	bindRuns(o.Name, o.Name, name)
	cs, w := clientAs(token)
	// A new RoleBinding reaches the apiserver's RBAC authorizer a moment after it is
	// created: wait until the person may submit runs, or a first create can get a 403.
	EventuallyWithOffset(1, func(g Gomega) {
		for _, res := range []struct{ group, resource string }{{"batch", "jobs"}, {"", "pods"}} {
			r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: o.Name, Verb: "create", Group: res.group, Resource: res.resource,
				}},
			}, metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.Status.Allowed).To(BeTrue(), "%s may not create %s yet", name, res.resource)
		}
	}).Should(Succeed())
	return person{User: "system:serviceaccount:" + o.Name + ":" + name, Token: token, CS: cs, warnings: w}
}

// bindRuns lets the ServiceAccount saNS/sa submit runs in ns.
func bindRuns(ns, saNS, sa string) {
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: saNS + "-" + sa + "-runs"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "test-run-submitter"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: saNS}},
	}
	ExpectWithOffset(1, k8sClient.Create(ctx, rb)).To(Succeed())
}

// clientAs is a clientset acting with token that records the warnings it receives.
func clientAs(token string) (*kubernetes.Clientset, *warningLog) {
	w := &warningLog{}
	pc := rest.AnonymousClientConfig(cfg)
	pc.BearerToken = token
	pc.WarningHandler = w
	cs, err := kubernetes.NewForConfig(pc)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return cs, w
}

// call sends a request to the operator's HTTP API as p.
func call(p person, method, path string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		js, err := json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequestWithContext(ctx, method, op.BaseURL+path, rd)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.Token)
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, out
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
