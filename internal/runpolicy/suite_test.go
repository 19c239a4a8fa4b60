package runpolicy_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

var (
	suite     *testenv.Suite
	ctx       context.Context
	k8sClient client.Client
	clientset *kubernetes.Clientset
	op        *testenv.Operator
)

func TestRunPolicies(t *testing.T) { ginkgoenv.RunSpecs(t, "Run Admission Policies Suite") }

var _ = BeforeSuite(func() {
	ginkgoenv.SetEventuallyDefaults(60*time.Second, 100*time.Millisecond)
	// The workload controllers as most clusters run them: each with its own
	// ServiceAccount's credentials and bootstrap role, so their requests carry the user
	// names the identity policy exempts.
	suite = ginkgoenv.StartSuite(testenv.SuiteOptions{
		ClusterRoles: []*rbacv1.ClusterRole{workloadsRole(), impersonatorRole(), changeOthersRole()},
		Workloads:    []string{"job-controller", "replicaset-controller", "deployment-controller"},
		Output:       GinkgoWriter,
		Operator:     true, Delivery: true,
	})
	ctx, k8sClient, clientset, op = suite.Ctx, suite.Client, suite.Clientset, suite.Operator
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
	GinkgoHelper()
	token := ginkgoenv.ServiceAccountToken(ctx, clientset, ns, name, podiumRole)
	for _, r := range extra {
		Expect(testenv.BindClusterRole(ctx, clientset, ns, name+"-"+r, r, ns, name)).To(Succeed())
	}
	cs, err := testenv.ClientsetAs(suite.Config, token, nil)
	Expect(err).NotTo(HaveOccurred())
	p := person{NS: ns, Name: name, User: "system:serviceaccount:" + ns + ":" + name, Token: token, CS: cs}
	for _, r := range extra {
		if r == workloadsRole().Name {
			ginkgoenv.AwaitAllowed(ctx, cs, name, ns, "create", ginkgoenv.Resource{Resource: "pods"})
		}
	}
	if podiumRole != "" {
		ginkgoenv.AwaitAllowed(ctx, cs, name, ns, "create", ginkgoenv.Resource{Group: "hub.podium.dev", Resource: "hostedsecrets"})
	}
	return p
}

// store stores a user-scope secret over Podium's HTTP API as p.
func store(p person, envVar, value string) {
	GinkgoHelper()
	code, body := ginkgoenv.Call(ctx, nil, http.MethodPost, op.BaseURL+"/v1/secrets", p.Token, map[string]any{"env_var": envVar, "value": value})
	Expect(code).To(Equal(http.StatusCreated), string(body))
}

// podSpec is a one-container pod spec running as sa ("" for the default).
func podSpec(sa, image string) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: sa,
		RestartPolicy:      corev1.RestartPolicyNever,
		Containers:         []corev1.Container{{Name: "main", Image: image}},
	}
}
