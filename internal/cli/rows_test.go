package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

type rowJSON struct {
	ID       string          `json:"id"`
	Rank     *int            `json:"rank"`
	Status   string          `json:"status"`
	Metrics  json.RawMessage `json:"metrics"`
	TrialIDs []string        `json:"trial_ids"`
	Valid    *bool           `json:"valid"`
	// CreatedBy is who created the row (the read's created_by).
	CreatedBy *string `json:"created_by"`
}

type rowList struct {
	Rows       []rowJSON `json:"items"`
	Pagination struct {
		Total      int `json:"total"`
		Page       int `json:"page"`
		PageSize   int `json:"page_size"`
		TotalPages int `json:"total_pages"`
	}
}

func listRows(home, slug string, extra ...string) rowList {
	GinkgoHelper()
	var l rowList
	Expect(json.Unmarshal([]byte(ok(home, append([]string{"hub", "leaderboard", "row", "list", slug, "--json"}, extra...)...)), &l)).To(Succeed())
	return l
}

func lines(s string) []string {
	return strings.Fields(s)
}

const (
	trialA = "aaaaaaaa-0000-4000-8000-000000000001"
	trialB = "aaaaaaaa-0000-4000-8000-000000000002"
	trialC = "aaaaaaaa-0000-4000-8000-000000000003"
)

