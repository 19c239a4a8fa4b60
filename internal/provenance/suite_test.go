package provenance_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"podium.dev/podium/internal/testenv"
)

// The suite runs the whole operator with its delivery webhook, the shipped admission
// policies and kube-controller-manager's workload controllers (a Job's Pods are made
// by the real Job controller). There is no kubelet: a test reports a Pod's started
// containers itself, as the kubelet would (pods/status).
var (
	cfg       *rest.Config
	k8sClient client.Client
	clientset *kubernetes.Clientset
	ctx       context.Context
	cancel    context.CancelFunc
	op        *testenv.Operator
	suite     *testenv.Suite
)

func TestVerifiedRows(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Verified Rows Suite")
}

var _ = BeforeSuite(func() {
	SetDefaultEventuallyTimeout(45 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())
	var err error
	suite, err = testenv.StartSuite(ctx, testenv.SuiteOptions{
		ClusterRoles: []*rbacv1.ClusterRole{runSubmitterRole()},
		Workloads:    testenv.WorkloadControllers,
		Output:       GinkgoWriter,
		Operator:     true, Delivery: true,
	})
	Expect(err).NotTo(HaveOccurred())
	cfg, k8sClient, clientset, op = suite.Config, suite.Client, suite.Clientset, suite.Operator
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	Expect(suite.Stop()).To(Succeed())
})
