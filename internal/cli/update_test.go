package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

func boardObject(org, id string) *hubv1alpha1.Leaderboard {
	GinkgoHelper()
	var list hubv1alpha1.LeaderboardList
	Expect(k8s.List(ctx, &list, client.InNamespace(org), client.MatchingLabels{hubv1alpha1.LabelID: id})).To(Succeed())
	Expect(list.Items).To(HaveLen(1))
	return &list.Items[0]
}

// editYAML reads a YAML file, lets fn change it, and writes it back.
func editYAML(path string, fn func(m map[string]any)) {
	GinkgoHelper()
	raw, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	var m map[string]any
	Expect(yaml.Unmarshal(raw, &m)).To(Succeed())
	fn(m)
	out, err := yaml.Marshal(m)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(path, out, 0o644)).To(Succeed())
}

var _ = Describe("leaderboard update and export", func() {
	It("changes fields by flag, keeps package and name, and replaces dataset versions only when asked", func() {
		org, home := newOrg("cli-upd")
		b := makeBoard(org, home, "main")
		slug := org + "/bench/main"
		Eventually(func() []string { return show(home, slug).DatasetVersionIDs }).Should(HaveLen(2))

		ok(home, "hub", "leaderboard", "update", slug, "--title", "New title", "--description", "About", "--visibility", "public")
		got := show(home, b.ID)
		Expect(got.Title).To(Equal("New title"))
		Expect(*got.Description).To(Equal("About"))
		Expect(got.Visibility).To(Equal("public"))
		// Without version flags, the associations stay.
		Consistently(func() []string { return show(home, slug).DatasetVersionIDs }, "1s").Should(HaveLen(2))

		ok(home, "hub", "leaderboard", "update", slug, "--dataset-version-ref", "1.0")
		Eventually(func() []string { return show(home, slug).DatasetVersionIDs }).Should(Equal([]string{"11111111-1111-4111-8111-111111111111"}))
		ok(home, "hub", "leaderboard", "update", slug, "--dataset-version-id", "22222222-2222-4222-8222-222222222222")
		Eventually(func() []string { return show(home, slug).DatasetVersionIDs }).Should(Equal([]string{"22222222-2222-4222-8222-222222222222"}))
		lb := boardObject(org, b.ID)
		Expect(*lb.Spec.DatasetVersionRefs).To(BeEmpty())

		// Flags override the --config file's values; package and name cannot change.
		exp := filepath.Join(home, "exp.yaml")
		ok(home, "hub", "leaderboard", "export", slug, "--output", exp)
		editYAML(exp, func(m map[string]any) { m["title"] = "From file"; m["description"] = "File description" })
		ok(home, "hub", "leaderboard", "update", slug, "--config", exp, "--title", "From flag")
		got = show(home, slug)
		Expect(got.Title).To(Equal("From flag"))
		Expect(*got.Description).To(Equal("File description"))

		ok(home, "hub", "leaderboard", "export", slug, "--output", exp, "--force")
		editYAML(exp, func(m map[string]any) { m["name"] = "renamed" })
		r := podium(home, "hub", "leaderboard", "update", slug, "--config", exp)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("name: cannot be changed"))
		editYAML(exp, func(m map[string]any) { m["name"] = "main"; m["package"] = org + "/other" })
		r = podium(home, "hub", "leaderboard", "update", slug, "--config", exp)
		Expect(r.err).To(ContainSubstring("package: cannot be changed"))
		Expect(show(home, slug).Title).To(Equal("From flag"))
	})

	It("refuses a stale export, and bad outputs", func() {
		org, home := newOrg("cli-stale")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		exp := filepath.Join(home, "exp.yaml")
		ok(home, "hub", "leaderboard", "export", slug, "--output", exp)
		raw, _ := os.ReadFile(exp)
		Expect(string(raw)).To(And(ContainSubstring("leaderboard_id:"), ContainSubstring("expected_updated_at:"), ContainSubstring("package: "+org+"/bench"), ContainSubstring("name: main")))

		// Someone changes the board after the export (here with kubectl's way: a plain
		// update of the object, no CLI annotation).
		id := show(home, slug).ID
		Eventually(func() error {
			lb := boardObject(org, id)
			lb.Spec.Title = "Changed elsewhere"
			return k8s.Update(ctx, lb)
		}).Should(Succeed())

		editYAML(exp, func(m map[string]any) { m["title"] = "Mine" })
		r := podium(home, "hub", "leaderboard", "update", slug, "--config", exp, "--json")
		Expect(r.code).To(Equal(1))
		var env struct {
			Error struct {
				Code    string
				Details map[string]string
			}
		}
		Expect(json.Unmarshal([]byte(r.err), &env)).To(Succeed(), r.err)
		Expect(env.Error.Code).To(Equal("stale"))
		Expect(env.Error.Details).To(HaveKey("expected_updated_at"))
		Expect(show(home, slug).Title).To(Equal("Changed elsewhere"))

		// A fresh export applies.
		ok(home, "hub", "leaderboard", "export", slug, "--output", exp, "--force")
		editYAML(exp, func(m map[string]any) { m["title"] = "Mine" })
		out := ok(home, "hub", "leaderboard", "update", slug, "--config", exp)
		Expect(out).To(ContainSubstring("title"))
		Expect(show(home, slug).Title).To(Equal("Mine"))

		Expect(podium(home, "hub", "leaderboard", "export", slug, "--output", filepath.Join(home, "x.txt")).code).To(Equal(2))
		r = podium(home, "hub", "leaderboard", "export", slug, "--output", exp)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("--force"))
		jsonOut := filepath.Join(home, "exp.json")
		ok(home, "hub", "leaderboard", "export", slug, "--output", jsonOut)
		raw, _ = os.ReadFile(jsonOut)
		Expect(json.Valid(raw)).To(BeTrue())
		// An unchanged definition writes nothing.
		Expect(ok(home, "hub", "leaderboard", "update", slug, "--config", jsonOut)).To(ContainSubstring("No changes"))
	})

	It("round-trips through Kubernetes manifests (GitOps)", func() {
		org, home := newOrg("cli-gitops")
		rows := write(home, "rows.yaml", rowsYAML(4, func(i int) string { return []string{"1", "2.5", "null", "7"}[i] }))
		b := makeBoard(org, home, "gitops_board", "--rows", rows)
		slug := org + "/bench/gitops_board"
		man := filepath.Join(home, "board.yaml")
		ok(home, "hub", "leaderboard", "export", slug, "--output", man, "--format", "manifest")
		raw, _ := os.ReadFile(man)
		s := string(raw)
		Expect(strings.Count(s, "kind: LeaderboardRow")).To(Equal(4))
		Expect(s).To(ContainSubstring("kind: Leaderboard\n"))
		Expect(s).NotTo(Or(ContainSubstring("uid:"), ContainSubstring("resourceVersion"), ContainSubstring("status:"), ContainSubstring(hubv1alpha1.LabelID), ContainSubstring(hubv1alpha1.AnnotationCreatedAt)))

		before := boardObject(org, b.ID)
		var beforeRows hubv1alpha1.LeaderboardRowList
		Expect(k8s.List(ctx, &beforeRows, client.InNamespace(org))).To(Succeed())

		// The board is deleted (no podium command does that) and re-created from Git.
		Expect(k8s.Delete(ctx, before)).To(Succeed())
		Expect(k8s.DeleteAllOf(ctx, &hubv1alpha1.LeaderboardRow{}, client.InNamespace(org))).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKeyFromObject(before), &hubv1alpha1.Leaderboard{})
		}).Should(HaveOccurred())
		ok(home, "hub", "leaderboard", "create", "--config", man)
		after := show(home, slug)
		Expect(after.ID).NotTo(Equal(b.ID))
		lb := boardObject(org, after.ID)
		Expect(lb.Name).To(Equal(before.Name))
		Expect(lb.Spec).To(Equal(before.Spec))
		var afterRows hubv1alpha1.LeaderboardRowList
		Expect(k8s.List(ctx, &afterRows, client.InNamespace(org))).To(Succeed())
		specs := func(l hubv1alpha1.LeaderboardRowList) map[string]string {
			m := map[string]string{}
			for _, r := range l.Items {
				j, _ := json.Marshal(r.Spec)
				m[r.Name] = string(j)
			}
			return m
		}
		Expect(specs(afterRows)).To(Equal(specs(beforeRows)))

		// init --format manifest writes a board manifest that create accepts too.
		man2 := filepath.Join(home, "new.yaml")
		ok(home, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "second", "--title", "Second", "--output", man2, "--format", "manifest")
		raw, _ = os.ReadFile(man2)
		Expect(string(raw)).To(And(ContainSubstring("apiVersion: hub.podium.dev/v1alpha1"), ContainSubstring("namespace: "+org)))
		ok(home, "hub", "leaderboard", "create", "--config", man2)
		Expect(show(home, org+"/bench/second").Title).To(Equal("Second"))
	})
})
