package controllers_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"podium.dev/podium/internal/testenv"
)

// TestCRDFieldsAreExplained checks that `kubectl explain` has text for every field of
// the leaderboard kinds: each property of the generated schemas has a description.
func TestCRDFieldsAreExplained(t *testing.T) {
	for _, file := range []string{"hub.podium.dev_datasets.yaml", "hub.podium.dev_leaderboards.yaml", "hub.podium.dev_leaderboardrows.yaml"} {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", file))
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if got := crd.Spec.Names.Categories; len(got) != 1 || got[0] != "podium" {
			t.Errorf("%s: categories = %v, want [podium]", file, got)
		}
		if len(crd.Spec.Names.ShortNames) == 0 {
			t.Errorf("%s: no short names", file)
		}
		for _, v := range crd.Spec.Versions {
			var missing []string
			walk(v.Schema.OpenAPIV3Schema, crd.Spec.Names.Kind, &missing)
			sort.Strings(missing)
			for _, m := range missing {
				t.Errorf("%s: %s has no description", file, m)
			}
		}
	}
}

func walk(s *apiextensionsv1.JSONSchemaProps, path string, missing *[]string) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		// The apiserver explains an object's metadata (ObjectMeta) itself.
		objectMeta := name == "metadata" && !strings.Contains(path, ".")
		if p.Description == "" && !objectMeta {
			*missing = append(*missing, path+"."+name)
		}
		walk(&p, path+"."+name, missing)
	}
	if s.Items != nil {
		walk(s.Items.Schema, path+"[]", missing)
	}
}
