package web_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

// chromiumPath is Debian's Chromium, installed by hack/install-chromium.sh.
const chromiumPath = "/usr/bin/chromium"

var (
	suite     *testenv.Suite
	k8sClient client.Client
	ctx       context.Context
	// baseURL is the operator's HTTP server (the real manager) on 127.0.0.1.
	baseURL string
	// beacon records requests a script in a page would make, on its own 127.0.0.1 port.
	beacon *beaconServer
)

func TestWebPages(t *testing.T) { ginkgoenv.RunSpecs(t, "Web Pages Suite") }

var _ = BeforeSuite(func() {
	// Rows and boards reach the read through the controllers and informers: on a busy
	// 2-core machine that may take more than Gomega's default second.
	ginkgoenv.SetEventuallyDefaults(30*time.Second, 100*time.Millisecond)
	// A missing browser fails the suite: these tests are the proof that a row's
	// markdown runs nothing in a real browser, and a skip would hide its absence.
	_, err := os.Stat(chromiumPath)
	Expect(err).NotTo(HaveOccurred(), "Chromium is missing: run hack/install-chromium.sh")

	suite = ginkgoenv.StartSuite(testenv.SuiteOptions{Operator: true})
	DeferCleanup(ginkgoenv.AwaitOperatorStopped, suite)
	ctx, k8sClient, baseURL = suite.Ctx, suite.Client, suite.Operator.BaseURL

	beacon = startBeacon()
	DeferCleanup(beacon.close)
})

// newOrg creates a fresh org namespace.
func newOrg() string {
	return ginkgoenv.CreateNamespace(ctx, k8sClient, "web").Name
}

// memberToken creates a ServiceAccount in ns bound to role there and returns a token.
func memberToken(ns, role string) string {
	return ginkgoenv.ServiceAccountToken(ctx, suite.Clientset, ns, "reader", role)
}

// applySamples creates the objects of config/samples files in ns instead of "demo".
func applySamples(ns string, files ...string) {
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", f))
		Expect(err).NotTo(HaveOccurred())
		text := strings.ReplaceAll(string(data), "namespace: demo", "namespace: "+ns)
		text = strings.ReplaceAll(text, "package: demo/", "package: "+ns+"/")
		for _, doc := range strings.Split(text, "\n---") {
			obj, err := decodeObject(doc)
			Expect(err).NotTo(HaveOccurred(), f)
			if obj != nil {
				Expect(k8sClient.Create(ctx, obj)).To(Succeed(), f)
			}
		}
	}
}

func decodeObject(doc string) (client.Object, error) {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(doc), &meta); err != nil || meta.Kind == "" {
		return nil, err
	}
	gvk := metav1.SchemeGroupVersion.WithKind(meta.Kind)
	gvk.Group, gvk.Version = splitAPIVersion(meta.APIVersion)
	o, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict([]byte(doc), o); err != nil {
		return nil, err
	}
	return o.(client.Object), nil
}

func splitAPIVersion(v string) (group, version string) {
	if g, ver, ok := strings.Cut(v, "/"); ok {
		return g, ver
	}
	return "", v
}

// get fetches a page with Go's client, optionally with a bearer token.
func get(path, token string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+path, nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return res.StatusCode, string(body)
}

// chromium runs headless Chromium once with the project's flags: no network beyond
// what the page asks for, no sync, no updates, a throwaway profile. Its whole process
// group is killed afterwards, so no helper process outlives a test.
func chromium(args ...string) ([]byte, error) {
	profile, err := os.MkdirTemp("", "podium-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	runCtx, stop := context.WithTimeout(ctx, 90*time.Second)
	defer stop()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + profile,
	}
	cmd := exec.CommandContext(runCtx, chromiumPath, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		return nil, fmt.Errorf("chromium %v: %w\n%s", args, err, lastLines(stderr.String(), 20))
	}
	return stdout.Bytes(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// dumpDOM loads url and returns the DOM after the page's scripts (if any could run)
// have had two seconds of virtual time: timers and handlers like onerror fire first.
func dumpDOM(url string) string {
	out, err := chromium("--virtual-time-budget=2000", "--dump-dom", url)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return string(out)
}

// screenshot writes a PNG of url at the given window size.
func screenshot(url, path string, width, height int) {
	_, err := chromium("--hide-scrollbars", "--force-device-scale-factor=1",
		fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+path, url)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
}

// beaconServer stands where a script injected into a page would report to: every
// request is recorded. It also serves /control/<name>, a page with unsanitised
// payloads and no CSP, which shows that the beacon does see scripts that run.
type beaconServer struct {
	srv  *http.Server
	url  string
	mu   sync.Mutex
	hits []string
	// control pages by name
	pages map[string]string
}

func startBeacon() *beaconServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	b := &beaconServer{url: "http://" + ln.Addr().String(), pages: map[string]string{}}
	b.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.URL.Path, "/control/"); ok {
			b.mu.Lock()
			page := b.pages[name]
			b.mu.Unlock()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, page)
			return
		}
		b.mu.Lock()
		b.hits = append(b.hits, r.URL.Path)
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() {
		if err := b.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			GinkgoWriter.Println("beacon server:", err)
		}
	}()
	return b
}

func (b *beaconServer) close() { _ = b.srv.Close() }

// hitsUnder returns the recorded paths starting with prefix.
func (b *beaconServer) hitsUnder(prefix string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, h := range b.hits {
		if strings.HasPrefix(h, prefix) {
			out = append(out, h)
		}
	}
	return out
}

func (b *beaconServer) setControl(name, page string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pages[name] = page
}
