package web_test

import (
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/net/html"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/web"
)

var _ = Describe("A board's charts in a browser", func() {
	It("draws the interval chart in the table's order and the progress chart, visibly, and serves them alone", func() {
		ns := newOrg()
		lb := &hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "charts"},
			Spec: hubv1alpha1.LeaderboardSpec{
				Package: ns + "/terminal-bench", Name: "charts", Title: "Terminal-Bench 2.0, charted",
				Visibility: hubv1alpha1.VisibilityPublic,
				Columns: []hubv1alpha1.Column{
					{ID: "agent", Header: "Agent", Accessor: "metadata.agent", Type: hubv1alpha1.ColumnText},
					{ID: "accuracy", Header: "Accuracy", Accessor: "metrics.accuracy", Type: hubv1alpha1.ColumnNumber},
				},
				RankBy: []hubv1alpha1.RankRule{{
					Accessor: "metrics.accuracy", Direction: hubv1alpha1.Descending, Stderr: "metrics.accuracy_stderr",
				}},
			},
		}
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		path := "/leaderboards/" + ns + "/terminal-bench/charts"
		// Created one after another, each once the previous one ranks: the state of the
		// art moves with baseline, openhands, codex and terminus.
		rows := [][3]string{
			{"a", "baseline", `{"accuracy": 0.55, "accuracy_stderr": 0.03}`},
			{"b", "openhands", `{"accuracy": 0.62, "accuracy_stderr": 0.02}`},
			{"c", "echo", `{"accuracy": 0.50, "accuracy_stderr": 0.04}`},
			{"d", "codex", `{"accuracy": 0.71, "accuracy_stderr": 0.015}`},
			{"e", "gemini-cli", `{"accuracy": 0.70, "accuracy_stderr": 0.02}`},
			{"f", "terminus", `{"accuracy": 0.80, "accuracy_stderr": 0.02}`},
			{"g", "aider", `{"accuracy": 0.77, "accuracy_stderr": 0.025}`},
			{"h", "goose", `{"accuracy": 0.74}`},
		}
		var created time.Time
		for i, r := range rows {
			// Creation times have whole seconds: each row in a later second than the
			// one before, so that the order the rows were set in is the order above.
			Eventually(time.Now).WithTimeout(5 * time.Second).Should(BeTemporally(">=", created.Add(time.Second)))
			row := &hubv1alpha1.LeaderboardRow{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r[0]},
				Spec: hubv1alpha1.LeaderboardRowSpec{
					Leaderboard: lb.Name,
					Metadata:    &apiextensionsv1.JSON{Raw: []byte(`{"agent": "` + r[1] + `"}`)},
					Metrics:     &apiextensionsv1.JSON{Raw: []byte(r[2])},
				},
			}
			Expect(k8sClient.Create(ctx, row)).To(Succeed())
			created = row.CreationTimestamp.Time
			Eventually(func(g Gomega) {
				status, body := get(path, "")
				g.Expect(status).To(Equal(http.StatusOK))
				_, rows, err := web.ParseBoardTable(body)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(rows).To(HaveLen(i + 1))
			}).WithTimeout(60 * time.Second).Should(Succeed())
		}

		dom := dumpDOM(baseURL + path)
		_, table, err := web.ParseBoardTable(dom)
		Expect(err).NotTo(HaveOccurred())
		intervals := chartMarks(dom, "intervals")
		Expect(intervals).To(HaveLen(len(table)), "one mark per ranked row")
		for i, m := range intervals {
			Expect(m.rank).To(Equal(table[i][0]), "mark %d against the table's row %d", i, i)
			Expect(m.text).To(ContainSubstring(table[i][2]), "mark %d names the table's row %d (the agent, after rank and range)", i, i)
			Expect(m.href).To(HavePrefix(path + "/rows/"))
		}
		progress := chartMarks(dom, "progress")
		var steps []string
		for _, m := range progress {
			steps = append(steps, m.text)
		}
		Expect(steps).To(Equal([]string{"baseline 0.55", "openhands 0.62", "codex 0.71", "terminus 0.8"}))
		Expect(dom).To(ContainSubstring(`<desc id="intervals-desc">All 8 rows by Accuracy (metrics.accuracy) (higher is better), in rank order. #1 is terminus with 0.8`))

		// Visible: the marks' colour is on the screen where the page is drawn.
		shot := filepath.Join(GinkgoT().TempDir(), "charts.png")
		screenshot(baseURL+path, shot, 1280, 1100)
		expectPNG(shot, 1280, 1100)
		Expect(countColour(shot, 0x05, 0x50, 0xae)).To(BeNumerically(">", 100), "no mark of the charts is drawn")

		// Alone, as an image: the same chart, drawn by the browser too.
		res, err := http.Get(baseURL + path + "/intervals.svg")
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusOK))
		Expect(res.Header.Get("Content-Type")).To(Equal("image/svg+xml"))
		alone := filepath.Join(GinkgoT().TempDir(), "intervals.png")
		screenshot(baseURL+path+"/intervals.svg", alone, 800, 420)
		Expect(countColour(alone, 0x05, 0x50, 0xae)).To(BeNumerically(">", 50))

		if os.Getenv("PODIUM_UPDATE_SCREENSHOTS") == "1" {
			screenshot(baseURL+path, docsScreenshot("leaderboard-charts.png"), 1280, 1100)
			screenshot(baseURL+path+"/progress.svg", docsScreenshot("chart-progress.png"), 780, 330)
		}
	})
})

// mark is one <a class="mark"> of a chart: its rank (interval chart), link and text.
type mark struct{ rank, href, text string }

// chartMarks reads the marks of the chart with this id, in document order, as the
// browser parsed the page.
func chartMarks(page, id string) []mark {
	doc, err := html.Parse(strings.NewReader(page))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	attr := func(n *html.Node, key string) string {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val
			}
		}
		return ""
	}
	var text func(*html.Node) string
	text = func(n *html.Node) string {
		if n.Type == html.TextNode {
			return n.Data
		}
		if n.Type == html.ElementNode && n.Data == "title" {
			return "" // the tooltip
		}
		var parts []string
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if t := strings.TrimSpace(text(c)); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, " ")
	}
	var out []mark
	var walk func(*html.Node, bool)
	walk = func(n *html.Node, in bool) {
		if n.Type == html.ElementNode && n.Data == "svg" {
			in = attr(n, "id") == id
		}
		if in && n.Type == html.ElementNode && n.Data == "a" && slices.Contains(strings.Fields(attr(n, "class")), "mark") {
			out = append(out, mark{rank: attr(n, "data-rank"), href: attr(n, "href"), text: text(n)})
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, false)
	return out
}

// countColour counts the pixels of a PNG of exactly this colour.
func countColour(path string, r, g, b uint8) int {
	f, err := os.Open(path)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer f.Close()
	img, err := png.Decode(f)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if uint8(cr>>8) == r && uint8(cg>>8) == g && uint8(cb>>8) == b {
				n++
			}
		}
	}
	return n
}