var _ = Describe("rows", func() {
	It("creates, ranks, lists, shows, exports, updates and deletes rows", func() {
		org, home := newOrg("cli-rows")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		rows := write(home, "rows.yaml", rowsYAML(4, func(i int) string { return []string{"1", "2.5", "null", "7"}[i] }))
		ids := lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", rows, "--quiet"))
		Expect(ids).To(HaveLen(4))

		// Ranks as the server computes them: reward desc, nulls last.
		Eventually(func(g Gomega) {
			l := listRows(home, slug)
			g.Expect(l.Rows).To(HaveLen(4))
			var order []string
			var ranks []int
			for _, r := range l.Rows {
				order = append(order, r.ID)
				g.Expect(r.Rank).NotTo(BeNil())
				ranks = append(ranks, *r.Rank)
			}
			g.Expect(order).To(Equal([]string{ids[3], ids[1], ids[0], ids[2]}))
			g.Expect(ranks).To(Equal([]int{1, 2, 3, 4}))
		}).Should(Succeed())
		table := ok(home, "hub", "leaderboard", "row", "list", slug)
		Expect(table).To(And(HavePrefix("RANK"), ContainSubstring("Agent"), ContainSubstring("Reward"), ContainSubstring("agent-3")))
		Expect(ok(home, "hub", "leaderboard", "row", "list", slug, "--no-headers")).NotTo(ContainSubstring("RANK"))

		var one rowJSON
		Expect(json.Unmarshal([]byte(ok(home, "hub", "leaderboard", "row", "show", ids[1], "--json")), &one)).To(Succeed())
		Expect(*one.Rank).To(Equal(2))
		Expect(ok(home, "hub", "leaderboard", "row", "show", ids[1])).To(ContainSubstring(`{"reward":2.5}`))

		// Hide a row: it leaves the ranking.
		ok(home, "hub", "leaderboard", "row", "update", ids[3], "--status", "hide")
		Eventually(func(g Gomega) {
			l := listRows(home, slug)
			g.Expect(l.Rows[0].ID).To(Equal(ids[1]))
			g.Expect(*l.Rows[0].Rank).To(Equal(1))
			g.Expect(l.Rows[3].ID).To(Equal(ids[3]))
			g.Expect(l.Rows[3].Rank).To(BeNil())
			g.Expect(l.Rows[3].Status).To(Equal("hide"))
		}).Should(Succeed())

		// One row: export, edit, update; a stale export is refused.
		one1 := filepath.Join(home, "one.yaml")
		ok(home, "hub", "leaderboard", "row", "export", ids[0], "--output", one1)
		raw, _ := os.ReadFile(one1)
		Expect(string(raw)).To(And(ContainSubstring("expected_updated_at:"), ContainSubstring("id: "+ids[0]), ContainSubstring("leaderboard_id:")))
		Expect(os.WriteFile(one1, []byte(strings.Replace(string(raw), "reward: 1", "reward: 9", 1)), 0o644)).To(Succeed())
		Expect(ok(home, "hub", "leaderboard", "row", "update", ids[0], "--config", one1)).To(ContainSubstring("metrics"))
		r := podium(home, "hub", "leaderboard", "row", "update", ids[0], "--config", one1)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("stale"))
		// A partial file changes only what it names; invalid values are refused.
		partial := write(home, "partial.yaml", "metrics: {reward: 3}\n")
		ok(home, "hub", "leaderboard", "row", "update", ids[0], "--config", partial)
		bad := write(home, "badrow.yaml", "metrics: {reward: high}\n")
		r = podium(home, "hub", "leaderboard", "row", "update", ids[0], "--config", bad)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("metrics.reward"))
		Expect(ok(home, "hub", "leaderboard", "row", "show", ids[0])).To(ContainSubstring(`{"reward":3}`))

		// All rows: export, edit, apply with update --rows.
		all := filepath.Join(home, "all.json")
		ok(home, "hub", "leaderboard", "row", "export", slug, "--all", "--output", all)
		var f struct {
			LeaderboardID string           `json:"leaderboard_id"`
			Rows          []map[string]any `json:"rows"`
		}
		raw, _ = os.ReadFile(all)
		Expect(json.Unmarshal(raw, &f)).To(Succeed())
		Expect(f.Rows).To(HaveLen(4))
		for _, row := range f.Rows {
			if row["id"] == ids[2] {
				row["metrics"] = map[string]any{"reward": 100}
			}
		}
		f.Rows = append(f.Rows, map[string]any{"metadata": map[string]any{"agent": "new"}, "metrics": map[string]any{"reward": 0}})
		raw, _ = json.Marshal(f)
		Expect(os.WriteFile(all, raw, 0o644)).To(Succeed())
		out := ok(home, "hub", "leaderboard", "update", slug, "--rows", all)
		Expect(out).To(And(ContainSubstring("1 row updated"), ContainSubstring("1 row added"), ContainSubstring("3 rows unchanged")))
		Eventually(func() string { return listRows(home, slug).Rows[0].ID }).Should(Equal(ids[2]))
		Expect(listRows(home, slug).Rows).To(HaveLen(5))
		// Applying the same (now stale) export again is refused.
		r = podium(home, "hub", "leaderboard", "update", slug, "--rows", all)
		Expect(r.code).To(Equal(1))
		Expect(r.err).To(ContainSubstring("stale"))

		// Delete: refused without --yes when stdin is not a terminal.
		r = podium(home, "hub", "leaderboard", "row", "delete", ids[0])
		Expect(r.code).To(Equal(2))
		Expect(r.err).To(ContainSubstring("--yes"))
		ok(home, "hub", "leaderboard", "row", "show", ids[0])
		ok(home, "hub", "leaderboard", "row", "delete", ids[0], ids[1], "--yes")
		for _, id := range ids[:2] {
			r = podium(home, "hub", "leaderboard", "row", "show", id)
			Expect(r.code).To(Equal(1))
			Expect(r.err).To(ContainSubstring("not found"))
		}
		// A missing id deletes nothing.
		r = podium(home, "hub", "leaderboard", "row", "delete", ids[2], ids[0], "--yes")
		Expect(r.code).To(Equal(1))
		ok(home, "hub", "leaderboard", "row", "show", ids[2])
	})

	It("refuses bad row requests: 0 or 501 rows, a trial used twice, ids in a create", func() {
		org, home := newOrg("cli-rowbad")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		for name, content := range map[string]string{
			"empty.yaml":  "rows: []\n",
			"many.yaml":   rowsYAML(501, func(int) string { return "1" }),
			"dup.yaml":    "rows:\n  - trial_ids: [" + trialA + "]\n  - trial_ids: [" + trialB + ", " + trialA + "]\n",
			"ids.yaml":    "rows:\n  - id: " + trialA + "\n",
			"norows.yaml": "row: []\n",
		} {
			r := podium(home, "hub", "leaderboard", "row", "create", slug, "--config", write(home, name, content))
			Expect(r.code).To(Equal(1), name)
		}
		r := podium(home, "hub", "leaderboard", "row", "create", slug, "--config", filepath.Join(home, "dup.yaml"), "--json")
		Expect(r.err).To(And(ContainSubstring("rows_invalid"), ContainSubstring("used twice")))
		var list hubv1alpha1.LeaderboardRowList
		Expect(k8s.List(ctx, &list, client.InNamespace(org))).To(Succeed())
		Expect(list.Items).To(BeEmpty())
	})

	It("manages trial links", func() {
		org, home := newOrg("cli-trials")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		id := lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", write(home, "r.yaml", rowsYAML(1, func(int) string { return "1" })), "--quiet"))[0]
		trials := func() []string {
			return lines(ok(home, "hub", "leaderboard", "row", "trial", "list", id, "--quiet"))
		}
		ok(home, "hub", "leaderboard", "row", "trial", "set", id, "--trial-id", trialA, "--trial-id", trialB)
		Expect(trials()).To(Equal([]string{trialA, trialB}))
		ok(home, "hub", "leaderboard", "row", "trial", "add", id, "--trial-id", trialC, "--trial-id", trialA)
		Expect(trials()).To(Equal([]string{trialA, trialB, trialC}))
		ok(home, "hub", "leaderboard", "row", "trial", "remove", id, "--trial-id", trialA)
		Expect(trials()).To(Equal([]string{trialB, trialC}))
		var page struct {
			Items []struct {
				TrialID string `json:"trial_id"`
			}
			Pagination struct {
				Total, Page, TotalPages int
			}
		}
		Expect(json.Unmarshal([]byte(ok(home, "hub", "leaderboard", "row", "trial", "list", id, "--json", "--limit", "1", "--page", "2")), &page)).To(Succeed())
		Expect(page.Items).To(HaveLen(1))
		Expect(page.Items[0].TrialID).To(Equal(trialC))
		Expect(ok(home, "hub", "leaderboard", "row", "trial", "list", id)).To(HavePrefix("TRIAL ID"))

		file := write(home, "trials.yaml", "trial_ids:\n  - "+trialA+"\n")
		ok(home, "hub", "leaderboard", "row", "trial", "set", id, "--trial-ids-file", file)
		Expect(trials()).To(Equal([]string{trialA}))
		Expect(podium(home, "hub", "leaderboard", "row", "trial", "set", id, "--trial-ids-file", write(home, "empty.yaml", "trial_ids: []\n")).code).To(Equal(1))
		Expect(podium(home, "hub", "leaderboard", "row", "trial", "set", id, "--trial-ids-file", file, "--trial-id", trialB).code).To(Equal(2))
		Expect(podium(home, "hub", "leaderboard", "row", "trial", "add", id, "--trial-id", "not-a-uuid").code).To(Equal(1))
		ok(home, "hub", "leaderboard", "row", "trial", "set", id, "--clear")
		Expect(trials()).To(BeEmpty())
	})

	It("streams every row to a pipe with --quiet, and one page with --json", func() {
		org, home := newOrg("cli-many")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		file := write(home, "rows.yaml", rowsYAML(400, func(i int) string { return fmt.Sprint(i) }))
		var created []string
		for range 3 {
			created = append(created, lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", file, "--quiet"))...)
		}
		Expect(created).To(HaveLen(1200))
		listed := lines(ok(home, "hub", "leaderboard", "row", "list", slug, "--quiet"))
		Expect(listed).To(ConsistOf(created))
		l := listRows(home, slug)
		Expect(l.Rows).To(HaveLen(50))
		Expect(l.Pagination.Total).To(Equal(1200))
		Expect(l.Pagination.TotalPages).To(Equal(24))
		Expect(lines(ok(home, "hub", "leaderboard", "row", "list", slug, "--quiet", "--limit", "1000", "--page", "2"))).To(HaveLen(200))
		// A piped table also streams every page (plus its header).
		Expect(strings.Count(ok(home, "hub", "leaderboard", "row", "list", slug), "\n")).To(Equal(1201))
	})
})

