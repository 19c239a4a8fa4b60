package apikeys_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sort"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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

func TestAPIKeys(t *testing.T) { ginkgoenv.RunSpecs(t, "API Keys Suite") }

var _ = BeforeSuite(func() {
	ginkgoenv.SetEventuallyDefaults(30*time.Second, 100*time.Millisecond)
	// Podium split as installed: Harbor's client sees one base URL (suite.Origin) in
	// front of the operator and the read tier (a process of its own, as podium-read).
	suite = ginkgoenv.StartSuite(testenv.SuiteOptions{ReadTier: true, Output: GinkgoWriter})
	ctx, k8sClient, clientset, op = suite.Ctx, suite.Client, suite.Clientset, suite.Operator
})

// person is a ServiceAccount of a namespace with a token, bound to an org role.
type person struct {
	NS, Name, User, Token string
}

func newPerson(ns, name, role string) person {
	GinkgoHelper()
	token := ginkgoenv.ServiceAccountToken(ctx, clientset, ns, name, role)
	return person{NS: ns, Name: name, User: "system:serviceaccount:" + ns + ":" + name, Token: token}
}

func newOrg(prefix string) string {
	GinkgoHelper()
	return ginkgoenv.CreateNamespace(ctx, k8sClient, prefix).Name
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
	return ginkgoenv.Call(ctx, hc, method, base+path, token, body)
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
