package admissiongen

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// policy is what a test reads of a generated ValidatingAdmissionPolicy or webhook:
// its resources and every CEL expression, by the name of its condition or variable.
type policy struct {
	resources   []string
	expressions map[string]string
}

// parsed reads the policies and webhooks of the rendered outputs, by name.
func parsed(t *testing.T, out map[string][]byte) map[string]policy {
	t.Helper()
	ps := map[string]policy{}
	for path, b := range out {
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var meta struct{ Kind string }
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			switch meta.Kind {
			case "ValidatingAdmissionPolicy":
				var vap admissionregistrationv1.ValidatingAdmissionPolicy
				if err := yaml.UnmarshalStrict([]byte(doc), &vap); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				ps[vap.Name] = fromPolicy(vap.Spec)
			case "MutatingWebhookConfiguration":
				var mwc admissionregistrationv1.MutatingWebhookConfiguration
				if err := yaml.UnmarshalStrict([]byte(doc), &mwc); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				for _, w := range mwc.Webhooks {
					p := policy{expressions: map[string]string{}}
					for _, r := range w.Rules {
						p.resources = append(p.resources, r.Resources...)
					}
					for _, mc := range w.MatchConditions {
						p.expressions[mc.Name] = mc.Expression
					}
					ps[w.Name] = p
				}
			}
		}
	}
	return ps
}

func fromPolicy(spec admissionregistrationv1.ValidatingAdmissionPolicySpec) policy {
	p := policy{expressions: map[string]string{}}
	for _, r := range spec.MatchConstraints.ResourceRules {
		p.resources = append(p.resources, r.Resources...)
	}
	for _, mc := range spec.MatchConditions {
		p.expressions[mc.Name] = mc.Expression
	}
	for _, v := range spec.Variables {
		p.expressions["variables."+v.Name] = v.Expression
	}
	for i, v := range spec.Validations {
		p.expressions["validation "+string(rune('0'+i))] = v.Expression
		p.expressions["message "+string(rune('0'+i))] = v.MessageExpression
	}
	return p
}

// TestExpressionsParse: every generated expression is CEL.
func TestExpressionsParse(t *testing.T) {
	out, err := Render(Kinds)
	if err != nil {
		t.Fatal(err)
	}
	env, err := cel.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	ps := parsed(t, out)
	for _, name := range []string{"podium-run-isolation", "podium-run-integrity", "podium-controller-revisions", "podium-run-identity-elsewhere", "runs.delivery.hub.podium.dev"} {
		if _, ok := ps[name]; !ok {
			t.Errorf("no policy or webhook %s", name)
		}
	}
	for name, p := range ps {
		for what, e := range p.expressions {
			if e == "" {
				continue
			}
			if _, iss := env.Parse(e); iss.Err() != nil {
				t.Errorf("%s %s: %v", name, what, iss.Err())
			}
		}
	}
}

// TestAddingAKindChangesEveryPolicy: one line in the table of kinds reaches every run
// policy and the delivery webhook: their resources and every expression that finds the
// pod spec, the template metadata or what runs.
func TestAddingAKindChangesEveryPolicy(t *testing.T) {
	kinds := append(slices.Clone(Kinds), Kind{
		Group: "example.podium.dev", Resource: "fakeruns", Kind: "FakeRun", Runs: "spec.runTemplate",
		Spec: "spec.runTemplate.podSpec", Metas: []string{"spec.runTemplate.metadata"}, Required: "spec",
	})
	out, err := Render(kinds)
	if err != nil {
		t.Fatal(err)
	}
	ps := parsed(t, out)
	for name, want := range map[string]map[string][]string{
		"podium-run-isolation": {
			"names-a-secret-or-runs-as-another-user": {"'fakeruns'", "object.spec.runTemplate.podSpec", "oldObject.spec.runTemplate"},
			"variables.specs":                        {"'fakeruns'", "o.spec.runTemplate.podSpec"},
			"variables.what":                         {"'fakeruns'", "'FakeRun'"},
			"variables.runsAsAnotherUser":            {"'fakeruns'", "object.spec.runTemplate.podSpec", "oldObject.spec.runTemplate"},
		},
		"podium-run-integrity": {
			"about-a-delivered-run": {"'fakeruns'", "oldObject.spec.runTemplate.metadata"},
			"variables.oldGuarded":  {"'fakeruns'", "oldObject.spec.runTemplate"},
			"variables.newGuarded":  {"'fakeruns'", "object.spec.runTemplate"},
			"variables.oldMetas":    {"'fakeruns'", "oldObject.spec.runTemplate.metadata"},
			"variables.what":        {"'fakeruns'", "'change its spec.runTemplate'"},
		},
		"podium-run-identity-elsewhere": {
			"changes-what-runs": {"'fakeruns'", "oldObject.spec.runTemplate"},
			"variables.specs":   {"'fakeruns'", "object.spec.runTemplate.podSpec"},
		},
		"runs.delivery.hub.podium.dev": {
			"about-delivery": {"'fakeruns'", "o.spec.runTemplate.metadata", "o.spec.runTemplate.podSpec"},
		},
	} {
		p := ps[name]
		if !slices.Contains(p.resources, "fakeruns") {
			t.Errorf("%s does not match fakeruns: %v", name, p.resources)
		}
		for what, subs := range want {
			for _, s := range subs {
				if !strings.Contains(p.expressions[what], s) {
					t.Errorf("%s %s does not mention %s", name, what, s)
				}
			}
		}
	}
	before, err := Render(Kinds)
	if err != nil {
		t.Fatal(err)
	}
	for path := range Outputs {
		if string(before[path]) == string(out[path]) {
			t.Errorf("%s did not change", path)
		}
	}
}
