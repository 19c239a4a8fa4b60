package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// snapshot is a board's spec and every row's spec, keyed by row id, plus their
// generations (equal only when no spec was written at all; the controller's status and
// label writes do not move them).
type snapshot struct {
	board       string
	rows        map[string]string
	generations map[string]int64
}

func snap(org, boardID string) snapshot {
	GinkgoHelper()
	lb := boardObject(org, boardID)
	j, _ := json.Marshal(lb.Spec)
	s := snapshot{board: string(j), rows: map[string]string{}, generations: map[string]int64{"board": lb.Generation}}
	var list hubv1alpha1.LeaderboardRowList
	Expect(k8s.List(ctx, &list, client.InNamespace(org))).To(Succeed())
	for _, r := range list.Items {
		j, _ := json.Marshal(r.Spec)
		s.rows[string(r.UID)] = string(j)
		s.generations[string(r.UID)] = r.Generation
	}
	return s
}

// exportForEdit exports a board (definition and all rows) and returns the files,
// decoded, for a test to edit.
func exportForEdit(home, slug string) (cfg map[string]any, rows map[string]any, cfgPath, rowsPath string) {
	GinkgoHelper()
	cfgPath, rowsPath = filepath.Join(home, "def.json"), filepath.Join(home, "rows.json")
	ok(home, "hub", "leaderboard", "export", slug, "--output", cfgPath, "--force")
	ok(home, "hub", "leaderboard", "row", "export", slug, "--all", "--output", rowsPath, "--force")
	for p, v := range map[string]*map[string]any{cfgPath: &cfg, rowsPath: &rows} {
		raw, err := os.ReadFile(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(raw, v)).To(Succeed())
	}
	return cfg, rows, cfgPath, rowsPath
}

func writeJSON(path string, v any) {
	GinkgoHelper()
	raw, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(path, raw, 0o644)).To(Succeed())
}

// bumpRewards sets every row's reward to its index + 1000, and row bad's to value.
func bumpRewards(rows map[string]any, bad int, value any) {
	for i, r := range rows["rows"].([]any) {
		m := r.(map[string]any)
		m["metrics"] = map[string]any{"reward": 1000 + i}
		if i == bad {
			m["metrics"] = map[string]any{"reward": value}
		}
	}
}

