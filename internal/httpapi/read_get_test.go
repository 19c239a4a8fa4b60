package httpapi_test

import (
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// get sends GET path; token "" is anonymous.
func get(path, token string, header ...string) response {
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return do(http.MethodGet, path, nil, h)
}

var _ = Describe("GET /v1/leaderboards", func() {
	It("answers the same bytes as the POST read, by slug and by id, cacheable for public boards only", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		for i := range 7 {
			newRow(lb, fmt.Sprintf("r%d", i), float64(i))
		}
		eventually(func(g Gomega) { g.Expect(read(slugRead(lb, 1, 50), "").read().Rows).To(HaveLen(7)) })

		slugPath := "/v1/leaderboards/" + lb.Spec.Package + "/" + lb.Spec.Name
		idPath := "/v1/leaderboards/" + string(lb.UID)
		for _, pg := range [][2]int{{1, 50}, {2, 3}, {9, 3}} {
			q := fmt.Sprintf("?page=%d&page_size=%d", pg[0], pg[1])
			for _, path := range []string{slugPath + q, idPath + q} {
				// The board's status may still change after its rows are ranked (the
				// controller writes it): compare the two reads of one state of the board.
				var r, post response
				eventually(func(g Gomega) {
					post = read(slugRead(lb, pg[0], pg[1]), "")
					r = get(path, "")
					g.Expect(post.status).To(Equal(http.StatusOK))
					g.Expect(r.status).To(Equal(http.StatusOK), string(r.body))
					g.Expect(r.header.Get("ETag")).To(Equal(post.header.Get("ETag")), "one state of the board")
				})
				Expect(r.body).To(Equal(post.body), path)
				Expect(r.header.Get("ETag")).NotTo(HavePrefix("W/"), "a strong ETag")
				Expect(r.header.Get("Cache-Control")).To(Equal("public, max-age=300, stale-while-revalidate=3600"))
				Expect(r.header.Get("Vary")).To(Equal("Authorization"))
				Expect(r.header.Get("Content-Length")).To(Equal(fmt.Sprint(len(post.body))))
				Expect(get(path, "", "If-None-Match", r.header.Get("ETag")).status).To(Equal(http.StatusNotModified))
			}
		}
		eventually(func(g Gomega) {
			whole, post := get(slugPath, ""), read(map[string]any{"package": lb.Spec.Package, "name": lb.Spec.Name}, "")
			g.Expect(whole.header.Get("ETag")).To(Equal(post.header.Get("ETag")), "one state of the board")
			g.Expect(whole.body).To(Equal(post.body), "no query: the whole board, as the POST read without page and page_size")
			g.Expect(whole.read().Pagination.Total).To(Equal(7))
			g.Expect(whole.read().Rows).To(HaveLen(7))
		})

		By("bad queries are 400s, never cached")
		for _, q := range []string{"?page=0", "?page_size=1001", "?page=x", "?limit=3", "?page=1&page=2", "?page=1;x"} {
			r := get(slugPath+q, "")
			Expect(r.status).To(Equal(http.StatusBadRequest), q)
			Expect(r.header.Get("Cache-Control")).To(Equal("no-store"), q)
		}

		By("a private board is never marked cacheable: not its 200 to a member, not its 404 to others")
		edit(lb, func() { lb.Spec.Visibility = hubv1alpha1.VisibilityPrivate })
		member := memberToken(ns, "podium-org-member")
		eventually(func(g Gomega) { g.Expect(get(slugPath, "").status).To(Equal(http.StatusNotFound)) })
		for _, path := range []string{slugPath, idPath} {
			anon := get(path, "")
			Expect(anon.status).To(Equal(http.StatusNotFound))
			Expect(anon.header.Get("Cache-Control")).To(Equal("no-store"))
			// The controller writes the board's status after the edit: compare a member's
			// GET and POST reads of one state of the board (one ETag), not of two.
			var mine, post response
			eventually(func(g Gomega) {
				mine = get(path, member)
				post = read(map[string]any{"package": lb.Spec.Package, "name": lb.Spec.Name}, member)
				g.Expect(mine.status).To(Equal(http.StatusOK))
				g.Expect(mine.header.Get("ETag")).To(Equal(post.header.Get("ETag")), "one state of the board")
			})
			Expect(mine.header.Get("Cache-Control")).To(Equal("private, no-store"))
			Expect(mine.header.Get("Vary")).To(Equal("Authorization"))
			Expect(mine.body).To(Equal(post.body))
		}
		missing := get("/v1/leaderboards/"+ns+"/ds/none", "")
		Expect(missing.status).To(Equal(http.StatusNotFound))
		Expect(missing.header.Get("Cache-Control")).To(Equal("no-store"))
	})
})
