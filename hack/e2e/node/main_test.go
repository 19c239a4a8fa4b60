package main

import (
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"podium:dev":                       "docker.io/library/podium:dev",
		"podium-e2e/envsha:e2e":            "docker.io/podium-e2e/envsha:e2e",
		"registry.k8s.io/pause:podium-e2e": "registry.k8s.io/pause:podium-e2e",
		"localhost/podium:dev":             "localhost/podium:dev",
		"127.0.0.1:5000/podium:dev":        "127.0.0.1:5000/podium:dev",
		"docker.io/library/podium:dev":     "docker.io/library/podium:dev",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitRule(t *testing.T) {
	line := `-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`
	want := []string{"-A", "PREROUTING", "-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"}
	if got := splitRule(line); !slices.Equal(got, want) {
		t.Errorf("splitRule = %q, want %q", got, want)
	}
	if got := splitRule(`-A X --comment "" -j Y`); !slices.Equal(got, []string{"-A", "X", "--comment", "", "-j", "Y"}) {
		t.Errorf("an empty comment: %q", got)
	}
}
