package controllers_test

import (
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"podium.dev/podium/internal/testenv"
)

// TestNoDefaultsInsideLists checks that no generated CRD defaults a field inside a list.
// Client-side `kubectl apply` patches a custom resource with a JSON merge patch, which
// replaces a list whole: when the apiserver has defaulted a field inside it, the list
// stored differs from the list applied on every run, so the object is reported
// "configured" each time and a GitOps tool shows drift forever (docs/gitops.md).
func TestNoDefaultsInsideLists(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs found: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, v := range crd.Spec.Versions {
			for _, p := range defaultsInLists(v.Schema.OpenAPIV3Schema, crd.Spec.Names.Kind, false) {
				t.Errorf("%s: %s has a default inside a list", filepath.Base(file), p)
			}
		}
	}
}

func defaultsInLists(s *apiextensionsv1.JSONSchemaProps, path string, inList bool) []string {
	if s == nil {
		return nil
	}
	var out []string
	if inList && s.Default != nil {
		out = append(out, path)
	}
	for name, p := range s.Properties {
		out = append(out, defaultsInLists(&p, path+"."+name, inList)...)
	}
	if s.Items != nil {
		out = append(out, defaultsInLists(s.Items.Schema, path+"[]", true)...)
	}
	return out
}
