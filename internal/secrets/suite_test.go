package secrets_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

var (
	cfg       *rest.Config
	k8sClient client.Client
	clientset *kubernetes.Clientset
	testEnv   *envtest.Environment
	ctx       context.Context
	suite     *testenv.Suite
	// opCancel stops the operator (restartOperator), not the tests' context.
	opCancel context.CancelFunc
	// baseURL is the operator's HTTP API, served by the real server of the real manager.
	baseURL string
	op      *testenv.Operator
	// logs captures everything the operator logs (controller-runtime and klog), so that
	// the leak test can search it.
	logs = &syncBuffer{}
	// transcript records every HTTP response body the tests received.
	transcript = &syncBuffer{}
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSecrets(t *testing.T) { ginkgoenv.RunSpecs(t, "Hosted Secrets Suite") }

var _ = BeforeSuite(func() {
	ginkgoenv.SetEventuallyDefaults(30*time.Second, 50*time.Millisecond)
	Expect(startOperator(GinkgoWriter)).To(Succeed())
})

var _ = AfterSuite(func() {
	Expect(stopOperator()).To(Succeed())
})

// startOperator starts a control plane and the whole operator (operator.NewManager, as
// cmd/operator builds it) serving HTTP on a loopback port, and waits until it is ready.
// The operator's log goes to logOut and to logs.
func startOperator(logOut io.Writer) error {
	// Development mode logs V(1) lines too, so the leak test also searches debug output.
	logger := zap.New(zap.WriteTo(io.MultiWriter(logOut, logs)), zap.UseDevMode(true))
	logf.SetLogger(logger)
	klog.SetLogger(logger)
	var err error
	suite, err = testenv.StartSuite(context.Background(), testenv.SuiteOptions{})
	if err != nil {
		return err
	}
	ctx, testEnv, cfg, k8sClient, clientset = suite.Ctx, suite.Env, suite.Config, suite.Client, suite.Clientset
	return runOperator()
}

// runOperator starts the operator, with the delivery webhook: the leak test delivers
// values into Jobs and Pods.
func runOperator() error {
	var opCtx context.Context
	opCtx, opCancel = context.WithCancel(ctx)
	var err error
	if op, err = testenv.StartOperatorWithDelivery(opCtx, cfg, 0); err != nil {
		return err
	}
	baseURL = op.BaseURL
	return nil
}

// restartOperator stops the operator, runs meanwhile (an operator down, or one of an
// older version that is being replaced) and starts a new operator.
func restartOperator(meanwhile func()) {
	opCancel()
	<-op.Done
	defer func() { Expect(runOperator()).To(Succeed()) }()
	meanwhile()
}

func stopOperator() error {
	if opCancel != nil {
		opCancel()
	}
	if op != nil {
		<-op.Done
	}
	return suite.Stop()
}

// org is a namespace standing for an organization.
type org struct {
	Name string
	UID  string
}

func newOrg(prefix string) org {
	ns := ginkgoenv.CreateNamespace(ctx, k8sClient, prefix)
	return org{Name: ns.Name, UID: string(ns.UID)}
}

// person is a ServiceAccount of an org with a token, bound to one of the org roles.
type person struct {
	User  string
	Token string
}

func newPerson(o org, name, clusterRole string) person {
	token := ginkgoenv.ServiceAccountToken(ctx, clientset, o.Name, name, clusterRole)
	return person{User: "system:serviceaccount:" + o.Name + ":" + name, Token: token}
}

// call sends a request to the operator's HTTP API and returns the status and the body.
// Every body is kept in the transcript. token "" sends no Authorization header.
func call(method, path, token string, body any) (int, []byte) {
	return callAt(baseURL, method, path, token, body)
}

// callAt is call against the HTTP API at base (another replica).
func callAt(base, method, path, token string, body any) (int, []byte) {
	code, out, err := testenv.CallAPI(ctx, nil, method, base+path, token, body)
	Expect(err).NotTo(HaveOccurred())
	fmt.Fprintf(transcript, "%s %s -> %d %s\n", method, path, code, out)
	return code, out
}

// record is a secret as the API returns it.
type record struct {
	ID         string  `json:"id"`
	Scope      string  `json:"scope"`
	JobID      *string `json:"job_id"`
	OrgID      string  `json:"org_id"`
	EnvVar     string  `json:"env_var"`
	Provider   *string `json:"provider"`
	ValueLast4 string  `json:"value_last4"`
	Status     string  `json:"status"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
}

type apiError struct {
	Error struct {
		Code     string `json:"code"`
		Message  string `json:"message"`
		Details  []struct{ Field, Message string }
		Existing *struct {
			ID         string `json:"id"`
			Scope      string `json:"scope"`
			EnvVar     string `json:"env_var"`
			ValueLast4 string `json:"value_last4"`
			CreatedAt  string `json:"created_at"`
		} `json:"existing"`
	} `json:"error"`
}

func decode[T any](b []byte) T {
	var v T
	ExpectWithOffset(1, json.Unmarshal(b, &v)).To(Succeed(), string(b))
	return v
}

// store POSTs a secret and returns the status and the body.
func store(p person, fields map[string]any) (int, []byte) {
	return call(http.MethodPost, "/v1/secrets", p.Token, fields)
}

func list(p person, query string) []record {
	code, body := call(http.MethodGet, "/v1/secrets"+query, p.Token, nil)
	ExpectWithOffset(1, code).To(Equal(http.StatusOK), string(body))
	return decode[struct{ Secrets []record }](body).Secrets
}

func revoke(p person, fields map[string]any) int {
	code, body := call(http.MethodDelete, "/v1/secrets", p.Token, fields)
	ExpectWithOffset(1, code).To(Equal(http.StatusOK), string(body))
	return decode[struct{ Affected int }](body).Affected
}
