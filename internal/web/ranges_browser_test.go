package web_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/web"
)

var _ = Describe("A board with rank ranges in a browser", func() {
	It("shows each row's range and its value ± uncertainty", func() {
		ns := newOrg()
		lb := &hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ranges"},
			Spec: hubv1alpha1.LeaderboardSpec{
				Package: ns + "/terminal-bench", Name: "ranges", Title: "Terminal-Bench 2.0, with uncertainty",
				Visibility: hubv1alpha1.VisibilityPublic,
				Columns: []hubv1alpha1.Column{
					{ID: "agent", Header: "Agent", Accessor: "metadata.agent", Type: hubv1alpha1.ColumnText},
					{ID: "accuracy", Header: "Accuracy", Accessor: "metrics.accuracy", Type: hubv1alpha1.ColumnNumber,
						Description: "Share of tasks solved, ± the 95% interval's half width."},
				},
				RankBy: []hubv1alpha1.RankRule{{
					Accessor: "metrics.accuracy", Direction: hubv1alpha1.Descending, Stderr: "metrics.accuracy_stderr",
				}},
			},
		}
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		// docs/ranking.md, worked table 1.
		for _, r := range [][3]string{
			{"a", "terminus", `{"accuracy": 0.80, "accuracy_stderr": 0.02}`},
			{"b", "openhands", `{"accuracy": 0.78, "accuracy_stderr": 0.01}`},
			{"c", "codex", `{"accuracy": 0.74, "accuracy_stderr": 0.005}`},
			{"d", "gemini-cli", `{"accuracy": 0.74}`},
			{"e", "aider", `{"accuracy": 0.70, "accuracy_stderr": 0.03}`},
			{"f", "echo", `{"accuracy_stderr": 0.01}`},
			{"g", "goose", `{"accuracy": 0.60, "accuracy_stderr": -0.1}`},
		} {
			Expect(k8sClient.Create(ctx, &hubv1alpha1.LeaderboardRow{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r[0]},
				Spec: hubv1alpha1.LeaderboardRowSpec{
					Leaderboard: lb.Name,
					Metadata:    &apiextensionsv1.JSON{Raw: []byte(`{"agent": "` + r[1] + `"}`)},
					Metrics:     &apiextensionsv1.JSON{Raw: []byte(r[2])},
				},
			})).To(Succeed())
		}
		path := "/leaderboards/" + ns + "/terminal-bench/ranges"
		Eventually(func(g Gomega) {
			status, body := get(path, "")
			g.Expect(status).To(Equal(http.StatusOK))
			_, rows, err := web.ParseBoardTable(body)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rows).To(HaveLen(7))
		}).WithTimeout(60 * time.Second).Should(Succeed())

		dom := dumpDOM(baseURL + path)
		headers, rows, err := web.ParseBoardTable(dom)
		Expect(err).NotTo(HaveOccurred())
		Expect(headers).To(Equal([]string{"Rank", "Range", "Agent", "Accuracy"}))
		got := map[string]string{}
		for _, r := range rows {
			got[r[2]] = strings.Join([]string{r[0], r[1], r[3]}, " | ")
		}
		Expect(got).To(Equal(map[string]string{
			"terminus":   "1 | 1 | 0.8 ± 0.0392",
			"openhands":  "2 | 1–2 | 0.78 ± 0.0196",
			"codex":      "3 | 3 | 0.74 ± 0.0098",
			"gemini-cli": "3 | 3 | 0.74",
			"aider":      "5 | 3–5 | 0.7 ± 0.0588",
			"goose":      "6 | 6 | 0.6",
			"echo":       "7 | 7 | –",
		}))
		Expect(dom).To(ContainSubstring(`title="The data supports ranks 3 to 5: 2 rows are ahead beyond doubt`))

		shot := filepath.Join(GinkgoT().TempDir(), "ranges.png")
		screenshot(baseURL+path, shot, 1280, 640)
		expectPNG(shot, 1280, 640)
		if os.Getenv("PODIUM_UPDATE_SCREENSHOTS") == "1" {
			screenshot(baseURL+path, docsScreenshot("leaderboard-ranges.png"), 1280, 1400)
		}
	})
})
