package provenance_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

// The suite runs the whole operator with its delivery webhook, the shipped admission
// policies and kube-controller-manager's workload controllers (a Job's Pods are made
// by the real Job controller). There is no kubelet: a test reports a Pod's started
// containers itself, as the kubelet would (pods/status).
var (
	suite     *testenv.Suite
	ctx       context.Context
	k8sClient client.Client
	clientset *kubernetes.Clientset
	op        *testenv.Operator
)

func TestVerifiedRows(t *testing.T) { ginkgoenv.RunSpecs(t, "Verified Rows Suite") }

var _ = BeforeSuite(func() {
	ginkgoenv.SetEventuallyDefaults(45*time.Second, 100*time.Millisecond)
	suite = ginkgoenv.StartSuite(testenv.SuiteOptions{
		ClusterRoles: []*rbacv1.ClusterRole{runSubmitterRole()},
		Workloads:    testenv.WorkloadControllers,
		Output:       GinkgoWriter,
		Operator:     true, Delivery: true,
	})
	ctx, k8sClient, clientset, op = suite.Ctx, suite.Client, suite.Clientset, suite.Operator
})
