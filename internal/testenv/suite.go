package testenv

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"net/url"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"podium.dev/podium/internal/controllermanager"
	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/origin"
	"podium.dev/podium/internal/scheme"
)

// SuiteOptions say what a suite runs beside the control plane.
type SuiteOptions struct {
	// ClusterRoles are created after the org roles and before anything else starts.
	ClusterRoles []*rbacv1.ClusterRole
	// Workloads are kube-controller-manager controllers to run, each as its own
	// ServiceAccount (WorkloadControllers for all of them; nil for none). Their log goes
	// to Output.
	Workloads []string
	// ControllerManager, without Workloads, runs kube-controller-manager's garbage
	// collector and namespace controller (StartControllerManager) instead. Its log goes
	// to Output.
	ControllerManager bool
	Output            io.Writer
	// Operator starts Podium's operator: with the delivery webhook when Delivery is set
	// (OrphanGrace: StartOperatorWithDelivery's orphanGrace).
	Operator    bool
	Delivery    bool
	OrphanGrace time.Duration
	// ReadTier runs Podium split as installed, behind one origin: the operator without
	// the public read (it serves the secrets and API-key APIs), the read tier as its own
	// process (StartReadProcess: podium-operator --role=read as podium-read, which may
	// read no Secret) and internal/origin's router in front of both (Suite.Origin). It
	// implies Operator; Delivery is not served with it.
	ReadTier bool
}

// Suite is what StartSuite started: the control plane (Start) with Podium's org roles
// applied, clients acting as its admin, and what SuiteOptions asked for. The suites of
// the packages that run Podium against a real control plane share it instead of each
// copying the set-up.
type Suite struct {
	// Ctx is the suite's context: it ends when Stop (or Cancel) is called.
	Ctx       context.Context
	Env       *envtest.Environment
	Config    *rest.Config
	Client    client.Client
	Clientset *kubernetes.Clientset
	// Operator is nil unless SuiteOptions.Operator; Workloads unless
	// SuiteOptions.Workloads or ControllerManager (it is kube-controller-manager).
	Operator  *Operator
	Workloads *controllermanager.Process
	// Read is the read tier and Origin the one base URL routing to it and to Operator,
	// when SuiteOptions.ReadTier.
	Read   *Operator
	Origin string
	router *httptest.Server
	cancel context.CancelFunc
}

// StartSuite starts a Suite. The operator and the controllers run until Stop (or ctx
// ends). On an error, what was started is stopped, and the partial suite is returned
// with it so that a test's clean-up may still call Stop.
func StartSuite(ctx context.Context, o SuiteOptions) (*Suite, error) {
	s := &Suite{}
	s.Ctx, s.cancel = context.WithCancel(ctx)
	err := s.start(s.Ctx, o)
	if err != nil {
		err = errors.Join(err, s.Stop())
	}
	return s, err
}

func (s *Suite) start(ctx context.Context, o SuiteOptions) error {
	var err error
	if s.Env, s.Config, err = Start(); err != nil {
		return err
	}
	if s.Client, err = client.New(s.Config, client.Options{Scheme: scheme.Scheme}); err != nil {
		return err
	}
	if s.Clientset, err = kubernetes.NewForConfig(s.Config); err != nil {
		return err
	}
	if err := ApplyOrgRoles(ctx, s.Clientset); err != nil {
		return err
	}
	for _, r := range o.ClusterRoles {
		if err := s.Client.Create(ctx, r); err != nil {
			return err
		}
	}
	switch {
	case len(o.Workloads) > 0:
		s.Workloads, err = startControllerManager(ctx, s.Env, o.Output, controllermanager.Options{
			Controllers: o.Workloads, ServiceAccountCredentials: true,
		})
	case o.ControllerManager:
		s.Workloads, err = StartControllerManager(ctx, s.Env, o.Output)
	}
	if err != nil {
		return err
	}
	switch {
	case o.ReadTier && o.Delivery:
		return errors.New("testenv: SuiteOptions.ReadTier does not serve the delivery webhook")
	case o.ReadTier:
		return s.startSplit(ctx, o.Output)
	case o.Operator && o.Delivery:
		s.Operator, err = StartOperatorWithDelivery(ctx, s.Config, o.OrphanGrace)
	case o.Operator:
		s.Operator, err = StartOperator(ctx, s.Config)
	}
	return err
}

// startSplit starts the operator as installed (no public read), the read tier as its own
// process looking keys up at it, and the origin in front of both.
func (s *Suite) startSplit(ctx context.Context, out io.Writer) error {
	var err error
	if s.Operator, err = start(ctx, s.Config, operator.Options{}); err != nil {
		return err
	}
	if out == nil {
		out = io.Discard
	}
	if s.Read, err = StartReadProcess(ctx, s.Config, s.Operator.BaseURL, out); err != nil {
		return err
	}
	opURL, err := url.Parse(s.Operator.BaseURL)
	if err != nil {
		return err
	}
	readURL, err := url.Parse(s.Read.BaseURL)
	if err != nil {
		return err
	}
	s.router = httptest.NewServer(origin.NewRouter(opURL, readURL)) // 127.0.0.1
	s.Origin = s.router.URL
	return nil
}

// Cancel ends Ctx: the operator and the controllers begin to stop, and a test may wait
// for them before Stop.
func (s *Suite) Cancel() {
	if s != nil && s.cancel != nil {
		s.cancel()
	}
}

// Stop stops the origin, the read tier and the operator (waiting until each has
// returned), the controllers and the control plane, in that order.
func (s *Suite) Stop() error {
	if s == nil {
		return nil
	}
	if s.router != nil {
		s.router.Close()
	}
	s.Cancel()
	if s.Read != nil {
		<-s.Read.Done
	}
	if s.Operator != nil {
		<-s.Operator.Done
	}
	if s.Workloads != nil {
		s.Workloads.Stop()
	}
	if s.Env != nil {
		return s.Env.Stop()
	}
	return nil
}
