package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// envelope is the --json error on stderr.
type envelope struct {
	Error struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

func failJSON(home string, args ...string) envelope {
	GinkgoHelper()
	r := podium(home, append(args, "--json")...)
	Expect(r.code).To(Equal(1), r.String())
	var e envelope
	Expect(json.Unmarshal([]byte(r.err), &e)).To(Succeed(), r.err)
	return e
}

func rowCount(org string) int {
	GinkgoHelper()
	var list hubv1alpha1.LeaderboardRowList
	Expect(k8s.List(ctx, &list, client.InNamespace(org))).To(Succeed())
	return len(list.Items)
}

// denyRowDeletes puts in force an admission policy refusing deletes of the org's rows
// labelled test.podium.dev/protect; with realOnly, server-side dry-runs pass.
func denyRowDeletes(org string, realOnly bool) {
	GinkgoHelper()
	expr := "!has(oldObject.metadata.labels) || !('test.podium.dev/protect' in oldObject.metadata.labels)"
	if realOnly {
		expr = "request.dryRun || " + expr
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("protect-%v-%s", realOnly, org)},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": org}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{"hub.podium.dev"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"leaderboardrows"}},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: expr, Message: "this row is protected"}},
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
	// In force once a protected probe row cannot be deleted (a probe deleted before
	// is replaced).
	var probe *hubv1alpha1.LeaderboardRow
	Eventually(func() error {
		if probe == nil {
			probe = &hubv1alpha1.LeaderboardRow{Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "probe"}}
			probe.Namespace, probe.GenerateName = org, "probe-"
			probe.Labels = map[string]string{"test.podium.dev/protect": "yes"}
			if err := k8s.Create(ctx, probe); err != nil {
				probe = nil
				return err
			}
		}
		if err := k8s.Delete(ctx, probe); err == nil {
			probe = nil
			return fmt.Errorf("the policy is not in force yet")
		}
		return nil
	}).Should(Succeed())
	// The probe goes with the namespace, after the policies (cleanups run
	// last-registered first).
}

func protect(org, id string) {
	GinkgoHelper()
	Eventually(func() error {
		var list hubv1alpha1.LeaderboardRowList
		if err := k8s.List(ctx, &list, client.InNamespace(org), client.MatchingFields{"status.id": id}); err != nil || len(list.Items) != 1 {
			return fmt.Errorf("row %s: %w", id, err)
		}
		r := list.Items[0]
		r.Labels["test.podium.dev/protect"] = "yes"
		return k8s.Update(ctx, &r)
	}).Should(Succeed())
}

