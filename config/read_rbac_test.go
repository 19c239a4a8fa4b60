package config_test

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// The read tier's ServiceAccount (config/read), as the installer and the chart ship it.
const (
	readNamespace      = "podium-system"
	readServiceAccount = "podium-read"
)

// writeVerbs are the verbs the read tier may never hold ("*" holds them all); post, put
// and delete are their names on non-resource URLs.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate", "*", "post", "put"}

// reviews are the only things the read tier may create: who calls, what they may read.
var reviews = map[string]string{"authentication.k8s.io": "tokenreviews", "authorization.k8s.io": "subjectaccessreviews"}

// TestReadTierHoldsNoSecretNorWriteVerb reads the RBAC of dist/install.yaml and of the
// chart (default values and every overlay) and fails if any binding, to the read tier's
// ServiceAccount or to a group it is in, gives it a verb on Secrets or a write verb on
// anything but TokenReviews and SubjectAccessReviews (docs/deploy.md, "Components").
func TestReadTierHoldsNoSecretNorWriteVerb(t *testing.T) {
	data := buildInstaller(t)
	image := map[string]any{"repository": chartRepo, "tag": chartTag}
	sets := map[string][]*unstructured.Unstructured{
		"dist/install.yaml": objects(t, data),
		"the chart":         objects(t, renderChart(t, map[string]any{"image": image})),
		"the chart with both overlays": objects(t, renderChart(t, map[string]any{"image": image,
			"certManager": map[string]any{"enabled": true}, "prometheus": map[string]any{"enabled": true}})),
	}
	for name, objs := range sets {
		t.Run(name, func(t *testing.T) {
			rules := readTierRules(t, objs)
			if len(rules) == 0 {
				t.Fatalf("%s binds no role to %s/%s", name, readNamespace, readServiceAccount)
			}
			for _, v := range readTierViolations(rules) {
				t.Errorf("%s gives the read tier %s", name, v)
			}
			for _, want := range []string{"leaderboards", "leaderboardrows", "datasets", "hostedsecrets"} {
				if !grants(rules, "hub.podium.dev", want, "list") || !grants(rules, "hub.podium.dev", want, "watch") {
					t.Errorf("%s does not let the read tier list and watch %s", name, want)
				}
			}
			readDeployment(t, objs)
		})
	}
}

// The check itself fails for the grants it exists to catch.
func TestReadTierViolationsCatchSecretsAndWrites(t *testing.T) {
	for _, r := range []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"list"}},
		{APIGroups: []string{"hub.podium.dev"}, Resources: []string{"leaderboardrows"}, Verbs: []string{"patch"}},
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}},
		{NonResourceURLs: []string{"/x"}, Verbs: []string{"post"}},
	} {
		if len(readTierViolations([]rbacv1.PolicyRule{r})) == 0 {
			t.Errorf("%v passed the check", r)
		}
	}
	ok := []rbacv1.PolicyRule{
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"hub.podium.dev"}, Resources: []string{"leaderboards"}, Verbs: []string{"get", "list", "watch"}},
	}
	if v := readTierViolations(ok); len(v) != 0 {
		t.Errorf("the read tier's own rules fail the check: %v", v)
	}
}

// readTierRules are the rules of every Role and ClusterRole (aggregated ones resolved)
// bound to the read tier's ServiceAccount, or to a group it belongs to.
func readTierRules(t *testing.T, objs []*unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	clusterRoles := map[string]*rbacv1.ClusterRole{}
	roles := map[string]*rbacv1.Role{}
	var bindings []rbacv1.RoleBinding // ClusterRoleBindings too, with no namespace
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			r := &rbacv1.ClusterRole{}
			convert(t, o, r)
			clusterRoles[r.Name] = r
		case "Role":
			r := &rbacv1.Role{}
			convert(t, o, r)
			roles[r.Namespace+"/"+r.Name] = r
		case "RoleBinding", "ClusterRoleBinding":
			b := rbacv1.RoleBinding{}
			convert(t, o, &b)
			bindings = append(bindings, b)
		}
	}
	var rules []rbacv1.PolicyRule
	for _, b := range bindings {
		if !slices.ContainsFunc(b.Subjects, isReadTier) {
			continue
		}
		if b.RoleRef.Kind == "Role" {
			if r, ok := roles[b.Namespace+"/"+b.RoleRef.Name]; ok {
				rules = append(rules, r.Rules...)
			}
			continue
		}
		r, ok := clusterRoles[b.RoleRef.Name]
		if !ok {
			// A built-in ClusterRole (system:auth-delegator, view, ...): not shipped, so not
			// checkable here; the read tier needs none.
			t.Errorf("the read tier is bound to ClusterRole %s, which the install does not ship", b.RoleRef.Name)
			continue
		}
		rules = append(rules, r.Rules...)
		if r.AggregationRule != nil {
			for _, sel := range r.AggregationRule.ClusterRoleSelectors {
				s := labels.SelectorFromSet(sel.MatchLabels)
				for _, other := range clusterRoles {
					if s.Matches(labels.Set(other.Labels)) {
						rules = append(rules, other.Rules...)
					}
				}
			}
		}
	}
	return rules
}

func isReadTier(s rbacv1.Subject) bool {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		return s.Name == readServiceAccount && s.Namespace == readNamespace
	case rbacv1.GroupKind:
		return s.Name == "system:serviceaccounts" || s.Name == "system:serviceaccounts:"+readNamespace || s.Name == "system:authenticated"
	case rbacv1.UserKind:
		return s.Name == "system:serviceaccount:"+readNamespace+":"+readServiceAccount
	}
	return false
}

// readTierViolations are the grants of rules the read tier may not hold.
func readTierViolations(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, res := range r.Resources {
			base, _, _ := strings.Cut(res, "/")
			core := slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")
			if core && (base == "secrets" || base == "*") {
				out = append(out, "verbs "+strings.Join(r.Verbs, ",")+" on "+res+" (Secrets)")
			}
			for _, v := range r.Verbs {
				if !slices.Contains(writeVerbs, v) {
					continue
				}
				if v == "create" && len(r.APIGroups) == 1 && reviews[r.APIGroups[0]] == res {
					continue
				}
				out = append(out, "the write verb "+v+" on "+strings.Join(r.APIGroups, ",")+"/"+res)
			}
		}
		for _, u := range r.NonResourceURLs {
			for _, v := range r.Verbs {
				if slices.Contains(writeVerbs, v) {
					out = append(out, "the write verb "+v+" on "+u)
				}
			}
		}
	}
	return out
}

func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// readDeployment checks the read tier's Deployment runs --role=read as podium-read,
// beside a Service and a PodDisruptionBudget of its own.
func readDeployment(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	got := kinds(objs)
	for _, kind := range []string{"Deployment", "Service", "ServiceAccount", "PodDisruptionBudget", "ClusterRole", "ClusterRoleBinding"} {
		if !slices.Contains(got[kind], "podium-read") {
			t.Errorf("no %s podium-read", kind)
		}
	}
	for _, o := range objs {
		if o.GetKind() != "Deployment" || o.GetName() != "podium-read" {
			continue
		}
		sa, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(cs[0].(map[string]any), "args")
		image, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
		if sa != readServiceAccount || !slices.Contains(args, "--role=read") || image != chartRepo+":"+chartTag {
			t.Errorf("the read Deployment runs %s %v as %q", image, args, sa)
		}
	}
}

func convert(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}
