package httpapi_test

import (
	"encoding/json"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

type historyBody struct {
	RowID     string  `json:"row_id"`
	CreatedBy *string `json:"created_by"`
	UpdatedBy *string `json:"updated_by"`
	Changes   []struct {
		At     string  `json:"at"`
		By     *string `json:"by"`
		Fields []struct {
			Field string          `json:"field"`
			Old   json.RawMessage `json:"old"`
			New   json.RawMessage `json:"new"`
		} `json:"fields"`
	} `json:"changes"`
}

var _ = Describe("Row history over HTTP", func() {
	It("serves a row's changes with the board's visibility rules", func() {
		ns := newOrg()
		token := memberToken(ns, "podium-org-owner")
		owner, err := testenv.ClientAs(cfg, token)
		Expect(err).NotTo(HaveOccurred())
		ownerName := "system:serviceaccount:" + ns + ":runner"
		other := memberToken(newOrg(), "podium-org-owner")

		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		row := newRow(lb, "r1", 1)
		eventually(func(g Gomega) { g.Expect(read(slugRead(lb, 1, 50), "").read().Rows).To(HaveLen(1)) })
		Eventually(func() error {
			if err := owner.Get(ctx, client.ObjectKeyFromObject(row), row); err != nil {
				return err
			}
			row.Spec.Metrics.Raw = []byte(`{"score":2}`)
			return owner.Update(ctx, row)
		}).Should(Succeed())

		bySlug := "/v1/leaderboards/" + lb.Spec.Package + "/" + lb.Spec.Name + "/rows/" + string(row.UID) + "/history"
		byID := "/v1/leaderboards/" + string(lb.UID) + "/rows/" + string(row.UID) + "/history"
		history := func(path, token string) historyBody {
			GinkgoHelper()
			var h historyBody
			eventually(func(g Gomega) {
				r := get(path, token)
				g.Expect(r.status).To(Equal(http.StatusOK), string(r.body))
				g.Expect(json.Unmarshal(r.body, &h)).To(Succeed())
				g.Expect(h.Changes).NotTo(BeEmpty())
			})
			return h
		}

		By("anyone reads a shown row's history of a public board, without user names unless it opts in")
		for _, path := range []string{bySlug, byID} {
			h := history(path, "")
			Expect(h.RowID).To(Equal(string(row.UID)))
			Expect(h.Changes).To(HaveLen(1))
			Expect(h.Changes[0].By).To(BeNil())
			Expect(h.CreatedBy).To(BeNil())
			Expect(h.UpdatedBy).To(BeNil())
			Expect(h.Changes[0].Fields).To(HaveLen(1))
			Expect(h.Changes[0].Fields[0].Field).To(Equal("metrics.score"))
			Expect(string(h.Changes[0].Fields[0].Old)).To(Equal("1"))
			Expect(string(h.Changes[0].Fields[0].New)).To(Equal("2"))
		}
		r := get(bySlug, "")
		Expect(r.header.Get("Cache-Control")).To(Equal("public, max-age=300, stale-while-revalidate=3600"))
		Expect(get(bySlug, "", "If-None-Match", r.header.Get("Etag")).status).To(Equal(http.StatusNotModified))

		edit(lb, func() { lb.Spec.ShowAuthors = true })
		eventually(func(g Gomega) {
			h := history(bySlug, "")
			g.Expect(h.Changes[0].By).To(HaveValue(Equal(ownerName)))
			g.Expect(h.UpdatedBy).To(HaveValue(Equal(ownerName)))
		})

		By("a hidden row's history is for members only: others get the 404 of a missing row")
		Eventually(func() error {
			if err := owner.Get(ctx, client.ObjectKeyFromObject(row), row); err != nil {
				return err
			}
			row.Spec.Visibility = hubv1alpha1.RowHide
			return owner.Update(ctx, row)
		}).Should(Succeed())
		missing := "/v1/leaderboards/" + string(lb.UID) + "/rows/00000000-0000-4000-8000-000000000000/history"
		eventually(func(g Gomega) {
			g.Expect(get(byID, "").status).To(Equal(http.StatusNotFound))
		})
		for _, tok := range []string{"", other} {
			for _, path := range []string{byID, missing} {
				r := get(path, tok)
				Expect(r.status).To(Equal(http.StatusNotFound), path)
				Expect(r.apiError().Code).To(Equal("not_found"))
				Expect(r.header.Get("Cache-Control")).To(Equal("no-store"))
			}
		}
		var h historyBody
		eventually(func(g Gomega) { // the cache may show the hidden row before its entry is recorded
			h = history(byID, token)
			g.Expect(h.Changes).To(HaveLen(2))
		})
		Expect(h.Changes[0].Fields[0].Field).To(Equal("status"), "newest first")
		Expect(get(byID, token).header.Get("Cache-Control")).To(Equal("private, no-store"))

		By("a private board: members only, with user names")
		edit(lb, func() { lb.Spec.Visibility, lb.Spec.ShowAuthors = hubv1alpha1.VisibilityPrivate, false })
		eventually(func(g Gomega) { g.Expect(get(bySlug, "").status).To(Equal(http.StatusNotFound)) })
		Expect(get(bySlug, other).status).To(Equal(http.StatusNotFound))
		h = history(bySlug, token)
		Expect(h.Changes[0].By).To(HaveValue(Equal(ownerName)))

		By("bad requests name the field")
		r = get("/v1/leaderboards/"+string(lb.UID)+"/rows/not-a-uuid/history", "")
		Expect(r.status).To(Equal(http.StatusBadRequest))
		Expect(r.apiError().Message).To(ContainSubstring("row_id"))
		r = get(byID+"?page=2", token)
		Expect(r.status).To(Equal(http.StatusBadRequest))
		Expect(r.header.Get("Cache-Control")).To(Equal("no-store"))
	})
})
