package secrets

import (
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestShippedRolesHoldManageOthers: the operator's generated role and the org owner's
// role hold the verb the ownership admission policy asks for; a member's does not. The
// envtest suites run the operator as a cluster admin, so only this test sees a role
// that lost the verb (every HTTP store would then be refused in a real cluster).
func TestShippedRolesHoldManageOthers(t *testing.T) {
	verbsOf := func(file, role string) []string {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			var r rbacv1.ClusterRole
			if err := yaml.Unmarshal([]byte(doc), &r); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if r.Name != role {
				continue
			}
			var verbs []string
			for _, rule := range r.Rules {
				if slices.Contains(rule.Resources, "hostedsecrets") && slices.Contains(rule.APIGroups, "hub.podium.dev") {
					verbs = append(verbs, rule.Verbs...)
				}
			}
			return verbs
		}
		t.Fatalf("%s: no ClusterRole %s", file, role)
		return nil
	}
	for _, tc := range []struct {
		file, role string
		want       bool
	}{
		{"../../config/rbac/role.yaml", "podium-operator", true},
		{"../../config/rbac/org_roles.yaml", "podium-org-owner", true},
		{"../../config/rbac/org_roles.yaml", "podium-org-member", false},
		{"../../config/rbac/org_roles.yaml", "podium-viewer", false},
	} {
		if got := slices.Contains(verbsOf(tc.file, tc.role), VerbManageOthers); got != tc.want {
			t.Errorf("%s holds %s: %v, want %v", tc.role, VerbManageOthers, got, tc.want)
		}
	}
}
