// Package config_test checks what config/ ships as a platform team installs it: the one
// file `make build-installer` writes, applied (server-side, dry run) to a real apiserver;
// the cert-manager and Prometheus overlays; and the operator's metrics endpoint, which
// serves only callers the apiserver authenticates and authorizes.
package config_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"podium.dev/podium/internal/testenv"
)

// objects splits a multi-document YAML stream into objects.
func objects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("a document does not parse: %v\n%s", err, doc)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

func kinds(objs []*unstructured.Unstructured) map[string][]string {
	k := map[string][]string{}
	for _, o := range objs {
		k[o.GetKind()] = append(k[o.GetKind()], o.GetName())
	}
	return k
}

type cluster struct {
	env        *envtest.Environment
	kubectl    string
	kubeconfig string
	cs         kubernetes.Interface
}

func start(t *testing.T) *cluster {
	t.Helper()
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	c := &cluster{env: env, kubeconfig: filepath.Join(t.TempDir(), "kubeconfig")}
	if err := testenv.AdminKubeconfig(env, nil, "installer-admin", c.kubeconfig); err != nil {
		t.Fatal(err)
	}
	if c.kubectl, err = testenv.Kubectl(); err != nil {
		t.Fatal(err)
	}
	if c.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *cluster) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(c.kubectl, append([]string{"--kubeconfig", c.kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestInstallerAppliesToARealAPIServer(t *testing.T) {
	c := start(t)
	root := testenv.RepoRoot()
	out := filepath.Join(t.TempDir(), "install.yaml")
	const img = "registry.example.com/podium/operator:v1.2.3"
	if b, err := exec.Command("bash", filepath.Join(root, "hack", "build-installer.sh"), c.kubectl, img, out).CombinedOutput(); err != nil {
		t.Fatalf("build-installer: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, data)
	got := kinds(objs)
	for kind, want := range map[string][]string{
		"CustomResourceDefinition": {"datasets.hub.podium.dev", "leaderboards.hub.podium.dev", "leaderboardrows.hub.podium.dev", "hostedsecrets.hub.podium.dev"},
		"Namespace":                {"podium-system"},
		"ServiceAccount":           {"podium-operator"},
		"ClusterRole":              {"podium-operator", "podium-metrics-reader", "podium-org-owner"},
		"ClusterRoleBinding":       {"podium-operator", "podium-operator-auth-delegator"},
		"Deployment":               {"podium-operator"},
		"Service":                  {"podium", "podium-metrics"},
		"PodDisruptionBudget":      {"podium-operator"},
		"NetworkPolicy":            {"podium-webhook"},
	} {
		for _, name := range want {
			if !slices.Contains(got[kind], name) {
				t.Errorf("install.yaml has no %s %s (it has %v)", kind, name, got[kind])
			}
		}
	}
	// What other parts of config/ add when they exist: admission policies, webhooks.
	for dir, kindRE := range map[string]string{
		"admission": `^ValidatingAdmissionPolicy(Binding)?$|^MutatingAdmissionPolicy(Binding)?$`,
		"webhook":   `^(Mutating|Validating)WebhookConfiguration$`,
	} {
		if _, err := os.Stat(filepath.Join(root, "config", dir, "kustomization.yaml")); err != nil {
			continue
		}
		found := false
		for k := range got {
			found = found || regexp.MustCompile(kindRE).MatchString(k)
		}
		if !found {
			t.Errorf("config/%s exists but install.yaml has none of its objects (kinds %v)", dir, keys(got))
		}
	}
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		image, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
		if image != img {
			t.Errorf("the Deployment runs %q, want %q", image, img)
		}
	}

	// Server-side dry run: the apiserver validates and admits every object without
	// storing it. Namespaced objects need their namespace to exist for real.
	c.run(t, "create", "namespace", "podium-system")
	applied := c.run(t, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", out)
	lines := strings.Split(strings.TrimSpace(applied), "\n")
	if len(lines) != len(objs) {
		t.Errorf("%d objects applied, want %d:\n%s", len(lines), len(objs), applied)
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, "serverside-applied (server dry run)") {
			t.Errorf("unexpected: %s", l)
		}
	}
	if _, err := c.cs.AppsV1().Deployments("podium-system").Get(context.Background(), "podium-operator", metav1.GetOptions{}); err == nil {
		t.Error("a dry run stored the Deployment")
	}
}

func TestOverlays(t *testing.T) {
	kubectl, err := testenv.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	build := func(dir string) []*unstructured.Unstructured {
		out, err := exec.Command(kubectl, "kustomize", filepath.Join(testenv.RepoRoot(), "config", dir)).CombinedOutput()
		if err != nil {
			t.Fatalf("kustomize config/%s: %v\n%s", dir, err, out)
		}
		return objects(t, out)
	}
	cm := build("certmanager")
	got := kinds(cm)
	for _, cert := range []string{"podium-metrics", "podium-webhook"} {
		if !slices.Contains(got["Certificate"], cert) || !slices.Contains(got["Issuer"], "podium-selfsigned") {
			t.Errorf("config/certmanager has no Certificate %s and Issuer: %v", cert, keys(got))
		}
	}
	for _, o := range cm {
		switch o.GetKind() {
		case "Deployment":
			if o.GetName() != "podium-operator" {
				continue // the read tier serves no webhook, and its metrics keep their own certificate
			}
			c, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(c[0].(map[string]any), "args")
			for _, want := range []string{"--metrics-cert-dir=/etc/podium/metrics-cert", "--webhook-cert-dir=/var/run/podium/webhook-certs"} {
				if !slices.Contains(args, want) {
					t.Errorf("the Deployment of config/certmanager does not use its certificate (%s): %v", want, args)
				}
			}
			vols, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
			var secrets []string
			for _, v := range vols {
				secrets = append(secrets, v.(map[string]any)["secret"].(map[string]any)["secretName"].(string))
			}
			if !slices.Equal(secrets, []string{"podium-webhook-tls", "podium-metrics-cert"}) {
				t.Errorf("the Deployment of config/certmanager does not mount the certificates' Secrets: %v", vols)
			}
		case "MutatingWebhookConfiguration":
			if o.GetAnnotations()["cert-manager.io/inject-ca-from"] != "podium-system/podium-webhook" {
				t.Errorf("cert-manager does not inject the webhook's CA: %v", o.GetAnnotations())
			}
		}
	}
	if got := kinds(build("prometheus")); !slices.Contains(got["ServiceMonitor"], "podium-operator") || !slices.Contains(got["Deployment"], "podium-operator") {
		t.Errorf("config/prometheus has no ServiceMonitor on top of config/default: %v", keys(got))
	}
}

func TestMetricsNeedAnAuthorizedCaller(t *testing.T) {
	bin := os.Getenv("PODIUM_BIN")
	if bin == "" {
		t.Fatal("PODIUM_BIN is not set: run `make build` and set it to the bin/ directory (make test does)")
	}
	c := start(t)
	ctx := context.Background()
	// The operator's own namespace, where its readiness makes its admission probe.
	c.run(t, "create", "namespace", "podium-system")
	metricsAddr, httpAddr := freeAddr(t), freeAddr(t)
	op := exec.Command(filepath.Join(bin, "podium-operator"), "--kubeconfig", c.kubeconfig,
		"--metrics-bind-address", metricsAddr, "--http-addr", httpAddr, "--health-probe-bind-address", "127.0.0.1:0")
	var log strings.Builder
	op.Stdout, op.Stderr = &log, &log
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = op.Process.Signal(os.Interrupt)
		_ = op.Wait()
	})
	waitOK(t, "http://"+httpAddr+"/readyz", nil, "")

	// The reader role as shipped, bound to one ServiceAccount; another has no binding.
	c.run(t, "apply", "-f", filepath.Join(testenv.RepoRoot(), "config", "rbac", "metrics_reader_role.yaml"))
	c.run(t, "create", "namespace", "monitoring")
	reader, err := testenv.ServiceAccountToken(ctx, c.cs, "monitoring", "prometheus", "")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := testenv.ServiceAccountToken(ctx, c.cs, "monitoring", "stranger", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-podium-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "podium-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: "monitoring"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The endpoint's certificate is self-signed (config/certmanager replaces it).
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a self-signed test certificate
	url := "https://" + metricsAddr + "/metrics"
	body := waitOK(t, url, client, reader)
	if !strings.Contains(body, "controller_runtime_reconcile_total") {
		t.Errorf("no controller metrics in the answer:\n%.500s", body)
	}
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		// controller-runtime's filter answers a token the TokenReview rejects with 500.
		{"a token that does not authenticate", "not-a-token", http.StatusInternalServerError},
		{"a caller without get /metrics", stranger, http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
		if strings.Contains(string(b), "controller_runtime") {
			t.Errorf("%s: metrics were served", tc.name)
		}
	}
	if resp, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "controller_runtime") {
			t.Error("metrics are served over plain HTTP")
		}
	}
	if t.Failed() {
		t.Logf("operator log:\n%s", log.String())
	}
}

// waitOK polls url (at most two minutes) until it answers 200, and returns the body.
func waitOK(t *testing.T, url string, c *http.Client, token string) string {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	var last string
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			last = err.Error()
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return string(b)
		}
		last = fmt.Sprintf("status %d: %.200s", resp.StatusCode, b)
	}
	t.Fatalf("%s did not answer 200 within two minutes (last: %s)", url, last)
	return ""
}

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := testenv.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestWebhookNetworkPolicy: the NetworkPolicy config/default ships selects the operator's
// Pods, admits the webhook port only from the sources it names (not from every Pod), and
// leaves every other port the Deployment declares open, as without it.
func TestWebhookNetworkPolicy(t *testing.T) {
	kubectl, err := testenv.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(testenv.RepoRoot(), "config", "default")).CombinedOutput()
	if err != nil {
		t.Fatalf("kustomize config/default: %v\n%s", err, out)
	}
	var np, deploy *unstructured.Unstructured
	for _, o := range objects(t, out) {
		switch {
		case o.GetKind() == "NetworkPolicy" && o.GetName() == "podium-webhook":
			np = o
		case o.GetKind() == "Deployment" && o.GetName() == "podium-operator":
			deploy = o
		}
	}
	if np == nil || deploy == nil {
		t.Fatal("config/default has no NetworkPolicy podium-webhook or no Deployment podium-operator")
	}
	sel, _, _ := unstructured.NestedStringMap(np.Object, "spec", "podSelector", "matchLabels")
	labels, _, _ := unstructured.NestedStringMap(deploy.Object, "spec", "template", "metadata", "labels")
	for k, v := range sel {
		if labels[k] != v {
			t.Errorf("the NetworkPolicy selects %s=%s, which the operator's Pods do not carry (%v)", k, v, labels)
		}
	}
	cs, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	ports, _, _ := unstructured.NestedSlice(cs[0].(map[string]any), "ports")
	open := map[string]bool{}
	rules, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	for _, r := range rules {
		rule := r.(map[string]any)
		from, _, _ := unstructured.NestedSlice(rule, "from")
		rp, _, _ := unstructured.NestedSlice(rule, "ports")
		for _, p := range rp {
			name := fmt.Sprint(p.(map[string]any)["port"])
			if name == "webhook" {
				if len(from) == 0 {
					t.Error("the webhook port is open to every source")
				}
				for _, f := range from {
					fm := f.(map[string]any)
					if _, ok := fm["podSelector"]; ok {
						t.Errorf("the webhook port admits Pods by selector: %v", fm)
					}
					if ns, ok := fm["namespaceSelector"]; ok && fmt.Sprint(ns) != "map[matchLabels:map[kubernetes.io/metadata.name:kube-system]]" {
						t.Errorf("the webhook port admits a namespace other than kube-system: %v", ns)
					}
				}
				continue
			}
			if len(from) == 0 {
				open[name] = true
			}
		}
	}
	for _, p := range ports {
		name := fmt.Sprint(p.(map[string]any)["name"])
		if name != "webhook" && !open[name] {
			t.Errorf("port %s of the operator is closed by the NetworkPolicy", name)
		}
	}
}