// onTerminal runs podium with stdin, stdout and stderr on a pseudo-terminal (through
// util-linux script), typing input.
func onTerminal(home, input string, args ...string) result {
	GinkgoHelper()
	cmdline := podiumBin
	for _, a := range args {
		cmdline += " '" + a + "'"
	}
	cmd := exec.Command("script", "-qec", cmdline, "/dev/null")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "XDG_CONFIG_HOME="+home, "HOME="+home)
	cmd.Stdin = strings.NewReader(input)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	code := exitCode(cmd.Run())
	return result{out: out.String(), code: code}
}

var _ = Describe("row delete on a terminal", func() {
	It("asks, and deletes only on yes", func() {
		org, home := newOrg("cli-tty")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		ids := lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", write(home, "r.yaml", rowsYAML(2, func(int) string { return "1" })), "--quiet"))
		// A person on a terminal sees one page of rows and a hint.
		r := onTerminal(home, "", "hub", "leaderboard", "row", "list", slug, "--limit", "1")
		Expect(r.out).To(And(ContainSubstring("Page 1 of 2"), ContainSubstring("--page 2")), r.String())
		Expect(strings.Count(r.out, "agent-")).To(Equal(1))

		r = onTerminal(home, "no\n", "hub", "leaderboard", "row", "delete", ids[0])
		Expect(r.code).To(Equal(1), r.String())
		Expect(r.out).To(And(ContainSubstring("Permanently delete 1 row "), ContainSubstring("nothing was deleted")))
		ok(home, "hub", "leaderboard", "row", "show", ids[0])
		r = onTerminal(home, "yes\n", "hub", "leaderboard", "row", "delete", ids[0])
		Expect(r.code).To(Equal(0), r.String())
		Expect(podium(home, "hub", "leaderboard", "row", "show", ids[0]).code).To(Equal(1))
	})
})
