package config_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"podium.dev/podium/internal/testenv"
)

// The chart's test image: what the installer is built with in the same comparison.
const (
	chartRepo = "registry.example.com/podium/operator"
	chartTag  = "v1.2.3"
)

// renderChart is `helm template` of charts/podium with values (Helm's engine, as the
// helm binary runs it), as one YAML stream.
func renderChart(t *testing.T, values map[string]any) []byte {
	t.Helper()
	ch, err := loader.Load(filepath.Join(testenv.RepoRoot(), "charts", "podium"))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "podium", Namespace: "podium-system", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		if strings.HasSuffix(n, ".yaml") {
			b.WriteString("\n---\n" + out[n])
		}
	}
	return []byte(b.String())
}

// byKey indexes objects by kind, namespace and name, in JSON form (so that a number
// compares equal whether YAML made it an int or a float).
func byKey(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, o := range objs {
		k := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
		if _, dup := out[k]; dup {
			t.Errorf("%s twice", k)
		}
		b, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// kustomized is config/<dir> as kustomize builds it, with the operator image set as
// hack/build-installer.sh sets it.
func kustomized(t *testing.T, kubectl, dir string) []*unstructured.Unstructured {
	t.Helper()
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(testenv.RepoRoot(), "config", dir)).Output()
	if err != nil {
		t.Fatalf("kustomize config/%s: %v", dir, err)
	}
	return objects(t, []byte(strings.ReplaceAll(string(out), "image: podium:dev", "image: "+chartRepo+":"+chartTag)))
}

// buildInstaller writes dist/install.yaml's content as make build-installer does (image
// chartRepo:chartTag) into a scratch file and returns it.
func buildInstaller(t *testing.T) []byte {
	t.Helper()
	kubectl, err := testenv.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	installer := filepath.Join(t.TempDir(), "install.yaml")
	if b, err := exec.Command("bash", filepath.Join(testenv.RepoRoot(), "hack", "build-installer.sh"), kubectl, chartRepo+":"+chartTag, installer).CombinedOutput(); err != nil {
		t.Fatalf("build-installer: %v\n%s", err, b)
	}
	data, err := os.ReadFile(installer)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestChartRendersTheInstallersObjects(t *testing.T) {
	kubectl, err := testenv.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	// The installer itself, as make build-installer writes it.
	data := buildInstaller(t)
	install := objects(t, data)
	certmanager, prometheus := kustomized(t, kubectl, "certmanager"), kustomized(t, kubectl, "prometheus")
	// Both overlays: cert-manager's objects and what config/prometheus adds to default.
	both := append([]*unstructured.Unstructured(nil), certmanager...)
	inDefault := byKey(t, install)
	for _, o := range prometheus {
		if _, ok := inDefault[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()]; !ok {
			both = append(both, o)
		}
	}

	image := map[string]any{"repository": chartRepo, "tag": chartTag}
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   []*unstructured.Unstructured
	}{
		{"default values: dist/install.yaml", map[string]any{"image": image}, install},
		{"certManager.enabled: config/certmanager", map[string]any{"image": image, "certManager": map[string]any{"enabled": true}}, certmanager},
		{"prometheus.enabled: config/prometheus", map[string]any{"image": image, "prometheus": map[string]any{"enabled": true}}, prometheus},
		{"both overlays", map[string]any{"image": image, "certManager": map[string]any{"enabled": true}, "prometheus": map[string]any{"enabled": true}}, both},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := byKey(t, objects(t, renderChart(t, tc.values)))
			if diff := cmp.Diff(byKey(t, tc.want), got); diff != "" {
				t.Errorf("helm template differs from kustomize (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("replicas and image are values", func(t *testing.T) {
		got := byKey(t, objects(t, renderChart(t, map[string]any{"replicas": 3, "image": map[string]any{"repository": "example.org/p", "tag": "1"}})))
		d := got["Deployment podium-system/podium-operator"].(map[string]any)
		spec := d["spec"].(map[string]any)
		if spec["replicas"] != 3.0 {
			t.Errorf("replicas %v, want 3", spec["replicas"])
		}
		c := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		if c["image"] != "example.org/p:1" {
			t.Errorf("image %v, want example.org/p:1", c["image"])
		}
	})
}

// TestChartInstallsIntoAnAPIServer applies what the chart renders (default values) to a
// real kube-apiserver, for real: every object is admitted and stored.
func TestChartInstallsIntoAnAPIServer(t *testing.T) {
	c := start(t)
	file := filepath.Join(t.TempDir(), "chart.yaml")
	rendered := renderChart(t, map[string]any{"image": map[string]any{"repository": chartRepo, "tag": chartTag}})
	if err := os.WriteFile(file, rendered, 0o600); err != nil {
		t.Fatal(err)
	}
	objs := objects(t, rendered)
	// The test apiserver has the CRDs and admission policies already (testenv installs
	// them, with another field manager): take their fields over, as an upgrade would.
	applied := c.run(t, "apply", "--server-side", "--force-conflicts", "-f", file)
	if n := strings.Count(applied, "serverside-applied"); n != len(objs) {
		t.Errorf("%d objects applied, want %d:\n%s", n, len(objs), applied)
	}
	for _, o := range objs {
		args := []string{"get", strings.ToLower(o.GetKind()), o.GetName(), "-o", "name"}
		if o.GetNamespace() != "" {
			args = append(args, "-n", o.GetNamespace())
		}
		c.run(t, args...)
	}
}
