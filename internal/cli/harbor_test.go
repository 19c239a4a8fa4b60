package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// readPayload is the public read's answer (docs/http-api.md), as Harbor's client keeps it.
type readPayload struct {
	Leaderboard map[string]json.RawMessage   `json:"leaderboard"`
	Rows        []map[string]json.RawMessage `json:"rows"`
	Pagination  struct {
		Total int `json:"total"`
	} `json:"pagination"`
}

// read asks the operator's read for a public board, anonymously, as Harbor's
// `leaderboard show` and `export` do (page_size given: the whole board fits one page).
func read(slug string) readPayload {
	GinkgoHelper()
	parts := strings.Split(slug, "/")
	body, _ := json.Marshal(map[string]any{"package": parts[0] + "/" + parts[1], "name": parts[2], "page_size": 1000})
	resp, err := http.Post(endpoint+"/v1/leaderboard-read", "application/json", bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), string(raw))
	var p readPayload
	Expect(json.Unmarshal(raw, &p)).To(Succeed())
	return p
}

func str(raw json.RawMessage) string {
	GinkgoHelper()
	var s string
	Expect(json.Unmarshal(raw, &s)).To(Succeed(), string(raw))
	return s
}

// harborDefinitionExport is the file Harbor's `harbor hub leaderboard export` writes
// (LeaderboardDefinitionExport, json.dumps(indent=2)): the read's board, field for
// field, with its updated_at as expected_updated_at, in Harbor's key order.
func harborDefinitionExport(b map[string]json.RawMessage) []byte {
	GinkgoHelper()
	doc := struct {
		LeaderboardID     json.RawMessage `json:"leaderboard_id"`
		Package           json.RawMessage `json:"package"`
		Name              json.RawMessage `json:"name"`
		ExpectedUpdatedAt json.RawMessage `json:"expected_updated_at"`
		Title             json.RawMessage `json:"title"`
		Description       json.RawMessage `json:"description"`
		Visibility        json.RawMessage `json:"visibility"`
		MetadataSchema    json.RawMessage `json:"metadata_schema"`
		MetricsSchema     json.RawMessage `json:"metrics_schema"`
		Columns           json.RawMessage `json:"columns"`
		RankBy            json.RawMessage `json:"rank_by"`
		DatasetVersionIDs json.RawMessage `json:"dataset_version_ids"`
	}{b["id"], b["package"], b["name"], b["updated_at"], b["title"], b["description"], b["visibility"],
		b["metadata_schema"], b["metrics_schema"], b["columns"], b["rank_by"], b["dataset_version_ids"]}
	out, err := json.MarshalIndent(doc, "", "  ")
	Expect(err).NotTo(HaveOccurred())
	return append(out, '\n')
}

// harborRowsExport is the file Harbor's `row export --all --output F.yaml` writes
// (LeaderboardRowsExport through yaml.safe_dump(sort_keys=False)): the board's id and
// updated_at, then every row's id, updated_at, metadata, metrics and status, in block
// style, timestamps quoted. reward overrides the reward of the row at that index.
func harborRowsExport(p readPayload, reward map[int]string) string {
	GinkgoHelper()
	var b strings.Builder
	fmt.Fprintf(&b, "leaderboard_id: %s\nexpected_updated_at: '%s'\nrows:\n", str(p.Leaderboard["id"]), str(p.Leaderboard["updated_at"]))
	for i, r := range p.Rows {
		var meta map[string]string
		var metrics map[string]float64
		Expect(json.Unmarshal(r["metadata"], &meta)).To(Succeed())
		Expect(json.Unmarshal(r["metrics"], &metrics)).To(Succeed())
		value := fmt.Sprintf("%.1f", metrics["reward"])
		if v, ok := reward[i]; ok {
			value = v
		}
		fmt.Fprintf(&b, "- id: %s\n  expected_updated_at: '%s'\n  metadata:\n    agent: %s\n  metrics:\n    reward: %s\n  status: %s\n",
			str(r["id"]), str(r["updated_at"]), meta["agent"], value, str(r["status"]))
	}
	return b.String()
}

// staleDetails runs a command that must be refused as stale and returns the refusal's
// details.
func staleDetails(home string, args ...string) map[string]string {
	GinkgoHelper()
	r := podium(home, append(args, "--json")...)
	Expect(r.code).To(Equal(1), r.String())
	var env struct {
		Error struct {
			Code    string            `json:"code"`
			Message string            `json:"message"`
			Details map[string]string `json:"details"`
		} `json:"error"`
	}
	Expect(json.Unmarshal([]byte(r.err), &env)).To(Succeed(), r.err)
	Expect(env.Error.Code).To(Equal("stale"), r.err)
	Expect(env.Error.Message).To(ContainSubstring(env.Error.Details["actual_updated_at"]))
	return env.Error.Details
}

