package cli_test

import (
	"encoding/csv"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("row export --format csv", func() {
	It("writes the board's ranked rows with their rank ranges; the uncertainty round-trips through board files", func() {
		org, home := newOrg("cli-csv")
		slug := org + "/bench/ranged"
		cfg := write(home, "ranged.yaml", "package: "+org+"/bench\nname: ranged\ntitle: Ranged\n"+
			"rank_by:\n  - accessor: metrics.accuracy\n    direction: desc\n    stderr: metrics.accuracy_stderr\n")
		ok(home, "hub", "leaderboard", "create", "--config", cfg, "--visibility", "public")
		rows := write(home, "rows.yaml", "rows:\n"+
			"  - {metadata: {agent: '@alice'}, metrics: {accuracy: 0.80, accuracy_stderr: 0.02}}\n"+
			"  - {metadata: {agent: bob}, metrics: {accuracy: 0.78, accuracy_stderr: 0.01}}\n"+
			"  - {metadata: {agent: carol}, metrics: {accuracy: 0.70, accuracy_stderr: 0.001}}\n"+
			"  - {metadata: {agent: dave}, metrics: {accuracy: 0.5}, status: hide}\n")
		ok(home, "hub", "leaderboard", "row", "create", slug, "--config", rows, "--quiet")

		out := filepath.Join(home, "board.csv")
		var recs [][]string
		Eventually(func(g Gomega) {
			g.Expect(ok(home, "hub", "leaderboard", "row", "export", slug, "--format", "csv", "--output", out, "--force")).
				To(HavePrefix("Exported 3 ranked rows to "))
			f, err := os.Open(out)
			g.Expect(err).NotTo(HaveOccurred())
			defer f.Close()
			recs, err = csv.NewReader(f).ReadAll()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(recs).To(HaveLen(4), "the header and the three shown rows")
		}).Should(Succeed())
		Expect(recs[0]).To(Equal([]string{"rank", "rank_upper", "interval_low", "interval_high", "id", "created_at", "updated_at",
			"verified", "job_id", "image_digest", "ran_at", "metadata.agent", "metrics.accuracy", "metrics.accuracy_stderr"}))
		var got []string
		for _, r := range recs[1:] {
			got = append(got, strings.Join([]string{r[0], r[1], r[11]}, " "))
		}
		Expect(got).To(Equal([]string{"1 1 '@alice", "2 1 bob", "3 3 carol"}))

		By("the same bytes as the operator's GET .../rows.csv: one encoder, one set of rows")
		file, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			resp, err := http.Get(endpoint + "/v1/leaderboards/" + slug + "/rows.csv")
			g.Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
			g.Expect(string(body)).To(Equal(string(file)))
		}).Should(Succeed())

		By("the board file keeps the rule's uncertainty")
		exp := filepath.Join(home, "exported.yaml")
		ok(home, "hub", "leaderboard", "export", slug, "--output", exp)
		raw, err := os.ReadFile(exp)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).To(ContainSubstring("stderr: metrics.accuracy_stderr"))

		By("--format yaml and json name the extension's format")
		Expect(ok(home, "hub", "leaderboard", "row", "export", slug, "--all", "--format", "json", "--output", filepath.Join(home, "all.json"))).
			To(HavePrefix("Exported 4 rows to "))

		By("usage errors exit 2")
		for _, args := range [][]string{
			{"--format", "csv", "--all", "--output", filepath.Join(home, "x.csv")},
			{"--format", "csv", "--output", filepath.Join(home, "x.yaml")},
			{"--format", "xml", "--output", filepath.Join(home, "x.xml")},
			{"--format", "manifest", "--all", "--output", filepath.Join(home, "x.yaml")},
			{"--format", "json", "--all", "--output", filepath.Join(home, "x.yaml")},
		} {
			r := podium(home, append([]string{"hub", "leaderboard", "row", "export", slug}, args...)...)
			Expect(r.code).To(Equal(2), "%v: %s", args, r)
		}
	})
})