var _ = Describe("update --config --rows as one transaction", func() {
	It("writes nothing when the 300th row is invalid", func() {
		org, home := newOrg("cli-tx")
		rowsFile := write(home, "rows.yaml", rowsYAML(300, func(i int) string { return fmt.Sprint(i) }))
		b := makeBoard(org, home, "main", "--rows", rowsFile)
		slug := org + "/bench/main"
		cfg, rows, cfgPath, rowsPath := exportForEdit(home, slug)
		Expect(rows["rows"]).To(HaveLen(300))
		cfg["title"] = "Changed"
		bumpRewards(rows, 299, "not a number")
		writeJSON(cfgPath, cfg)
		writeJSON(rowsPath, rows)

		before := snap(org, b.ID)
		r := podium(home, "hub", "leaderboard", "update", slug, "--config", cfgPath, "--rows", rowsPath, "--json")
		Expect(r.code).To(Equal(1))
		var env struct {
			Error struct {
				Code    string
				Message string
				Details struct {
					InvalidRowCount int `json:"invalid_row_count"`
					InvalidRows     []struct {
						Index  int
						Fields []struct{ Field string }
					} `json:"invalid_rows"`
				}
			}
		}
		Expect(json.Unmarshal([]byte(r.err), &env)).To(Succeed(), r.err)
		Expect(env.Error.Code).To(Equal("rows_invalid"))
		Expect(env.Error.Details.InvalidRowCount).To(Equal(1))
		Expect(env.Error.Details.InvalidRows[0].Index).To(Equal(299))
		Expect(env.Error.Details.InvalidRows[0].Fields[0].Field).To(Equal("metrics.reward"))
		Expect(snap(org, b.ID)).To(Equal(before))

		// Fixed, the same files apply as one transaction: 300 rows and the definition.
		bumpRewards(rows, 299, 5000)
		writeJSON(rowsPath, rows)
		out := ok(home, "hub", "leaderboard", "update", slug, "--config", cfgPath, "--rows", rowsPath)
		Expect(out).To(ContainSubstring("300 rows updated"))
		after := snap(org, b.ID)
		Expect(show(home, slug).Title).To(Equal("Changed"))
		changed := 0
		for id, spec := range after.rows {
			if spec != before.rows[id] {
				changed++
			}
		}
		Expect(changed).To(Equal(300))
	})

	It("restores what was written when a write fails after validation", func() {
		org, home := newOrg("cli-rollback")
		rowsFile := write(home, "rows.yaml", rowsYAML(60, func(i int) string { return fmt.Sprint(100 + i) }))
		b := makeBoard(org, home, "main", "--rows", rowsFile)
		slug := org + "/bench/main"

		// An admission policy that lets dry-runs through but refuses the real write of a
		// row whose reward is 13: validation passes, a write fails mid-transaction.
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "refuse-13-" + org},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": org}},
					ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
						RuleWithOperations: admissionregistrationv1.RuleWithOperations{
							Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
							Rule:       admissionregistrationv1.Rule{APIGroups: []string{"hub.podium.dev"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"leaderboardrows"}},
						},
					}},
				},
				Validations: []admissionregistrationv1.Validation{{
					Expression: "request.dryRun || !has(object.spec.metrics) || !has(object.spec.metrics.reward) || string(object.spec.metrics.reward) != '13'",
					Message:    "reward 13 is refused",
				}},
			},
		}
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: policy.Name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			},
		}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		Expect(k8s.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func() {
			_ = k8s.Delete(context.Background(), binding)
			_ = k8s.Delete(context.Background(), policy)
		})
		// Wait until the policy is in force.
		probe := &hubv1alpha1.LeaderboardRow{Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "probe", Metrics: &apiextensionsv1.JSON{Raw: []byte(`{"reward":13}`)}}}
		probe.Namespace, probe.GenerateName = org, "probe-"
		Eventually(func() error {
			p := probe.DeepCopy()
			err := k8s.Create(ctx, p)
			if err == nil {
				_ = k8s.Delete(ctx, p)
				return fmt.Errorf("the policy is not in force yet")
			}
			return nil
		}).Should(Succeed())

		cfg, rows, cfgPath, rowsPath := exportForEdit(home, slug)
		cfg["title"] = "Changed"
		cfg["rank_by"] = []any{map[string]any{"accessor": "metrics.reward", "direction": "asc"}}
		bumpRewards(rows, 45, 13)
		rows["rows"] = append(rows["rows"].([]any), map[string]any{"metadata": map[string]any{"agent": "new"}})
		writeJSON(cfgPath, cfg)
		writeJSON(rowsPath, rows)
		before := snap(org, b.ID)

		// --dry-run prints the change and writes nothing; it needs both parts.
		Expect(podium(home, "hub", "leaderboard", "update", slug, "--rows", rowsPath, "--dry-run").code).To(Equal(2))
		Expect(podium(home, "hub", "leaderboard", "update", slug, "--config", cfgPath, "--dry-run").code).To(Equal(2))
		out := ok(home, "hub", "leaderboard", "update", slug, "--config", cfgPath, "--rows", rowsPath, "--dry-run")
		Expect(out).To(And(ContainSubstring("Dry run"), ContainSubstring("title"), ContainSubstring("rank_by"), ContainSubstring("rows[60]: new row"), ContainSubstring("60 rows updated")))
		Expect(snap(org, b.ID)).To(Equal(before))

		r := podium(home, "hub", "leaderboard", "update", slug, "--config", cfgPath, "--rows", rowsPath)
		Expect(r.code).To(Equal(1), r.String())
		Expect(r.err).To(And(ContainSubstring("reward 13 is refused"), ContainSubstring("restored")))
		after := snap(org, b.ID)
		Expect(after.board).To(Equal(before.board))
		Expect(after.rows).To(Equal(before.rows))
		Expect(show(home, slug).Title).To(Equal("Board main"))
	})
})

func ptr[T any](v T) *T { return &v }
