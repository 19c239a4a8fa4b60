package provenance_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"podium.dev/podium/internal/controllermanager"
	"podium.dev/podium/internal/scheme"
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
	testEnv   *envtest.Environment
	ctx       context.Context
	cancel    context.CancelFunc
	op        *testenv.Operator
	workloads *controllermanager.Process
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
	testEnv, cfg, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	clientset, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	Expect(testenv.ApplyOrgRoles(ctx, clientset)).To(Succeed())
	workloads, err = testenv.StartWorkloadControllers(ctx, testEnv, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient.Create(ctx, runSubmitterRole())).To(Succeed())
	op, err = testenv.StartOperatorWithDelivery(ctx, cfg, 0)
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if op != nil {
		<-op.Done
	}
	if workloads != nil {
		workloads.Stop()
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})
