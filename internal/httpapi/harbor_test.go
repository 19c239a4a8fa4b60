package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// Harbor's leaderboard client (harbor/hub/leaderboards.py) POSTs JSON to
// "<base>/functions/v1/<name>": leaderboard-read {package, name} or {leaderboard_id},
// with page and page_size only when it lists one page, and leaderboard-row-read
// {row_id}, which it reads as {"row": {...}}. These are its requests, and the fields it
// reads from the answers (docs/http-api.md, "Harbor compatibility").
var _ = Describe("Harbor's read requests", func() {
	// fn posts to Harbor's function path; token "" is anonymous.
	fn := func(name string, body any, token string) response {
		h := map[string]string{"apikey": "publishable-key"} // Harbor always sends one; Podium ignores it
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		return do(http.MethodPost, "/functions/v1/"+name, body, h)
	}
	type harborRow struct {
		ID            string         `json:"id"`
		LeaderboardID string         `json:"leaderboard_id"`
		Rank          *int           `json:"rank"`
		Metadata      map[string]any `json:"metadata"`
		Metrics       map[string]any `json:"metrics"`
		Status        string         `json:"status"`
		CreatedAt     string         `json:"created_at"`
		UpdatedAt     string         `json:"updated_at"`
		NTrials       *int           `json:"n_trials"`
	}
	rowOf := func(r response) harborRow {
		GinkgoHelper()
		var b struct {
			Row harborRow `json:"row"`
		}
		Expect(r.status).To(Equal(http.StatusOK), string(r.body))
		Expect(json.Unmarshal(r.body, &b)).To(Succeed())
		return b.Row
	}

	It("reads a board whole, a page of it, and one row, under /functions/v1 as under /v1", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		rows := map[string]*hubv1alpha1.LeaderboardRow{}
		for i := range 3 {
			rows[fmt.Sprint(i)] = newRow(lb, fmt.Sprintf("r%d", i), float64(i))
		}
		eventually(func(g Gomega) { g.Expect(read(slugRead(lb, 1, 50), "").read().Rows).To(HaveLen(3)) })

		By("show / export: neither page nor page_size, the whole board")
		var show response
		eventually(func(g Gomega) {
			show = fn("leaderboard-read", map[string]any{"package": lb.Spec.Package, "name": lb.Spec.Name}, "")
			v1 := read(map[string]any{"package": lb.Spec.Package, "name": lb.Spec.Name}, "")
			g.Expect(show.header.Get("ETag")).To(Equal(v1.header.Get("ETag")), "one state of the board")
			g.Expect(show.body).To(Equal(v1.body), "the same handler and bytes as /v1")
		})
		b := show.read()
		Expect(b.Rows).To(HaveLen(3))
		Expect(b.Pagination.Total).To(Equal(3))
		Expect(b.Pagination.TotalPages).To(Equal(1))
		for _, k := range []string{"id", "package_id", "package", "dataset_version_ids", "name", "title", "description",
			"metadata_schema", "metrics_schema", "columns", "rank_by", "visibility", "created_at", "updated_at"} {
			Expect(b.Leaderboard).To(HaveKey(k))
		}

		By("list_rows: one page by leaderboard_id")
		p := fn("leaderboard-read", map[string]any{"leaderboard_id": string(lb.UID), "page": 2, "page_size": 2}, "").read()
		Expect(p.Rows).To(HaveLen(1))
		Expect(p.Pagination.Total).To(Equal(3))
		Expect(p.Pagination.TotalPages).To(Equal(2))

		By("get_row: {row_id} answers {row}, ranked")
		top := rows["2"]
		r := fn("leaderboard-row-read", map[string]any{"row_id": string(top.UID)}, "")
		got := rowOf(r)
		Expect(got.ID).To(Equal(string(top.UID)))
		Expect(got.LeaderboardID).To(Equal(string(lb.UID)))
		Expect(got.Rank).To(HaveValue(Equal(1)))
		Expect(got.Metrics).To(HaveKeyWithValue("score", 2.0))
		Expect(got.Status).To(Equal("display"))
		Expect(got.CreatedAt).NotTo(BeEmpty())
		Expect(got.UpdatedAt).NotTo(BeEmpty())
		Expect(got.NTrials).To(HaveValue(Equal(0)))
		Expect(do(http.MethodPost, "/v1/leaderboard-row-read", map[string]any{"row_id": string(top.UID)}, nil).body).To(Equal(r.body))
		Expect(r.header.Get("Cache-Control")).To(Equal("no-store"))

		By("bad input names the field")
		for body, field := range map[string]string{`{}`: "row_id", `{"row_id":"x"}`: "row_id", `{"row_id":1}`: "row_id", `{"id":"x"}`: "id"} {
			bad := fn("leaderboard-row-read", body, "")
			Expect(bad.status).To(Equal(http.StatusBadRequest), body)
			Expect(bad.apiError().Details).To(ContainElement(HaveField("Field", field)), body)
		}
	})

	It("gives a row the public read does not show to members only, and the same 404 as a missing row to everyone else", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		shown, hidden := newRow(lb, "shown", 1), newRow(lb, "hidden", 2)
		eventually(func(g Gomega) { g.Expect(read(slugRead(lb, 1, 50), "").read().Rows).To(HaveLen(2)) })
		Expect(testenv.Update(ctx, k8sClient, hidden, func(r *hubv1alpha1.LeaderboardRow) { r.Spec.Visibility = hubv1alpha1.RowHide })).To(Succeed())
		eventually(func(g Gomega) { g.Expect(read(slugRead(lb, 1, 50), "").read().Rows).To(HaveLen(1)) })

		member := memberToken(ns, "podium-org-member")
		outsider := memberToken(newOrg(), "podium-org-member")
		const missing = "00000000-0000-4000-8000-00000000abcd"
		notFound := func(r response, id string) string {
			GinkgoHelper()
			Expect(r.status).To(Equal(http.StatusNotFound), string(r.body))
			Expect(r.apiError().Code).To(Equal("not_found"))
			return strings.ReplaceAll(string(r.body), id, "ID")
		}
		refusal := notFound(fn("leaderboard-row-read", map[string]any{"row_id": missing}, ""), missing)
		for _, token := range []string{"", outsider} {
			Expect(notFound(fn("leaderboard-row-read", map[string]any{"row_id": string(hidden.UID)}, token), string(hidden.UID))).To(Equal(refusal))
			Expect(notFound(fn("leaderboard-row-read", map[string]any{"row_id": missing}, token), missing)).To(Equal(refusal))
		}
		var got harborRow
		eventually(func(g Gomega) {
			r := fn("leaderboard-row-read", map[string]any{"row_id": string(hidden.UID)}, member)
			g.Expect(r.status).To(Equal(http.StatusOK), string(r.body))
			got = rowOf(r)
		})
		Expect(got.Status).To(Equal("hide"))
		Expect(got.Rank).To(BeNil(), "a row that is not ranked has no rank")
		Expect(notFound(fn("leaderboard-row-read", map[string]any{"row_id": missing}, member), missing)).To(Equal(refusal))

		By("a private board's rows, ranked or not, are its members'")
		edit(lb, func() { lb.Spec.Visibility = hubv1alpha1.VisibilityPrivate })
		eventually(func(g Gomega) {
			g.Expect(fn("leaderboard-row-read", map[string]any{"row_id": string(shown.UID)}, "").status).To(Equal(http.StatusNotFound))
		})
		Expect(notFound(fn("leaderboard-row-read", map[string]any{"row_id": string(shown.UID)}, outsider), string(shown.UID))).To(Equal(refusal))
		Expect(rowOf(fn("leaderboard-row-read", map[string]any{"row_id": string(shown.UID)}, member)).Rank).To(HaveValue(Equal(1)))
	})
})
