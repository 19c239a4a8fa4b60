package runpolicy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
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

func TestRunPolicies(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Run Admission Policies Suite")
}

var _ = BeforeSuite(func() {
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())
	// The workload controllers as most clusters run them: each with its own
	// ServiceAccount's credentials and bootstrap role, so their requests carry the user
	// names the identity policy exempts.
	var err error
	suite, err = testenv.StartSuite(ctx, testenv.SuiteOptions{
		ClusterRoles: []*rbacv1.ClusterRole{workloadsRole(), impersonatorRole(), changeOthersRole()},
		Workloads:    []string{"job-controller", "replicaset-controller", "deployment-controller"},
		Output:       GinkgoWriter,
		Operator:     true, Delivery: true,
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

// workloadsRole lets a person create and change Pods and every pod-template kind: the
// sample run-submitter role (config/samples/serviceaccount_demo.yaml) widened to every
// kind that runs Pods and to ephemeral containers, so that only admission can stop what
// these tests try.
func workloadsRole() *rbacv1.ClusterRole {
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-workloads"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/ephemeralcontainers", "replicationcontrollers", "podtemplates"}, Verbs: all},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets", "statefulsets", "daemonsets"}, Verbs: all},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: all},
		},
	}
}

// impersonatorRole may act as any ServiceAccount of the namespace it is bound in.
func impersonatorRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-impersonate-serviceaccounts"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}}},
	}
}

// changeOthersRole is what a platform team grants a trusted batch queue: the custom
// verb that lets it change other requesters' runs.
func changeOthersRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-change-others"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"hub.podium.dev"}, Resources: []string{"runs"}, Verbs: []string{"change-others"}}},
	}
}

// person is a ServiceAccount of an org acting with its own token.
type person struct {
	NS, Name, User, Token string
	CS                    *kubernetes.Clientset
}

// newPerson makes the ServiceAccount ns/name, binds podiumRole ("" for none) and every
// ClusterRole of extra in ns, and waits until RBAC lets it create Pods.
func newPerson(ns, name, podiumRole string, extra ...string) person {
	token, err := testenv.ServiceAccountToken(ctx, clientset, ns, name, podiumRole)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, r := range extra {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-" + r},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
		}
		ExpectWithOffset(1, k8sClient.Create(ctx, rb)).To(Succeed())
	}
	pc := rest.AnonymousClientConfig(cfg)
	pc.BearerToken = token
	cs, err := kubernetes.NewForConfig(pc)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	p := person{NS: ns, Name: name, User: "system:serviceaccount:" + ns + ":" + name, Token: token, CS: cs}
	// A new RoleBinding reaches the RBAC authorizer a moment after it is created.
	for _, r := range extra {
		if r == workloadsRole().Name {
			awaitAllowed(p, ns, "", "pods", "create")
		}
	}
	if podiumRole != "" {
		awaitAllowed(p, ns, "hub.podium.dev", "hostedsecrets", "create")
	}
	return p
}

func awaitAllowed(p person, ns, group, resource, verb string) {
	EventuallyWithOffset(2, func(g Gomega) {
		r, err := p.CS.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: verb, Group: group, Resource: resource,
			}},
		}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r.Status.Allowed).To(BeTrue(), "%s may not %s %s yet", p.Name, verb, resource)
	}).Should(Succeed())
}

// store stores a user-scope secret over Podium's HTTP API as p.
func store(p person, envVar, value string) {
	js, err := json.Marshal(map[string]any{"env_var": envVar, "value": value})
	Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, op.BaseURL+"/v1/secrets", bytes.NewReader(js))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.Token)
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	ExpectWithOffset(1, resp.StatusCode).To(Equal(http.StatusCreated), string(body))
}

// podSpec is a one-container pod spec running as sa ("" for the default).
func podSpec(sa, image string) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: sa,
		RestartPolicy:      corev1.RestartPolicyNever,
		Containers:         []corev1.Container{{Name: "main", Image: image}},
	}
}