func later(actual, expected string) bool {
	GinkgoHelper()
	a, err := time.Parse(time.RFC3339, actual)
	Expect(err).NotTo(HaveOccurred())
	e, err := time.Parse(time.RFC3339, expected)
	Expect(err).NotTo(HaveOccurred())
	return a.After(e)
}

var _ = Describe("Harbor's exports", func() {
	It("apply to an unchanged board, one updated_at with the read's, and are refused as stale, naming the later value, once it changed", func() {
		org, home := newOrg("cli-harbor")
		slug := org + "/bench/main"
		makeBoard(org, home, "main", "--visibility", "public",
			"--rows", write(home, "rows.yaml", rowsYAML(3, func(i int) string { return fmt.Sprint(i + 1) })))
		var p readPayload
		Eventually(func(g Gomega) {
			p = read(slug)
			g.Expect(p.Rows).To(HaveLen(3))
		}).Should(Succeed())

		By("the CLI's updated_at is the read's, for the board and for every row")
		var cli struct {
			Leaderboard struct {
				UpdatedAt string `json:"updated_at"`
			}
			Rows []struct {
				ID        string `json:"id"`
				UpdatedAt string `json:"updated_at"`
			}
		}
		Expect(json.Unmarshal([]byte(ok(home, "hub", "leaderboard", "show", slug, "--json")), &cli)).To(Succeed())
		Expect(cli.Leaderboard.UpdatedAt).To(Equal(str(p.Leaderboard["updated_at"])))
		Expect(cli.Rows).To(HaveLen(3))
		for i, r := range cli.Rows {
			Expect(r.ID).To(Equal(str(p.Rows[i]["id"])))
			Expect(r.UpdatedAt).To(Equal(str(p.Rows[i]["updated_at"])))
		}
		exp := filepath.Join(home, "podium-export.yaml")
		ok(home, "hub", "leaderboard", "export", slug, "--output", exp)
		raw, err := os.ReadFile(exp)
		Expect(err).NotTo(HaveOccurred())
		var exported map[string]any
		Expect(yaml.Unmarshal(raw, &exported)).To(Succeed())
		Expect(exported).To(HaveKeyWithValue("expected_updated_at", str(p.Leaderboard["updated_at"])))

		By("Harbor's definition export of the unchanged board applies")
		def := harborDefinitionExport(p.Leaderboard)
		var m map[string]any
		Expect(json.Unmarshal(def, &m)).To(Succeed())
		m["title"] = "Edited in Harbor's file"
		def, _ = json.MarshalIndent(m, "", "  ")
		defFile := write(home, "harbor-definition.json", string(def))
		Expect(ok(home, "hub", "leaderboard", "update", slug, "--config", defFile)).To(ContainSubstring("title"))
		Eventually(func() string { return str(read(slug).Leaderboard["title"]) }).Should(Equal("Edited in Harbor's file"))

		By("Harbor's rows export, with its top-level expected_updated_at, applies")
		var after readPayload
		Eventually(func(g Gomega) {
			after = read(slug)
			g.Expect(str(after.Leaderboard["updated_at"])).NotTo(Equal(str(p.Leaderboard["updated_at"])))
		}).Should(Succeed())
		rowsFile := write(home, "harbor-rows.yaml", harborRowsExport(after, map[int]string{0: "9.5"}))
		Expect(ok(home, "hub", "leaderboard", "update", slug, "--rows", rowsFile)).To(ContainSubstring("1 row updated"))
		Eventually(func() string { return string(read(slug).Rows[0]["metrics"]) }).Should(MatchJSON(`{"reward": 9.5}`))

		By("the first definition export is stale now: the refusal names the board's current, later updated_at")
		d := staleDetails(home, "hub", "leaderboard", "update", slug, "--config", defFile)
		Expect(d["resource"]).To(Equal("leaderboard " + slug))
		Expect(d["expected_updated_at"]).To(Equal(str(p.Leaderboard["updated_at"])))
		Expect(d["actual_updated_at"]).To(Equal(str(read(slug).Leaderboard["updated_at"])))
		Expect(later(d["actual_updated_at"], d["expected_updated_at"])).To(BeTrue(), "%v", d)

		By("a rows export taken before a definition change is refused by its top-level token")
		cur := read(slug)
		rowsFile = write(home, "harbor-rows-2.yaml", harborRowsExport(cur, map[int]string{1: "8.5"}))
		ok(home, "hub", "leaderboard", "update", slug, "--description", "changed after the rows export")
		d = staleDetails(home, "hub", "leaderboard", "update", slug, "--rows", rowsFile)
		Expect(d["resource"]).To(Equal("leaderboard " + slug))
		Expect(later(d["actual_updated_at"], d["expected_updated_at"])).To(BeTrue(), "%v", d)
		Expect(string(read(slug).Rows[1]["metrics"])).NotTo(MatchJSON(`{"reward": 8.5}`))

		By("a row changed twice within a second is still refused: every change moves updated_at")
		cur = read(slug)
		rowsFile = write(home, "harbor-rows-3.yaml", harborRowsExport(cur, map[int]string{2: "7.5"}))
		first := write(home, "first.yaml", harborRowsExport(cur, map[int]string{2: "6.5"}))
		ok(home, "hub", "leaderboard", "update", slug, "--rows", first)
		d = staleDetails(home, "hub", "leaderboard", "update", slug, "--rows", rowsFile)
		Expect(d["resource"]).To(HaveSuffix("(row " + str(cur.Rows[2]["id"]) + ")"))
		Expect(later(d["actual_updated_at"], d["expected_updated_at"])).To(BeTrue(), "%v", d)
	})

	It("show --json is the read's payload, rank ranges and intervals included", func() {
		org, home := newOrg("cli-ranges")
		slug := org + "/bench/ranged"
		cfg := write(home, "ranged.yaml", "package: "+org+"/bench\nname: ranged\ntitle: Ranged\n"+
			"rank_by:\n  - accessor: metrics.accuracy\n    direction: desc\n    stderr: metrics.accuracy_stderr\n")
		ok(home, "hub", "leaderboard", "create", "--config", cfg, "--visibility", "public")
		ok(home, "hub", "leaderboard", "row", "create", slug, "--quiet", "--config", write(home, "rows.yaml", "rows:\n"+
			"  - {metadata: {agent: alice}, metrics: {accuracy: 0.80, accuracy_stderr: 0.02}}\n"+
			"  - {metadata: {agent: bob}, metrics: {accuracy: 0.78, accuracy_stderr: 0.01}}\n"+
			"  - {metadata: {agent: carol}, metrics: {accuracy: 0.70}}\n"))
		var p readPayload
		Eventually(func(g Gomega) {
			p = read(slug)
			g.Expect(p.Rows).To(HaveLen(3))
		}).Should(Succeed())
		var cli readPayload
		Expect(json.Unmarshal([]byte(ok(home, "hub", "leaderboard", "show", slug, "--json")), &cli)).To(Succeed())
		Expect(cli.Rows).To(HaveLen(3))
		for i, want := range p.Rows {
			for k, v := range want {
				if k == "created_by" || k == "updated_by" {
					continue // a public board's read hides them unless it opts in; the CLI's caller may read them
				}
				Expect(cli.Rows[i]).To(HaveKey(k), "rows[%d]", i)
				Expect(string(cli.Rows[i][k])).To(MatchJSON(string(v)), "rows[%d].%s", i, k)
			}
		}
		Expect(string(cli.Rows[1]["rank_upper"])).To(MatchJSON("1"))
		Expect(cli.Rows[1]).To(HaveKey("interval"))
		Expect(cli.Rows[2]).NotTo(HaveKey("interval"), "a row without a stderr has no interval")
	})

	It("reads every row of a board larger than a page (60 rows)", func() {
		org, home := newOrg("cli-sixty")
		slug := org + "/bench/main"
		makeBoard(org, home, "main")
		ok(home, "hub", "leaderboard", "row", "create", slug, "--quiet",
			"--config", write(home, "rows.yaml", rowsYAML(60, func(i int) string { return fmt.Sprint(i) })))
		Eventually(func() int { return listRows(home, slug).Pagination.Total }).Should(Equal(60))
		Eventually(func() []string {
			_, table, _ := strings.Cut(ok(home, "hub", "leaderboard", "show", slug, "--no-headers"), "\n\n")
			return strings.Split(strings.TrimSpace(table), "\n")
		}).Should(HaveLen(60), "the board, a blank line, then every ranked row")

		Expect(strings.Split(strings.TrimSpace(ok(home, "hub", "leaderboard", "row", "list", slug, "--quiet")), "\n")).To(HaveLen(60))
		var pageJSON struct {
			Rows       []json.RawMessage `json:"rows"`
			Pagination struct{ Total int }
		}
		Expect(json.Unmarshal([]byte(ok(home, "hub", "leaderboard", "show", slug, "--json")), &pageJSON)).To(Succeed())
		Expect(pageJSON.Rows).To(HaveLen(50), "--json prints one page, as the read does")
		Expect(pageJSON.Pagination.Total).To(Equal(60), "and says how many there are")

		all := filepath.Join(home, "all.yaml")
		Expect(ok(home, "hub", "leaderboard", "row", "export", slug, "--all", "--output", all)).To(HavePrefix("Exported 60 rows to "))
		raw, err := os.ReadFile(all)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(string(raw), "expected_updated_at:")).To(Equal(60))
		man := filepath.Join(home, "board-manifest.yaml")
		ok(home, "hub", "leaderboard", "export", slug, "--format", "manifest", "--output", man)
		raw, err = os.ReadFile(man)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(string(raw), "kind: LeaderboardRow")).To(Equal(60))
		csvFile := filepath.Join(home, "board.csv")
		Expect(ok(home, "hub", "leaderboard", "row", "export", slug, "--format", "csv", "--output", csvFile)).To(HavePrefix("Exported 60 ranked rows to "))
	})
})
