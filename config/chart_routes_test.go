package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"podium.dev/podium/internal/origin"
)

// routeCases are where each path must go behind one origin: the operator's Service podium
// for the secrets and API-key APIs, the read tier's podium-read for everything else; make
// dev's router (internal/origin) agrees (checked below).
var routeCases = map[string]string{
	"/v1/secrets":                            "podium",
	"/functions/v1/secrets":                  "podium",
	"/v1/registry-credentials":               "podium",
	"/functions/v1/registry-credentials":     "podium",
	"/v1/api-keys":                           "podium",
	"/functions/v1/api-keys":                 "podium",
	"/v1/api-key-exchange":                   "podium",
	"/functions/v1/api-key-exchange":         "podium",
	"/.well-known/jwks.json":                 "podium",
	"/v1/secrets/preflight":                  "podium-read",
	"/functions/v1/secrets/preflight":        "podium-read",
	"/v1/leaderboard-read":                   "podium-read",
	"/functions/v1/leaderboard-read":         "podium-read",
	"/v1/leaderboard-row-read":               "podium-read",
	"/v1/leaderboards/acme/ds/main/rows.csv": "podium-read",
	"/leaderboards":                          "podium-read",
	"/assets/style.css":                      "podium-read",
	"/":                                      "podium-read",
}

type route struct {
	exact   bool
	path    string
	service string
}

// pick is the service of the most specific route for path: an exact match, else the
// longest prefix (whole path elements), as Ingress and HTTPRoute both choose.
func pick(routes []route, path string) string {
	best, bestLen := "", -1
	for _, r := range routes {
		switch {
		case r.exact && r.path == path:
			return r.service
		case !r.exact && (r.path == "/" || path == r.path || strings.HasPrefix(path, strings.TrimSuffix(r.path, "/")+"/")) && len(r.path) > bestLen:
			best, bestLen = r.service, len(r.path)
		}
	}
	return best
}

func TestChartRoutesEachPathToItsWorkload(t *testing.T) {
	objs := objects(t, renderChart(t, map[string]any{
		"ingress":   map[string]any{"enabled": true, "className": "nginx", "host": "podium.example.com"},
		"httpRoute": map[string]any{"enabled": true, "parentRefs": []any{map[string]any{"name": "gw", "namespace": "gateway-system"}}},
		"read":      map[string]any{"autoscaling": map[string]any{"enabled": true}},
	}))
	byKind := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byKind[o.GetKind()+"/"+o.GetName()] = o
	}

	ing := byKind["Ingress/podium"]
	if ing == nil {
		t.Fatal("ingress.enabled renders no Ingress podium")
	}
	var ingRoutes []route
	rules, _, _ := unstructured.NestedSlice(ing.Object, "spec", "rules")
	paths, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "http", "paths")
	for _, p := range paths {
		m := p.(map[string]any)
		svc, _, _ := unstructured.NestedString(m, "backend", "service", "name")
		ingRoutes = append(ingRoutes, route{exact: m["pathType"] == "Exact", path: m["path"].(string), service: svc})
	}
	hr := byKind["HTTPRoute/podium"]
	if hr == nil {
		t.Fatal("httpRoute.enabled renders no HTTPRoute podium")
	}
	var hrRoutes []route
	hrRules, _, _ := unstructured.NestedSlice(hr.Object, "spec", "rules")
	for _, r := range hrRules {
		m := r.(map[string]any)
		refs := m["backendRefs"].([]any)
		svc := refs[0].(map[string]any)["name"].(string)
		for _, match := range m["matches"].([]any) {
			p := match.(map[string]any)["path"].(map[string]any)
			hrRoutes = append(hrRoutes, route{exact: p["type"] == "Exact", path: p["value"].(string), service: svc})
		}
	}
	for path, want := range routeCases {
		if origin.ToOperator(path) != (want == "podium") {
			t.Errorf("internal/origin sends %s elsewhere than the chart should", path)
		}
		if got := pick(ingRoutes, path); got != want {
			t.Errorf("the Ingress sends %s to %q, want %s", path, got, want)
		}
		if got := pick(hrRoutes, path); got != want {
			t.Errorf("the HTTPRoute sends %s to %q, want %s", path, got, want)
		}
	}

	hpa := byKind["HorizontalPodAutoscaler/podium-read"]
	if hpa == nil {
		t.Fatal("read.autoscaling.enabled renders no HorizontalPodAutoscaler podium-read")
	}
	if target, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "name"); target != "podium-read" {
		t.Fatalf("read.autoscaling.enabled renders no HPA of podium-read: %v", hpa)
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(byKind["Deployment/podium-read"].Object, "spec", "replicas"); has {
		t.Error("with the HPA on, the read Deployment still sets replicas (each upgrade would reset the HPA's count)")
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(byKind["Deployment/podium-operator"].Object, "spec", "replicas"); !has {
		t.Error("the operator Deployment lost its replicas")
	}

	// The Ingress and the HPA are valid objects: a real apiserver admits them (server-side
	// dry run; the Gateway API's CRDs are not part of it).
	c := start(t)
	c.run(t, "create", "namespace", "podium-system")
	file := filepath.Join(t.TempDir(), "routes.yaml")
	var b strings.Builder
	for _, o := range []*unstructured.Unstructured{ing, hpa} {
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n" + string(y))
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := c.run(t, "apply", "--server-side", "--dry-run=server", "-f", file); strings.Count(out, "serverside-applied") != 2 {
		t.Errorf("apply: %s", out)
	}

	// Off by default: nothing of the three.
	for _, o := range objects(t, renderChart(t, map[string]any{})) {
		switch o.GetKind() {
		case "Ingress", "HTTPRoute", "HorizontalPodAutoscaler":
			t.Errorf("default values render %s %s", o.GetKind(), o.GetName())
		}
	}
}
