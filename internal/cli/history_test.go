package cli_test

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("row history", func() {
	It("prints who changed which values from what to what, newest first, as a table and as JSON", func() {
		org, home := newOrg("cli-history")
		makeBoard(org, home, "main")
		slug := org + "/bench/main"
		id := lines(ok(home, "hub", "leaderboard", "row", "create", slug, "--config", write(home, "r.yaml", rowsYAML(1, func(int) string { return "1" })), "--quiet"))[0]
		Expect(ok(home, "hub", "leaderboard", "row", "history", id)).To(Equal("WHEN  BY  FIELD  OLD  NEW\n"), "a new row has no changes")

		ok(home, "hub", "leaderboard", "row", "update", id, "--config", write(home, "p.yaml", "metrics: {reward: 3}\n"))
		type change struct {
			At     string `json:"at"`
			By     *string
			Fields []struct {
				Field string          `json:"field"`
				Old   json.RawMessage `json:"old"`
				New   json.RawMessage `json:"new"`
			} `json:"fields"`
		}
		var h struct {
			RowID     string   `json:"row_id"`
			CreatedBy *string  `json:"created_by"`
			UpdatedBy *string  `json:"updated_by"`
			Changes   []change `json:"changes"`
		}
		Eventually(func(g Gomega) {
			g.Expect(json.Unmarshal([]byte(ok(home, "hub", "leaderboard", "row", "history", id, "--json")), &h)).To(Succeed())
			g.Expect(h.Changes).To(HaveLen(1))
		}).Should(Succeed())
		ok(home, "hub", "leaderboard", "row", "update", id, "--status", "hide")
		Eventually(func(g Gomega) {
			g.Expect(json.Unmarshal([]byte(ok(home, "hub", "leaderboard", "row", "history", id, "--json")), &h)).To(Succeed())
			g.Expect(h.Changes).To(HaveLen(2))
		}).Should(Succeed())
		Expect(h.RowID).To(Equal(id))
		Expect(h.CreatedBy).To(HaveValue(Equal("podium-admin")), "the CLI's Kubernetes user")
		Expect(h.UpdatedBy).To(HaveValue(Equal("podium-admin")))
		Expect(h.Changes[0].Fields[0].Field).To(Equal("status"), "newest first")
		Expect(h.Changes[1].By).To(HaveValue(Equal("podium-admin")))
		Expect(h.Changes[1].Fields[0].Field).To(Equal("metrics.reward"))
		Expect(string(h.Changes[1].Fields[0].Old)).To(Equal("1"))
		Expect(string(h.Changes[1].Fields[0].New)).To(Equal("3"))

		table := strings.Split(strings.TrimSpace(ok(home, "hub", "leaderboard", "row", "history", id)), "\n")
		Expect(table).To(HaveLen(3))
		Expect(strings.Fields(table[0])).To(Equal([]string{"WHEN", "BY", "FIELD", "OLD", "NEW"}))
		Expect(strings.Fields(table[1])).To(Equal([]string{h.Changes[0].At, "podium-admin", "status", `"display"`, `"hide"`}))
		Expect(strings.Fields(table[2])).To(Equal([]string{h.Changes[1].At, "podium-admin", "metrics.reward", "1", "3"}))

		Expect(podium(home, "hub", "leaderboard", "row", "history").code).To(Equal(2), "the row id is required")
		Expect(podium(home, "hub", "leaderboard", "row", "history", "aaaaaaaa-0000-4000-8000-00000000dead").code).To(Equal(1))
	})
})