var _ = Describe("CLI wording and usage", func() {
	It("counts in the singular, suggests commands, names every missing flag, refuses --page 0", func() {
		org, home := newOrg("cli-words")
		// A mistyped command gets a suggestion (exit 2).
		for args, want := range map[string]string{
			"hub leaderboard lsit":           `did you mean "list"`,
			"hub leaderbord list":            `did you mean "leaderboard"`,
			"hub leaderboard row craete x":   `did you mean "create"`,
			"hub leaderboard row trial sett": `did you mean "set"`,
		} {
			r := podium(home, strings.Fields(args)...)
			Expect(r.code).To(Equal(2), args)
			Expect(r.err).To(ContainSubstring(want), args)
		}
		// init names every missing flag, not only the first.
		r := podium(home, "hub", "leaderboard", "init")
		Expect(r.code).To(Equal(2))
		Expect(r.err).To(ContainSubstring("--package, --name, --title and --output are required"))
		r = podium(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--title", "T")
		Expect(r.code).To(Equal(2))
		Expect(r.err).To(ContainSubstring("--name and --output are required"))
		// --page starts at 1: 0 is refused like -3, for every list.
		for _, args := range [][]string{
			{"hub", "leaderboard", "row", "list", org + "/bench/x", "--page", "0"},
			{"hub", "leaderboard", "row", "list", org + "/bench/x", "--page", "-3"},
			{"hub", "leaderboard", "row", "trial", "list", trialA, "--page", "0"},
			{"hub", "leaderboard", "list", "--page", "0"},
			{"hub", "leaderboard", "show", org + "/bench/x", "--page", "0"},
		} {
			r := podium(home, args...)
			Expect(r.code).To(Equal(2), "%v", args)
			Expect(r.err).To(ContainSubstring("--page starts at 1"), "%v", args)
		}

		// One of everything: "1 row", "1 trial".
		cfgFile := filepath.Join(home, "lb.yaml")
		ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "main", "--title", "Main", "--output", cfgFile)
		out := ok(home, "hub", "leaderboard", "create", "--config", cfgFile, "--rows", write(home, "one.yaml", rowsYAML(1, func(int) string { return "1" })))
		Expect(out).To(HaveSuffix(" with 1 row\n"))
		slug := org + "/bench/main"
		id := lines(ok(home, "hub", "leaderboard", "row", "list", slug, "--quiet"))[0]
		Expect(ok(home, "hub", "leaderboard", "row", "export", slug, "--all", "--output", filepath.Join(home, "all.yaml"))).To(HavePrefix("Exported 1 row to "))
		Expect(ok(home, "hub", "leaderboard", "row", "trial", "set", id, "--trial-id", trialA)).To(HaveSuffix(" now links 1 trial\n"))
		Expect(ok(home, "hub", "leaderboard", "row", "delete", id, "--yes")).To(Equal("Deleted 1 row\n"))

		// Creating a board that exists is a conflict, not a validation failure.
		before := show(home, slug)
		e := failJSON(home, "hub", "leaderboard", "create", "--config", cfgFile, "--title", "Another")
		Expect(e.Error.Code).To(Equal("conflict"))
		Expect(e.Error.Message).To(And(ContainSubstring(slug+" already exists"), ContainSubstring(before.ID)))
		Expect(show(home, slug).Title).To(Equal("Main"))
	})
})

