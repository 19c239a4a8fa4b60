package operator_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

// A replica is not ready until the apiserver admits rows through Podium's admission
// policies: on a control plane with the CRDs and no policies the probe fails and
// /readyz answers 503; once config/admission is in force the probe passes and /readyz
// answers 200 (docs/deploy.md, "Install").
func TestReadinessWaitsForAdmission(t *testing.T) {
	g := NewWithT(t)
	assets, err := testenv.Assets()
	g.Expect(err).NotTo(HaveOccurred())
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(testenv.RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		Scheme:                scheme.Scheme,
	}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(operator.AdmissionInForce(ctx, c, "default")).To(MatchError(operator.ErrAdmissionNotInForce))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := operator.NewManager(cfg, operator.Options{
		MetricsAddr: "0", ProbeAddr: "0", HTTPListener: ln, Restartable: true,
		SecretValueNamespace: "default", AdmissionProbeNamespace: "default",
	})
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); g.Expect(<-done).To(Succeed()) })
	readyz := func() (int, error) {
		resp, err := http.Get(fmt.Sprintf("http://%s/readyz", ln.Addr()))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// The caches sync in a moment; readiness still waits for the policies.
	g.Eventually(func() bool { return mgr.GetCache().WaitForCacheSync(ctx) }).Should(BeTrue())
	g.Expect(operator.AdmissionInForce(ctx, c, "default")).To(MatchError(operator.ErrAdmissionNotInForce))
	g.Expect(readyz()).To(Equal(http.StatusServiceUnavailable))

	g.Expect(testenv.ApplyAdmission(ctx, cfg)).To(Succeed())
	g.Expect(operator.AdmissionInForce(ctx, c, "default")).To(Succeed())
	g.Eventually(readyz).WithTimeout(time.Minute).Should(Equal(http.StatusOK))

	// Without PublicRead the operator role leaves the public read and the web pages to
	// the read tier (--role=read): it does not serve them.
	for _, path := range []string{"/v1/leaderboard-read", "/functions/v1/leaderboard-read", "/leaderboards"} {
		method := http.MethodPost
		if path == "/leaderboards" {
			method = http.MethodGet
		}
		req, err := http.NewRequest(method, fmt.Sprintf("http://%s%s", ln.Addr(), path), strings.NewReader(`{"package":"a/b","name":"c"}`))
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusNotFound), "%s %s on the operator role", method, path)
	}
}
