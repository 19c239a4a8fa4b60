package apikeys_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sort"
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

func TestAPIKeys(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "API Keys Suite")
}

var _ = BeforeSuite(func() {
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())
	var err error
	// Podium split as installed: Harbor's client sees one base URL (suite.Origin) in
	// front of the operator and the read tier (a process of its own, as podium-read).
	suite, err = testenv.StartSuite(ctx, testenv.SuiteOptions{ReadTier: true, Output: GinkgoWriter})
	Expect(err).NotTo(HaveOccurred())
	testEnv, cfg, k8sClient, clientset, op = suite.Env, suite.Config, suite.Client, suite.Clientset, suite.Operator
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	Expect(suite.Stop()).To(Succeed())
})

// person is a ServiceAccount of a namespace with a token, bound to an org role.
type person struct {
	NS, Name, User, Token string
}

func newPerson(ns, name, role string) person {
	GinkgoHelper()
	token, err := testenv.ServiceAccountToken(ctx, clientset, ns, name, role)
	Expect(err).NotTo(HaveOccurred())
	return person{NS: ns, Name: name, User: "system:serviceaccount:" + ns + ":" + name, Token: token}
}

func newOrg(prefix string) string {
	GinkgoHelper()
	ns := testenv.Namespace(prefix)
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// call sends a JSON request to the operator's HTTP API ("" token: none) from the
// default local address.
func call(method, path, token string, body any) (int, []byte) {
	GinkgoHelper()
	return callFrom(http.DefaultClient, method, path, token, body)
}

// callFrom is call with the client hc: the operator sees hc's address (behind the
// origin it would see the router's).
func callFrom(hc *http.Client, method, path, token string, body any) (int, []byte) {
	GinkgoHelper()
	return callAt(hc, op.BaseURL, method, path, token, body)
}

// callOrigin sends a JSON request to the one origin, which routes it to the operator or
// to the read tier by its path, as the chart's Ingress does.
func callOrigin(method, path, token string, body any) (int, []byte) {
	GinkgoHelper()
	return callAt(http.DefaultClient, suite.Origin, method, path, token, body)
}

func callAt(hc *http.Client, base, method, path, token string, body any) (int, []byte) {
	GinkgoHelper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, out
}

// clientFrom is an HTTP client whose connections come from the loopback address ip, so
// that per-address limits of one test do not touch the others.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

func decode[T any](b []byte) T {
	GinkgoHelper()
	var v T
	Expect(json.Unmarshal(b, &v)).To(Succeed(), string(b))
	return v
}

func keysOf(raw []byte) []string {
	GinkgoHelper()
	var m map[string]json.RawMessage
	Expect(json.Unmarshal(raw, &m)).To(Succeed(), string(raw))
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