var _ = Describe("row requests", func() {
	It("create --rows takes 1 to 500 rows; row create checks the file's board", func() {
		org, home := newOrg("cli-rowfile")
		cfgFile := filepath.Join(home, "lb.yaml")
		ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "main", "--title", "Main", "--output", cfgFile)
		for name, content := range map[string]string{"empty.yaml": "rows: []\n", "many.yaml": rowsYAML(501, func(int) string { return "1" })} {
			e := failJSON(home, "hub", "leaderboard", "create", "--config", cfgFile, "--rows", write(home, name, content))
			Expect(e.Error.Code).To(Equal("bad_request"), name)
			Expect(e.Error.Message).To(ContainSubstring("rows: "), name)
			Expect(e.Error.Message).To(ContainSubstring("1 to 500 rows"), name)
		}
		var boards hubv1alpha1.LeaderboardList
		Expect(k8s.List(ctx, &boards, client.InNamespace(org))).To(Succeed())
		Expect(boards.Items).To(BeEmpty())
		ok(home, "hub", "leaderboard", "create", "--config", cfgFile, "--rows", write(home, "max.yaml", rowsYAML(500, func(int) string { return "1" })))
		Expect(rowCount(org)).To(Equal(500))

		// A rows file exported from another board is refused by row create.
		other := makeBoard(org, home, "other")
		mainBoard := show(home, org+"/bench/main")
		for field, file := range map[string]string{
			"leaderboard_id": "leaderboard_id: " + other.ID + "\nrows:\n  - metadata: {agent: x}\n",
			"name":           "name: other\nrows:\n  - metadata: {agent: x}\n",
			"package":        "package: " + org + "/elsewhere\nrows:\n  - metadata: {agent: x}\n",
		} {
			e := failJSON(home, "hub", "leaderboard", "row", "create", mainBoard.ID, "--config", write(home, field+".yaml", file))
			Expect(e.Error.Code).To(Equal("bad_request"), field)
			Expect(e.Error.Message).To(HavePrefix(field+": the rows file is for"), field)
		}
		Expect(rowCount(org)).To(Equal(500))
		// The board's own identity is accepted.
		ok(home, "hub", "leaderboard", "row", "create", mainBoard.ID, "--config",
			write(home, "own.yaml", "leaderboard_id: "+mainBoard.ID+"\npackage: "+org+"/bench\nname: main\nrows:\n  - metadata: {agent: x}\n"))
		Expect(rowCount(org)).To(Equal(501))
	})

	It("row delete de-duplicates ids and deletes all or nothing", func() {
		org, home := newOrg("cli-delete")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		ids := lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", write(home, "r.yaml", rowsYAML(5, func(int) string { return "1" })), "--quiet"))
		Expect(ok(home, "hub", "leaderboard", "row", "delete", ids[0], ids[0], strings.ToUpper(ids[0]), "--yes")).To(Equal("Deleted 1 row\n"))
		Expect(rowCount(org)).To(Equal(4))

		// A row that may not be deleted: the server-side dry-run refuses it, nothing
		// is deleted.
		denyRowDeletes(org, false)
		protect(org, ids[2])
		e := failJSON(home, "hub", "leaderboard", "row", "delete", ids[1], ids[2], ids[3], "--yes")
		Expect(e.Error.Message).To(And(ContainSubstring("this row is protected"), ContainSubstring("nothing was deleted")))
		Expect(rowCount(org)).To(Equal(5)) // 4 rows and the policy's probe
	})

	It("row delete reports exactly which rows were deleted when a delete fails midway", func() {
		org, home := newOrg("cli-delete-midway")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		ids := lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", write(home, "r.yaml", rowsYAML(6, func(int) string { return "1" })), "--quiet"))
		// Dry-runs pass, the real delete of one row fails.
		denyRowDeletes(org, true)
		protect(org, ids[3])
		e := failJSON(home, "hub", "leaderboard", "row", "delete", ids[0], ids[1], ids[2], ids[3], ids[4], "--yes")
		Expect(e.Error.Message).To(ContainSubstring("this row is protected"))
		var d struct {
			Deleted    []string `json:"deleted"`
			NotDeleted []string `json:"not_deleted"`
		}
		Expect(json.Unmarshal(e.Error.Details, &d)).To(Succeed(), string(e.Error.Details))
		Expect(d.NotDeleted).To(ContainElement(ids[3]))
		Expect(append(append([]string{}, d.Deleted...), d.NotDeleted...)).To(ConsistOf(ids[:5]))
		// What the error says is what happened.
		for _, id := range d.Deleted {
			Expect(podium(home, "hub", "leaderboard", "row", "show", id).code).To(Equal(1), id)
			Expect(e.Error.Message).To(ContainSubstring(id))
		}
		for _, id := range d.NotDeleted {
			ok(home, "hub", "leaderboard", "row", "show", id)
		}
		ok(home, "hub", "leaderboard", "row", "show", ids[5])
	})

	It("refuses a trial id given twice", func() {
		org, home := newOrg("cli-trialdup")
		makeBoard(org, home, "main")
		id := lines(ok(home, "hub", "leaderboard", "row", "create", org+"/bench/main", "--config", write(home, "r.yaml", rowsYAML(1, func(int) string { return "1" })), "--quiet"))[0]
		for _, verb := range []string{"set", "add", "remove"} {
			r := podium(home, "hub", "leaderboard", "row", "trial", verb, id, "--trial-id", trialA, "--trial-id", strings.ToUpper(trialA))
			Expect(r.code).To(Equal(2), verb)
			Expect(r.err).To(ContainSubstring("--trial-id " + strings.ToUpper(trialA) + " is given twice"))
		}
		file := write(home, "t.yaml", "trial_ids:\n  - "+trialA+"\n  - "+trialB+"\n  - "+trialA+"\n")
		r := podium(home, "hub", "leaderboard", "row", "trial", "set", id, "--trial-ids-file", file)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(And(ContainSubstring("t.yaml:4"), ContainSubstring("trial_ids[2]"), ContainSubstring("given twice")))
		Expect(lines(ok(home, "hub", "leaderboard", "row", "trial", "list", id, "--quiet"))).To(BeEmpty())
	})
})

// page is the one --json shape of lists.
type page struct {
	Items      []map[string]any `json:"items"`
	Pagination struct {
		Total      *int `json:"total"`
		Page       *int `json:"page"`
		PageSize   *int `json:"page_size"`
		TotalPages *int `json:"total_pages"`
	} `json:"pagination"`
}

