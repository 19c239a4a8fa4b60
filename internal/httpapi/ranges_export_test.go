package httpapi_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// metricsRow creates a row of board lb with these metrics (JSON).
func metricsRow(lb *hubv1alpha1.Leaderboard, name, metrics string) *hubv1alpha1.LeaderboardRow {
	GinkgoHelper()
	row := &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: lb.Namespace, Name: name},
		Spec:       hubv1alpha1.LeaderboardRowSpec{Leaderboard: lb.Name, Metrics: &apiextensionsv1.JSON{Raw: []byte(metrics)}},
	}
	Expect(k8sClient.Create(ctx, row)).To(Succeed())
	return row
}

// rangeRow is a row of the read with its rank range.
type rangeRow struct {
	ID        string `json:"id"`
	Rank      int    `json:"rank"`
	RankUpper *int   `json:"rank_upper"`
	Interval  *struct {
		Low  float64 `json:"low"`
		High float64 `json:"high"`
	} `json:"interval"`
}

func rangeRows(r response) []rangeRow {
	GinkgoHelper()
	var body struct {
		Rows []rangeRow `json:"rows"`
	}
	Expect(json.Unmarshal(r.body, &body)).To(Succeed(), string(r.body))
	return body.Rows
}

// summary renders read rows as "rank rank_upper name", names from ids, in rank order
// (single-digit ranks).
func summary(rows []rangeRow, names map[string]string) []string {
	out := []string{}
	for _, r := range rows {
		up := "-"
		if r.RankUpper != nil {
			up = itoa(*r.RankUpper)
		}
		out = append(out, itoa(r.Rank)+" "+up+" "+names[r.ID])
	}
	// Rows that tie are in creation order, then UID order: sort them by name.
	slices.Sort(out)
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

var _ = Describe("Rank ranges, CSV and badges", func() {
	It("refuses rank rules whose uncertainty is ambiguous, at apply time", func() {
		ns := newOrg()
		for _, rules := range [][]hubv1alpha1.RankRule{
			{{Accessor: "metrics.a", Direction: hubv1alpha1.Descending, Stderr: "metrics.se", IntervalLow: "metrics.lo", IntervalHigh: "metrics.hi"}},
			{{Accessor: "metrics.a", Direction: hubv1alpha1.Descending, IntervalLow: "metrics.lo"}},
			{{Accessor: "metrics.a", Direction: hubv1alpha1.Descending, Stderr: "metrics.se"},
				{Accessor: "metrics.b", Direction: hubv1alpha1.Descending, Stderr: "metrics.se2"}},
			{{Accessor: "metrics.a", Direction: hubv1alpha1.Descending, Stderr: "status.x"}},
		} {
			lb := &hubv1alpha1.Leaderboard{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
				Spec:       hubv1alpha1.LeaderboardSpec{Package: ns + "/ds", Name: "bad", Title: "Bad", RankBy: rules},
			}
			err := k8sClient.Create(ctx, lb)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%+v: %v", rules, err)
			Expect(err.Error()).To(ContainSubstring("spec.rankBy"))
		}
	})

	It("serves rank_upper and intervals in the read, the board as CSV and a badge per row, with the read's visibility and caching", func() {
		ns := newOrg()
		lb := &hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "main"},
			Spec: hubv1alpha1.LeaderboardSpec{
				Package: ns + "/ds", Name: "main", Title: `Terminal-Bench <2.0> & "friends"`,
				Visibility: hubv1alpha1.VisibilityPublic,
				RankBy: []hubv1alpha1.RankRule{{
					Accessor: "metrics.accuracy", Direction: hubv1alpha1.Descending, Stderr: "metrics.accuracy_stderr",
				}},
			},
		}
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		// docs/ranking.md, worked table 1.
		names := map[string]string{}
		byName := map[string]*hubv1alpha1.LeaderboardRow{}
		for _, r := range [][2]string{
			{"a", `{"accuracy": 0.80, "accuracy_stderr": 0.02, "agent": "=cmd|' /C calc'!A0"}`},
			{"b", `{"accuracy": 0.78, "accuracy_stderr": 0.01}`},
			{"c", `{"accuracy": 0.74, "accuracy_stderr": 0.005}`},
			{"d", `{"accuracy": 0.74}`},
			{"e", `{"accuracy": 0.70, "accuracy_stderr": 0.03}`},
			{"f", `{"accuracy_stderr": 0.01}`},
			{"g", `{"accuracy": 0.60, "accuracy_stderr": -0.1}`},
		} {
			row := metricsRow(lb, r[0], r[1])
			names[string(row.UID)], byName[r[0]] = r[0], row
		}
		slug := "/v1/leaderboards/" + ns + "/ds/main"
		eventually(func(g Gomega) { g.Expect(rangeRows(get(slug, ""))).To(HaveLen(7)) })
		first := get(slug, "")
		rows := rangeRows(first)
		Expect(summary(rows, names)).To(Equal([]string{"1 1 a", "2 1 b", "3 3 c", "3 3 d", "5 3 e", "6 6 g", "7 7 f"}))
		named := map[string]rangeRow{}
		for _, r := range rows {
			named[names[r.ID]] = r
		}
		Expect(named["a"].Interval).NotTo(BeNil())
		Expect(named["a"].Interval.Low).To(BeNumerically("~", 0.7608, 1e-9))
		Expect(named["a"].Interval.High).To(BeNumerically("~", 0.8392, 1e-9))
		Expect(named["d"].Interval).To(BeNil(), "d has no stderr: no interval")
		Expect(named["g"].Interval).To(BeNil(), "g's stderr is negative: no interval")
		Expect(named["f"].Interval).To(BeNil(), "f has no value")
		Expect(bytes.Contains(first.body, []byte(`"rank_by":[{"accessor":"metrics.accuracy","direction":"desc","stderr":"metrics.accuracy_stderr"}]`))).
			To(BeTrue(), string(first.body))

		By("a stderr change alone moves the ranges and the ETag")
		e := byName["e"]
		Expect(testenv.Update(ctx, k8sClient, e, func(r *hubv1alpha1.LeaderboardRow) {
			r.Spec.Metrics.Raw = []byte(`{"accuracy": 0.70, "accuracy_stderr": 0.001}`)
		})).To(Succeed())
		eventually(func(g Gomega) {
			g.Expect(summary(rangeRows(get(slug, "")), names)).To(Equal([]string{"1 1 a", "2 1 b", "3 3 c", "3 3 d", "5 5 e", "6 6 g", "7 7 f"}))
		})
		Expect(get(slug, "").header.Get("ETag")).NotTo(Equal(first.header.Get("ETag")))

		By("the CSV: header, ranks, ranges, guarded formula cells, the GET read's caching")
		for _, path := range []string{slug + "/rows.csv", "/v1/leaderboards/" + string(lb.UID) + "/rows.csv"} {
			r := get(path, "")
			Expect(r.status).To(Equal(http.StatusOK), string(r.body))
			Expect(r.header.Get("Content-Type")).To(Equal("text/csv; charset=utf-8; header=present"))
			Expect(r.header.Get("Content-Disposition")).To(Equal(`attachment; filename="main.csv"`))
			Expect(r.header.Get("Cache-Control")).To(Equal("public, max-age=300, stale-while-revalidate=3600"))
			Expect(r.header.Get("Vary")).To(Equal("Authorization"))
			recs, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
			Expect(err).NotTo(HaveOccurred())
			Expect(recs[0]).To(Equal([]string{"rank", "rank_upper", "interval_low", "interval_high", "id", "created_at", "updated_at",
				"verified", "job_id", "image_digest", "ran_at", "metrics.accuracy", "metrics.accuracy_stderr", "metrics.agent"}))
			Expect(recs).To(HaveLen(8))
			Expect(recs[1][:2]).To(Equal([]string{"1", "1"}))
			Expect(strconv.ParseFloat(recs[1][2], 64)).To(BeNumerically("~", 0.7608, 1e-9))
			Expect(strconv.ParseFloat(recs[1][3], 64)).To(BeNumerically("~", 0.8392, 1e-9))
			Expect(recs[1][4]).To(Equal(string(byName["a"].UID)))
			Expect(recs[1][7:11]).To(Equal([]string{"false", "", "", ""}))
			Expect(recs[1][11:]).To(Equal([]string{"0.8", "0.02", `'=cmd|' /C calc'!A0`}))
			Expect(recs[7][:5]).To(Equal([]string{"7", "7", "", "", string(byName["f"].UID)}))
			Expect(get(path, "", "If-None-Match", r.header.Get("ETag")).status).To(Equal(http.StatusNotModified))
		}
		Expect(get(slug+"/rows.csv?page=2", "").status).To(Equal(http.StatusBadRequest))

		By("the badge: rank and range, escaped title, no script")
		b := byName["b"]
		badgePath := slug + "/rows/" + string(b.UID) + "/badge.svg"
		r := get(badgePath, "")
		Expect(r.status).To(Equal(http.StatusOK), string(r.body))
		Expect(r.header.Get("Content-Type")).To(Equal("image/svg+xml"))
		Expect(r.header.Get("Content-Security-Policy")).To(Equal("default-src 'none'; style-src 'unsafe-inline'"))
		Expect(r.header.Get("X-Content-Type-Options")).To(Equal("nosniff"))
		Expect(r.header.Get("Cache-Control")).To(Equal("public, max-age=300, stale-while-revalidate=3600"))
		svg := string(r.body)
		Expect(svg).To(ContainSubstring(`#2 (1–2)`))
		Expect(svg).To(ContainSubstring(`Terminal-Bench &lt;2.0&gt; &amp; &#34;friends&#34;`))
		Expect(svg).NotTo(ContainSubstring("<2.0>"))
		Expect(get(badgePath, "", "If-None-Match", r.header.Get("ETag")).status).To(Equal(http.StatusNotModified))
		byID := get("/v1/leaderboards/"+string(lb.UID)+"/rows/"+string(b.UID)+"/badge.svg", "")
		Expect(byID.body).To(Equal(r.body))

		By("a hidden row, an unknown row and another board's row have no badge; a malformed id is a 400")
		g := byName["g"]
		Expect(testenv.Update(ctx, k8sClient, g, func(r *hubv1alpha1.LeaderboardRow) { r.Spec.Visibility = hubv1alpha1.RowHide })).To(Succeed())
		hiddenPath := slug + "/rows/" + string(g.UID) + "/badge.svg"
		eventually(func(g Gomega) { g.Expect(get(hiddenPath, "").status).To(Equal(http.StatusNotFound)) })
		Expect(get(hiddenPath, "").header.Get("Cache-Control")).To(Equal("no-store"))
		Expect(get(slug+"/rows/00000000-0000-0000-0000-000000000000/badge.svg", "").status).To(Equal(http.StatusNotFound))
		other := &hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "second"},
			Spec: hubv1alpha1.LeaderboardSpec{Package: ns + "/ds", Name: "second", Title: "Second",
				Visibility: hubv1alpha1.VisibilityPublic},
		}
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		otherRow := newRow(other, "other-row", 1)
		otherPath := "/v1/leaderboards/" + ns + "/ds/" + other.Spec.Name + "/rows/" + string(otherRow.UID) + "/badge.svg"
		eventually(func(g Gomega) { g.Expect(get(otherPath, "").status).To(Equal(http.StatusOK)) })
		Expect(get(slug+"/rows/"+string(otherRow.UID)+"/badge.svg", "").status).To(Equal(http.StatusNotFound))
		bad := get(slug+"/rows/nope/badge.svg", "")
		Expect(bad.status).To(Equal(http.StatusBadRequest))
		Expect(bad.apiError().Details[0].Field).To(Equal("row_id"))

		By("private: members only, never stored; others get the missing board's 404")
		edit(lb, func() { lb.Spec.Visibility = hubv1alpha1.VisibilityPrivate })
		member := memberToken(ns, "podium-org-member")
		eventually(func(g Gomega) { g.Expect(get(slug+"/rows.csv", "").status).To(Equal(http.StatusNotFound)) })
		for _, path := range []string{slug + "/rows.csv", badgePath} {
			anon := get(path, "")
			Expect(anon.status).To(Equal(http.StatusNotFound), path)
			Expect(anon.header.Get("Cache-Control")).To(Equal("no-store"))
			Expect(anon.apiError().Code).To(Equal("not_found"))
			mine := get(path, member)
			Expect(mine.status).To(Equal(http.StatusOK), path)
			Expect(mine.header.Get("Cache-Control")).To(Equal("private, no-store"))
		}
	})
})
