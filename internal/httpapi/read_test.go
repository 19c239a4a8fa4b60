package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// eventually polls f, a few seconds at most: rows reach the index through the
// controllers (Valid) and the informers.
func eventually(f func(g Gomega)) {
	GinkgoHelper()
	Eventually(f).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
}

// waitServed waits until the operator's cache has seen a public board.
func waitServed(lb *hubv1alpha1.Leaderboard) {
	GinkgoHelper()
	eventually(func(g Gomega) {
		g.Expect(read(slugRead(lb, 1, 1), "").status).To(Equal(http.StatusOK))
	})
}

var _ = Describe("POST /v1/leaderboard-read", func() {
	It("pages: no rows, exact multiples, a last partial page, past the end", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		waitServed(lb)

		r := read(slugRead(lb, 1, 50), "")
		Expect(r.status).To(Equal(http.StatusOK), string(r.body))
		b := r.read()
		Expect(b.Rows).NotTo(BeNil())
		Expect(b.Rows).To(BeEmpty())
		Expect(b.Pagination.Total).To(Equal(0))
		Expect(b.Pagination.TotalPages).To(Equal(0))
		Expect(string(r.body)).To(ContainSubstring(`"rows":[]`))

		for i := range 7 {
			newRow(lb, fmt.Sprintf("r%d", i), float64(i))
		}
		eventually(func(g Gomega) {
			g.Expect(read(slugRead(lb, 1, 50), "").read().Pagination.Total).To(Equal(7))
		})

		type pageCase struct{ page, size, rows, totalPages int }
		for _, c := range []pageCase{
			{1, 7, 7, 1}, // exact multiple, one page
			{2, 7, 0, 1}, // past the end
			{1, 1, 1, 7}, // page_size 1
			{7, 1, 1, 7}, // last page of an exact multiple
			{8, 1, 0, 7}, // past the end
			{1, 3, 3, 3}, // partial last page ahead
			{3, 3, 1, 3}, // last partial page
			{4, 3, 0, 3}, // past the end
			{1, 1000, 7, 1},
			{1 << 40, 1000, 0, 1}, // far past the end
		} {
			b := read(slugRead(lb, c.page, c.size), "").read()
			Expect(b.Rows).To(HaveLen(c.rows), "page %d size %d", c.page, c.size)
			Expect(b.Pagination.TotalPages).To(Equal(c.totalPages), "page %d size %d", c.page, c.size)
			Expect(b.Pagination.Total).To(Equal(7))
			Expect(b.Pagination.Page).To(Equal(c.page))
			Expect(b.Pagination.PageSize).To(Equal(c.size))
		}
		// Pages join up into the whole board in rank order (scores 6..0).
		var scores []float64
		for p := 1; p <= 3; p++ {
			for _, row := range read(slugRead(lb, p, 3), "").read().Rows {
				scores = append(scores, row.Metrics["score"].(float64))
			}
		}
		Expect(cmp.Diff([]float64{6, 5, 4, 3, 2, 1, 0}, scores)).To(BeEmpty(), "(-want +got)")

		// Only page given: page_size 50. Only page_size given: page 1.
		b = read(map[string]any{"leaderboard_id": string(lb.UID), "page": 1}, "").read()
		Expect(b.Pagination.PageSize).To(Equal(50))
		Expect(b.Rows).To(HaveLen(7))
		b = read(map[string]any{"leaderboard_id": string(lb.UID), "page_size": 5}, "").read()
		Expect(b.Pagination.Page).To(Equal(1))
		Expect(b.Rows).To(HaveLen(5))
		// Neither: the whole board, as one page of 1000 rows (TestReadWithoutPaging has
		// the boards past the cap).
		b = read(map[string]any{"leaderboard_id": string(lb.UID)}, "").read()
		Expect(b.Pagination.Page).To(Equal(1))
		Expect(b.Pagination.PageSize).To(Equal(1000))
		Expect(b.Pagination.TotalPages).To(Equal(1))
		Expect(b.Rows).To(HaveLen(7))
	})

	It("serves the leaderboard and row fields docs/http-api.md lists", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		row := newRow(lb, "only", 1.5)
		eventually(func(g Gomega) {
			g.Expect(read(slugRead(lb, 1, 50), "").read().Rows).To(HaveLen(1))
		})
		var raw struct {
			Leaderboard map[string]any   `json:"leaderboard"`
			Rows        []map[string]any `json:"rows"`
			Pagination  map[string]any   `json:"pagination"`
		}
		Expect(jsonUnmarshal(read(slugRead(lb, 1, 50), "").body, &raw)).To(Succeed())
		Expect(keys(raw.Leaderboard)).To(ConsistOf("id", "package_id", "package", "dataset_version_ids", "name", "title",
			"description", "metadata_schema", "metrics_schema", "columns", "rank_by", "visibility", "created_at", "updated_at"))
		Expect(keys(raw.Rows[0])).To(ConsistOf("id", "leaderboard_id", "rank", "metadata", "metrics", "status",
			"created_at", "updated_at", "n_trials", "created_by", "updated_by", "verified", "provenance"))
		Expect(keys(raw.Pagination)).To(ConsistOf("total", "page", "page_size", "total_pages"))
		Expect(raw.Leaderboard["id"]).To(Equal(string(lb.UID)))
		Expect(raw.Leaderboard["package"]).To(Equal(ns + "/ds"))
		Expect(raw.Leaderboard["name"]).To(Equal("main"))
		Expect(raw.Leaderboard["visibility"]).To(Equal("public"))
		Expect(raw.Leaderboard["description"]).To(BeNil())
		Expect(raw.Leaderboard["rank_by"]).To(Equal([]any{map[string]any{"accessor": "metrics.score", "direction": "desc"}}))
		Expect(raw.Rows[0]["id"]).To(Equal(string(row.UID)))
		Expect(raw.Rows[0]["leaderboard_id"]).To(Equal(string(lb.UID)))
		Expect(raw.Rows[0]["rank"]).To(BeEquivalentTo(1))
		Expect(raw.Rows[0]["metadata"]).To(Equal(map[string]any{}))
		Expect(raw.Rows[0]["metrics"]).To(Equal(map[string]any{"score": 1.5}))
		Expect(raw.Rows[0]["status"]).To(Equal("display"))
		Expect(raw.Rows[0]["n_trials"]).To(BeEquivalentTo(0))
		_, err := time.Parse(time.RFC3339, raw.Rows[0]["created_at"].(string))
		Expect(err).NotTo(HaveOccurred())
	})

	It("ranks over HTTP as rows are created, hidden, shown, changed and deleted", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		rows := map[string]*hubv1alpha1.LeaderboardRow{
			"a": newRow(lb, "a", 10),
			"b": newRow(lb, "b", 20),
			"c": newRow(lb, "c", 20),
			"d": newRow(lb, "d", 5),
		}
		names := map[string]string{}
		for n, r := range rows {
			names[string(r.UID)] = n
		}
		// ranks returns "name:rank" in the served order; a tie's order is by creation
		// time then id, so tied names are sorted before comparing.
		ranks := func(g Gomega) []string {
			GinkgoHelper()
			b := read(slugRead(lb, 1, 50), "").read()
			var out []string
			for _, r := range b.Rows {
				out = append(out, fmt.Sprintf("%s:%d", names[r.ID], r.Rank))
			}
			return out
		}
		eventually(func(g Gomega) {
			g.Expect(ranks(g)).To(Or(
				Equal([]string{"b:1", "c:1", "a:3", "d:4"}),
				Equal([]string{"c:1", "b:1", "a:3", "d:4"})))
		})

		setVisibility := func(name string, v hubv1alpha1.RowVisibility) {
			row := &hubv1alpha1.LeaderboardRow{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(rows[name]), row)).To(Succeed())
			// A merge patch: the row controller may be adding labels at the same time.
			base := row.DeepCopy()
			row.Spec.Visibility = v
			Expect(k8sClient.Patch(ctx, row, client.MergeFrom(base))).To(Succeed())
		}
		setVisibility("c", hubv1alpha1.RowHide)
		eventually(func(g Gomega) {
			g.Expect(ranks(g)).To(Equal([]string{"b:1", "a:2", "d:3"}))
		})
		setVisibility("c", hubv1alpha1.RowDisplay)
		eventually(func(g Gomega) {
			g.Expect(ranks(g)).To(Or(
				Equal([]string{"b:1", "c:1", "a:3", "d:4"}),
				Equal([]string{"c:1", "b:1", "a:3", "d:4"})))
		})

		d := &hubv1alpha1.LeaderboardRow{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(rows["d"]), d)).To(Succeed())
		base := d.DeepCopy()
		d.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(`{"score": 30}`)}
		Expect(k8sClient.Patch(ctx, d, client.MergeFrom(base))).To(Succeed())
		eventually(func(g Gomega) {
			g.Expect(ranks(g)).To(Or(
				Equal([]string{"d:1", "b:2", "c:2", "a:4"}),
				Equal([]string{"d:1", "c:2", "b:2", "a:4"})))
		})

		Expect(k8sClient.Delete(ctx, rows["b"])).To(Succeed())
		eventually(func(g Gomega) {
			g.Expect(ranks(g)).To(Equal([]string{"d:1", "c:2", "a:3"}))
		})

		// A row whose values fail the board's schema is kept but not ranked.
		lbNow := &hubv1alpha1.Leaderboard{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lbNow)).To(Succeed())
		lbBase := lbNow.DeepCopy()
		lbNow.Spec.MetricsSchema = &apiextensionsv1.JSON{Raw: []byte(`{"type":"object","properties":{"score":{"type":"number"}}}`)}
		Expect(k8sClient.Patch(ctx, lbNow, client.MergeFrom(lbBase))).To(Succeed())
		bad := &hubv1alpha1.LeaderboardRow{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
			Spec:       hubv1alpha1.LeaderboardRowSpec{Leaderboard: lb.Name, Metrics: &apiextensionsv1.JSON{Raw: []byte(`{"score":"high"}`)}},
		}
		Expect(k8sClient.Create(ctx, bad)).To(Succeed())
		eventually(func(g Gomega) {
			got := &hubv1alpha1.LeaderboardRow{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(bad), got)).To(Succeed())
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(got.Status.Conditions).To(ContainElement(HaveField("Status", metav1.ConditionFalse)))
		})
		Expect(ranks(Default)).To(Equal([]string{"d:1", "c:2", "a:3"}))
	})

	It("shows a private board to its org's members only, and answers everyone else as if it did not exist", func() {
		ns := newOrg()
		other := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPrivate)
		newRow(lb, "r", 1)
		member := memberToken(ns, "podium-org-member")
		viewer := memberToken(other, "podium-viewer") // a viewer, but of another org
		byID := map[string]any{"leaderboard_id": string(lb.UID)}

		eventually(func(g Gomega) {
			r := read(slugRead(lb, 1, 50), member)
			g.Expect(r.status).To(Equal(http.StatusOK))
			g.Expect(r.read().Rows).To(HaveLen(1))
		})
		Expect(read(byID, member).status).To(Equal(http.StatusOK))
		Expect(read(slugRead(lb, 1, 50), member).header.Get("Cache-Control")).To(Equal("private, no-cache"))

		hiddenSlug := read(slugRead(lb, 1, 50), "")
		hiddenID := read(byID, "")
		otherSlug := read(slugRead(lb, 1, 50), viewer)
		otherID := read(byID, viewer)
		for _, r := range []response{hiddenSlug, hiddenID, otherSlug, otherID} {
			Expect(r.status).To(Equal(http.StatusNotFound))
			Expect(r.apiError().Code).To(Equal("not_found"))
			Expect(r.header.Get("ETag")).To(BeEmpty())
		}
		Expect(read(slugRead(lb, 1, 50), "not-a-token").status).To(Equal(http.StatusUnauthorized))

		// After the board is gone, the answers are byte for byte the same.
		Expect(k8sClient.Delete(ctx, lb)).To(Succeed())
		eventually(func(g Gomega) {
			g.Expect(read(slugRead(lb, 1, 50), member).status).To(Equal(http.StatusNotFound))
		})
		Expect(read(slugRead(lb, 1, 50), "").body).To(Equal(hiddenSlug.body))
		Expect(read(byID, "").body).To(Equal(hiddenID.body))
		Expect(read(slugRead(lb, 1, 50), viewer).body).To(Equal(otherSlug.body))
		Expect(read(byID, viewer).body).To(Equal(otherID.body))
	})

	It("reads a public board anonymously, and refuses an invalid token on it", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		waitServed(lb)
		r := read(slugRead(lb, 1, 50), "")
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(r.header.Get("Cache-Control")).To(Equal("no-cache"))
		r = read(slugRead(lb, 1, 50), "garbage")
		Expect(r.status).To(Equal(http.StatusUnauthorized))
		Expect(r.apiError().Code).To(Equal("unauthenticated"))
		r = do(http.MethodPost, "/v1/leaderboard-read", slugRead(lb, 1, 50), map[string]string{"Authorization": "Basic dTpw"})
		Expect(r.status).To(Equal(http.StatusUnauthorized))
	})

	It("answers 404 for unknown boards", func() {
		ns := newOrg()
		for _, body := range []map[string]any{
			{"package": ns + "/ds", "name": "nope"},
			{"package": "no-such-org/ds", "name": "main"},
			{"leaderboard_id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
		} {
			r := read(body, "")
			Expect(r.status).To(Equal(http.StatusNotFound), "%v", body)
			Expect(r.apiError().Code).To(Equal("not_found"))
		}
	})

	DescribeTable("rejects a bad request with 400 naming the field",
		func(body string, field string) {
			r := read(body, "")
			Expect(r.status).To(Equal(http.StatusBadRequest), string(r.body))
			e := r.apiError()
			Expect(e.Code).To(Equal("bad_request"))
			if field == "" {
				Expect(e.Details).To(BeEmpty())
				return
			}
			Expect(e.Details).To(HaveLen(1))
			Expect(e.Details[0].Field).To(Equal(field))
			Expect(e.Message).To(HavePrefix(field + ": "))
		},
		Entry("unknown field", `{"leaderboard_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","limit":5}`, "limit"),
		Entry("missing target", `{"page":1}`, "leaderboard_id"),
		Entry("empty object", `{}`, "leaderboard_id"),
		Entry("both targets", `{"package":"a/b","name":"c","leaderboard_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8"}`, "leaderboard_id"),
		Entry("id and name", `{"name":"c","leaderboard_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8"}`, "leaderboard_id"),
		Entry("package without name", `{"package":"a/b"}`, "name"),
		Entry("name without package", `{"name":"c"}`, "package"),
		Entry("malformed package", `{"package":"a","name":"c"}`, "package"),
		Entry("bad UUID", `{"leaderboard_id":"not-a-uuid"}`, "leaderboard_id"),
		Entry("page 0", `{"package":"a/b","name":"c","page":0}`, "page"),
		Entry("negative page", `{"package":"a/b","name":"c","page":-1}`, "page"),
		Entry("page_size 0", `{"package":"a/b","name":"c","page_size":0}`, "page_size"),
		Entry("page_size 1001", `{"package":"a/b","name":"c","page_size":1001}`, "page_size"),
		Entry("page of the wrong type", `{"package":"a/b","name":"c","page":"2"}`, "page"),
		Entry("fractional page_size", `{"package":"a/b","name":"c","page_size":2.5}`, "page_size"),
		Entry("malformed JSON", `{"package":`, ""),
		Entry("empty body", ``, ""),
		Entry("two objects", `{"package":"a/b","name":"c"}{}`, ""),
		Entry("an array", `[]`, ""),
	)

	It("refuses an oversized body with 413", func() {
		big := `{"package":"a/b","name":"` + strings.Repeat("x", 2<<20) + `"}`
		r := read(big, "")
		Expect(r.status).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(r.apiError().Code).To(Equal("payload_too_large"))
	})

	It("answers 304 to If-None-Match while the page is unchanged", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		newRow(lb, "a", 1)
		eventually(func(g Gomega) {
			g.Expect(read(slugRead(lb, 1, 50), "").read().Rows).To(HaveLen(1))
		})
		first := read(slugRead(lb, 1, 50), "")
		etag := first.header.Get("ETag")
		Expect(etag).To(HavePrefix(`"`))
		again := do(http.MethodPost, "/v1/leaderboard-read", slugRead(lb, 1, 50), map[string]string{"If-None-Match": etag})
		Expect(again.status).To(Equal(http.StatusNotModified))
		Expect(again.body).To(BeEmpty())
		Expect(again.header.Get("ETag")).To(Equal(etag))
		Expect(do(http.MethodPost, "/v1/leaderboard-read", slugRead(lb, 1, 50), map[string]string{"If-None-Match": `"x", W/` + etag}).status).
			To(Equal(http.StatusNotModified))
		// Another page is another entity.
		Expect(do(http.MethodPost, "/v1/leaderboard-read", slugRead(lb, 1, 10), map[string]string{"If-None-Match": etag}).status).
			To(Equal(http.StatusOK))

		newRow(lb, "b", 2)
		eventually(func(g Gomega) {
			r := do(http.MethodPost, "/v1/leaderboard-read", slugRead(lb, 1, 50), map[string]string{"If-None-Match": etag})
			g.Expect(r.status).To(Equal(http.StatusOK))
			g.Expect(r.read().Rows).To(HaveLen(2))
			g.Expect(r.header.Get("ETag")).NotTo(Equal(etag))
		})
	})

	It("lets any origin read, without credentials", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		waitServed(lb)
		pre := do(http.MethodOptions, "/v1/leaderboard-read", nil, map[string]string{
			"Origin": "https://example.org", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type",
		})
		Expect(pre.status).To(Equal(http.StatusNoContent))
		Expect(pre.header.Get("Access-Control-Allow-Origin")).To(Equal("*"))
		Expect(pre.header.Get("Access-Control-Allow-Methods")).To(ContainSubstring("POST"))
		Expect(strings.ToLower(pre.header.Get("Access-Control-Allow-Headers"))).To(ContainSubstring("content-type"))
		Expect(pre.header.Get("Access-Control-Allow-Credentials")).To(BeEmpty())

		r := do(http.MethodPost, "/v1/leaderboard-read", slugRead(lb, 1, 50), map[string]string{"Origin": "https://example.org"})
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(r.header.Get("Access-Control-Allow-Origin")).To(Equal("*"))
		Expect(r.header.Get("Access-Control-Expose-Headers")).To(ContainSubstring("ETag"))
		Expect(r.header.Get("Access-Control-Allow-Credentials")).To(BeEmpty())
		// Errors are readable cross-origin too.
		Expect(read(`{}`, "").header.Get("Access-Control-Allow-Origin")).To(Equal("*"))
	})
})

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