func listJSON(home string, args ...string) page {
	GinkgoHelper()
	out := ok(home, append(args, "--json")...)
	var raw map[string]json.RawMessage
	Expect(json.Unmarshal([]byte(out), &raw)).To(Succeed(), out)
	Expect(raw).To(HaveLen(2), out) // items and pagination, nothing else
	var p page
	Expect(json.Unmarshal([]byte(out), &p)).To(Succeed())
	Expect(p.Items).NotTo(BeNil(), out)
	Expect([]*int{p.Pagination.Total, p.Pagination.Page, p.Pagination.PageSize, p.Pagination.TotalPages}).NotTo(ContainElement(BeNil()), out)
	return p
}

var _ = Describe("lists", func() {
	It("print one shape, answer to ls, and show when each trial was linked", func() {
		org, home := newOrg("cli-lists")
		makeBoard(org, home, "a")
		makeBoard(org, home, "b")
		slug := org + "/bench/a"
		ids := lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", write(home, "r.yaml", rowsYAML(3, func(i int) string { return fmt.Sprint(i) })), "--quiet"))

		boards := listJSON(home, "hub", "leaderboard", "ls", org+"/bench", "--limit", "1", "--page", "2")
		Expect(boards.Items).To(HaveLen(1))
		Expect(boards.Items[0]).To(HaveKeyWithValue("name", "b"))
		Expect(*boards.Pagination.Total).To(Equal(2))
		Expect(*boards.Pagination.TotalPages).To(Equal(2))
		rows := listJSON(home, "hub", "leaderboard", "row", "ls", slug)
		Expect(rows.Items).To(HaveLen(3))
		Expect(*rows.Pagination.Total).To(Equal(3))
		Expect(ok(home, "hub", "leaderboard", "ls", org+"/bench", "--quiet")).To(Equal(org + "/bench/a\n" + org + "/bench/b\n"))

		ok(home, "hub", "leaderboard", "row", "trial", "set", ids[0], "--trial-id", trialA)
		var first time.Time
		Eventually(func(g Gomega) {
			t := listJSON(home, "hub", "leaderboard", "row", "trial", "ls", ids[0])
			g.Expect(t.Items).To(HaveLen(1))
			g.Expect(t.Items[0]).To(HaveKeyWithValue("trial_id", trialA))
			at, ok := t.Items[0]["linked_at"].(string)
			g.Expect(ok).To(BeTrue(), "linked_at: %v", t.Items[0]["linked_at"])
			var err error
			first, err = time.Parse(time.RFC3339, at)
			g.Expect(err).NotTo(HaveOccurred())
		}).Should(Succeed())
		time.Sleep(1100 * time.Millisecond) // times are to the second
		ok(home, "hub", "leaderboard", "row", "trial", "add", ids[0], "--trial-id", trialB)
		Eventually(func(g Gomega) {
			t := listJSON(home, "hub", "leaderboard", "row", "trial", "list", ids[0])
			g.Expect(t.Items).To(HaveLen(2))
			g.Expect(t.Items[0]).To(HaveKeyWithValue("linked_at", first.UTC().Format(time.RFC3339)))
			g.Expect(t.Items[1]).To(HaveKeyWithValue("trial_id", trialB))
			at, ok := t.Items[1]["linked_at"].(string)
			g.Expect(ok).To(BeTrue())
			second, err := time.Parse(time.RFC3339, at)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(second).To(BeTemporally(">", first))
		}).Should(Succeed())
		table := ok(home, "hub", "leaderboard", "row", "trial", "list", ids[0])
		Expect(table).To(And(HavePrefix("TRIAL ID"), ContainSubstring("LINKED"), ContainSubstring(first.UTC().Format(time.RFC3339))))
	})
})

var _ = Describe("update --config with a partial file", func() {
	It("changes only the keys the file holds; null and [] are changes", func() {
		org, home := newOrg("cli-partial")
		makeBoard(org, home, "main", "--visibility", "public")
		slug := org + "/bench/main"
		ok(home, "hub", "leaderboard", "update", slug, "--description", "About")
		before := boardObject(org, show(home, slug).ID).Spec

		partial := write(home, "partial.yaml", "title: Retitled\nmetrics_schema:\n  type: object\n  properties:\n    reward: {type: [number, \"null\"]}\n    cost: {type: number}\n")
		ok(home, "hub", "leaderboard", "update", slug, "--config", partial)
		after := boardObject(org, show(home, slug).ID).Spec
		Expect(after.Title).To(Equal("Retitled"))
		Expect(string(after.MetricsSchema.Raw)).To(ContainSubstring("cost"))
		// Everything the file does not hold is as it was.
		after.Title, after.MetricsSchema = before.Title, before.MetricsSchema
		Expect(after).To(Equal(before))

		// Keys holding null or [] empty the field.
		ok(home, "hub", "leaderboard", "update", slug, "--config", write(home, "empty.yaml", "description: null\ncolumns: []\nrank_by: []\n"))
		emptied := boardObject(org, show(home, slug).ID).Spec
		Expect(emptied.Description).To(BeNil())
		Expect(emptied.Columns).To(BeEmpty())
		Expect(emptied.RankBy).To(BeEmpty())
		Expect(emptied.MetadataSchema).To(Equal(before.MetadataSchema))
		Expect(string(emptied.Visibility)).To(Equal("public"))
		// A title cannot be removed.
		e := failJSON(home, "hub", "leaderboard", "update", slug, "--config", write(home, "notitle.yaml", "title: null\n"))
		Expect(e.Error.Message).To(HavePrefix("title: "))

		// An exported file holds every key: export, edit, update replaces the whole
		// definition.
		exp := filepath.Join(home, "exp.yaml")
		ok(home, "hub", "leaderboard", "export", slug, "--output", exp)
		raw, err := os.ReadFile(exp)
		Expect(err).NotTo(HaveOccurred())
		for _, k := range []string{"description:", "visibility:", "metadata_schema:", "metrics_schema:", "columns:", "rank_by:"} {
			Expect(string(raw)).To(ContainSubstring("\n"+k), k)
		}
		editYAML(exp, func(m map[string]any) {
			m["metadata_schema"] = map[string]any{}
			m["visibility"] = "private"
		})
		ok(home, "hub", "leaderboard", "update", slug, "--config", exp)
		final := boardObject(org, show(home, slug).ID).Spec
		Expect(final.MetadataSchema).NotTo(BeNil())
		Expect(string(final.MetadataSchema.Raw)).To(MatchJSON("{}"))
		Expect(string(final.Visibility)).To(Equal("private"))
		Expect(final.Title).To(Equal("Retitled"))
	})
})

var _ = Describe("show", func() {
	It("prints the ranked rows as a table, and the read's payload with --json", func() {
		org, home := newOrg("cli-show")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		ids := lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", write(home, "r.yaml", rowsYAML(3, func(i int) string { return []string{"1", "3", "2"}[i] })), "--quiet"))
		ok(home, "hub", "leaderboard", "row", "update", ids[2], "--status", "hide")
		var p struct {
			Leaderboard map[string]any
			Rows        []rowJSON
			Pagination  struct {
				Total      int `json:"total"`
				TotalPages int `json:"total_pages"`
			}
		}
		Eventually(func(g Gomega) {
			out := ok(home, "hub", "leaderboard", "show", slug, "--json")
			g.Expect(json.Unmarshal([]byte(out), &p)).To(Succeed())
			g.Expect(p.Rows).To(HaveLen(2))
		}).Should(Succeed())
		Expect(p.Leaderboard).To(And(HaveKeyWithValue("name", "main"), HaveKey("columns"), HaveKey("rank_by")))
		Expect(p.Rows[0].ID).To(Equal(ids[1]))
		Expect(*p.Rows[0].Rank).To(Equal(1))
		Expect(p.Rows[0].CreatedBy).To(HaveValue(Equal("podium-admin"))) // as the read serves it to members
		Expect(p.Rows[1].ID).To(Equal(ids[0]))
		Expect(p.Pagination.Total).To(Equal(2))
		Expect(p.Pagination.TotalPages).To(Equal(1))

		out := ok(home, "hub", "leaderboard", "show", slug)
		tableAt := strings.Index(out, "RANK")
		Expect(tableAt).To(BeNumerically(">", 0), out)
		table := strings.Split(strings.TrimSpace(out[tableAt:]), "\n")
		Expect(strings.Fields(table[0])).To(Equal([]string{"RANK", "Agent", "Reward", "STATUS"}))
		Expect(table[1:]).To(HaveLen(2))
		Expect(strings.Fields(table[1])).To(Equal([]string{"1", "agent-1", "3", "display"}))
		Expect(strings.Fields(table[2])).To(Equal([]string{"2", "agent-0", "1", "display"}))
		Expect(out).NotTo(ContainSubstring("agent-2"))
	})
})

var _ = Describe("create from flags", func() {
	It("creates from flags alone, or from a file with flags overriding it", func() {
		org, home := newOrg("cli-flagcreate")
		ok(home, "hub", "leaderboard", "create", "-p", org+"/bench", "-n", "flags", "-t", "From flags", "-d", "Made with flags",
			"--dataset-version-ref", "1.0", "--visibility", "public", "--rows", write(home, "r.yaml", "rows:\n  - metrics: {reward: 1}\n"))
		slug := org + "/bench/flags"
		b := show(home, slug)
		Expect(b.Title).To(Equal("From flags"))
		Expect(*b.Description).To(Equal("Made with flags"))
		Expect(b.Visibility).To(Equal("public"))
		Eventually(func() []string { return show(home, slug).DatasetVersionIDs }).Should(Equal([]string{"11111111-1111-4111-8111-111111111111"}))
		Expect(rowCount(org)).To(Equal(1))

		cfgFile := filepath.Join(home, "lb.yaml")
		ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "from_file", "--title", "File title", "--output", cfgFile)
		ok(home, "hub", "leaderboard", "create", "--config", cfgFile, "--name", "overridden", "--title", "Flag title", "--dataset-version-id", "22222222-2222-4222-8222-222222222222")
		o := show(home, org+"/bench/overridden")
		Expect(o.Title).To(Equal("Flag title"))
		Expect(boardObject(org, o.ID).Spec.Columns).To(HaveLen(2)) // the rest from the file
		Eventually(func() []string { return show(home, org+"/bench/overridden").DatasetVersionIDs }).Should(Equal([]string{"22222222-2222-4222-8222-222222222222"}))

		// Missing fields are named, all of them.
		r := podium(home, "hub", "leaderboard", "create", "-n", "x")
		Expect(r.code).To(Equal(2))
		Expect(r.err).To(ContainSubstring("--package and --title are required"))
		e := failJSON(home, "hub", "leaderboard", "create", "--config", write(home, "notitle.yaml", "package: "+org+"/bench\n"))
		Expect(e.Error.Message).To(ContainSubstring("name and title are required"))
		Expect(podium(home, "hub", "leaderboard", "create", "-p", org+"/bench", "-n", "y", "-t", "Y", "--dataset-version-id", "nope").code).To(Equal(2))
	})
})

var _ = Describe("a definition change that would leave rows invalid", func() {
	It("is refused by the CLI unless the same update fixes the rows, and reported on the board for kubectl", func() {
		org, home := newOrg("cli-invalidating")
		b := makeBoard(org, home, "main")
		slug := org + "/bench/main"
		ids := lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", write(home, "r.yaml", rowsYAML(3, func(i int) string { return []string{"1", "null", "3"}[i] })), "--quiet"))
		// A row that is invalid already, written with kubectl (the CLI refuses it).
		board := boardObject(org, b.ID)
		bad := &hubv1alpha1.LeaderboardRow{Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: board.Name,
			Metadata: &apiextensionsv1.JSON{Raw: []byte(`{"agent":"k"}`)}, Metrics: &apiextensionsv1.JSON{Raw: []byte(`{"reward":"high"}`)}}}
		bad.Namespace, bad.GenerateName = org, board.Name+"-"
		Expect(k8s.Create(ctx, bad)).To(Succeed())
		Eventually(func(g Gomega) {
			l := listRows(home, slug)
			g.Expect(l.Rows).To(HaveLen(4))
			for _, r := range l.Rows {
				g.Expect(r.Valid).NotTo(BeNil())
			}
		}).Should(Succeed())
		before := snap(org, b.ID)

		// reward may no longer be null: the row holding null would become invalid.
		tight := write(home, "tight.yaml", "metrics_schema:\n  type: object\n  properties:\n    reward: {type: number}\n")
		e := failJSON(home, "hub", "leaderboard", "update", slug, "--config", tight)
		Expect(e.Error.Code).To(Equal("rows_invalid"))
		Expect(e.Error.Message).To(And(ContainSubstring("1 existing row invalid"), ContainSubstring(ids[1]), ContainSubstring("nothing was written")))
		var d struct {
			InvalidRowCount int `json:"invalid_row_count"`
			InvalidRows     []struct {
				ID     string `json:"id"`
				Fields []struct{ Field, Message string }
			} `json:"invalid_rows"`
		}
		Expect(json.Unmarshal(e.Error.Details, &d)).To(Succeed())
		Expect(d.InvalidRowCount).To(Equal(1)) // the row invalid before is not blamed on the change
		Expect(d.InvalidRows).To(HaveLen(1))
		Expect(d.InvalidRows[0].ID).To(Equal(ids[1]))
		Expect(d.InvalidRows[0].Fields).To(ConsistOf(HaveField("Field", "metrics.reward")))
		Expect(snap(org, b.ID)).To(Equal(before))

		// The same transaction fixes the row: applied.
		rowsPath := filepath.Join(home, "rows.json")
		ok(home, "hub", "leaderboard", "row", "export", slug, "--all", "--output", rowsPath)
		raw, err := os.ReadFile(rowsPath)
		Expect(err).NotTo(HaveOccurred())
		var rf map[string]any
		Expect(json.Unmarshal(raw, &rf)).To(Succeed())
		var keep []any
		for _, r := range rf["rows"].([]any) {
			m := r.(map[string]any)
			switch m["id"] {
			case ids[1]:
				m["metrics"] = map[string]any{"reward": 2}
			case string(bad.UID):
				continue
			}
			keep = append(keep, m)
		}
		rf["rows"] = keep
		writeJSON(rowsPath, rf)
		ok(home, "hub", "leaderboard", "update", slug, "--config", tight, "--rows", rowsPath)
		Expect(string(boardObject(org, b.ID).Spec.MetricsSchema.Raw)).To(MatchJSON(`{"type":"object","properties":{"reward":{"type":"number"}}}`))

		// kubectl cannot be refused after the fact: the board's status counts and names
		// the invalid rows, and a Warning event says so.
		Eventually(func() error {
			lb := boardObject(org, b.ID)
			lb.Spec.MetricsSchema = &apiextensionsv1.JSON{Raw: []byte(`{"type":"object","properties":{"reward":{"type":"number","maximum":2}}}`)}
			return k8s.Update(ctx, lb)
		}).Should(Succeed())
		var third hubv1alpha1.LeaderboardRowList
		Expect(k8s.List(ctx, &third, client.InNamespace(org), client.MatchingFields{"status.id": ids[2]})).To(Succeed())
		Expect(third.Items).To(HaveLen(1))
		Eventually(func(g Gomega) {
			lb := boardObject(org, b.ID)
			g.Expect(lb.Status.InvalidRows).To(Equal(int32(2)))
			g.Expect(lb.Status.InvalidRowNames).To(ConsistOf(third.Items[0].Name, bad.Name))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			var evs eventsv1.EventList
			g.Expect(k8s.List(ctx, &evs, client.InNamespace(org))).To(Succeed())
			var found []string
			for _, ev := range evs.Items {
				if ev.Regarding.Name == board.Name && ev.Reason == hubv1alpha1.ReasonRowsInvalid && ev.Type == "Warning" {
					found = append(found, ev.Note)
				}
			}
			g.Expect(found).To(ContainElement(And(ContainSubstring("2 rows fail"), ContainSubstring(third.Items[0].Name))))
		}).Should(Succeed())
	})
})
