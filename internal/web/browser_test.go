package web_test

import (
	"bytes"
	"encoding/json"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/net/html"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/web"
)

// The browser tests drive Debian's headless Chromium against the real operator: the
// manager with its controllers, caches, rank index and HTTP server, on a real
// apiserver. PODIUM_UPDATE_SCREENSHOTS=1 also writes the screenshots of docs/.
var _ = Describe("Leaderboard pages in a browser", Ordered, func() {
	// The sample board lives in "demo", as in config/samples, so that the screenshots
	// show what a reader of the samples sees; no other test uses that namespace.
	const sampleOrg = "demo"
	samplePath := "/leaderboards/demo/terminal-bench/main"

	BeforeAll(func() {
		applySamples(sampleOrg, "namespace_demo.yaml", "hub_v1alpha1_dataset.yaml",
			"hub_v1alpha1_leaderboard_public.yaml", "hub_v1alpha1_leaderboardrows.yaml")
		// Ten of the twelve rows rank: one is hidden, one is invalid.
		Eventually(func(g Gomega) {
			status, body := get(samplePath, "")
			g.Expect(status).To(Equal(http.StatusOK))
			_, rows, err := web.ParseBoardTable(body)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rows).To(HaveLen(10))
		}).WithTimeout(60 * time.Second).Should(Succeed())
	})

	It("renders the sample board with its ranks, headers and versions", func() {
		dom := dumpDOM(baseURL + samplePath)
		headers, rows, err := web.ParseBoardTable(dom)
		Expect(err).NotTo(HaveOccurred())
		Expect(headers).To(Equal([]string{"Rank", "Agent", "Model", "Reward", "Cost (USD)", "Report"}))

		// Reward desc, then cost asc with missing costs last; ties share a rank.
		Expect(column(rows, 0)).To(Equal([]string{"1", "2", "3", "3", "5", "5", "7", "8", "9", "10"}))
		Expect(byRank(rows, 1)).To(Equal(map[string][]string{
			"1": {"terminus"}, "2": {"openhands"}, "3": {"codex", "gemini-cli"}, "5": {"aider", "aider"},
			"7": {"goose"}, "8": {"goose"}, "9": {"mini-swe-agent"}, "10": {"echo"},
		}))
		Expect(rows[0]).To(Equal([]string{"1", "terminus", "anthropic/claude-opus-4", "0.82", "12.5", "https://example.com/reports/opus-terminus"}))
		Expect(rows[7][4]).To(Equal("–"), "the row without a cost shows a dash")

		// The page shows the rows of the JSON read, in the same order.
		read := readBoard(sampleOrg+"/terminal-bench", "main")
		Expect(column(rows, 2)).To(Equal(read.models()))
		Expect(column(rows, 0)).To(Equal(read.ranks()))

		Expect(dom).To(ContainSubstring("<title>Terminal-Bench 2.0 · Podium</title>"))
		Expect(dom).To(ContainSubstring(`<li title="c47d2e90-5f81-4b3a-a6c2-7e8f9d0a1b23">2.0</li>`), "the latest version by its tag")
		Expect(dom).To(ContainSubstring(`title="Share of tasks solved."`))
		Expect(dom).To(ContainSubstring(`<a href="https://example.com/reports/opus-terminus" rel="nofollow noopener noreferrer">`))

		shot := filepath.Join(GinkgoT().TempDir(), "board.png")
		screenshot(baseURL+samplePath, shot, 1280, 860)
		expectPNG(shot, 1280, 860)
		if os.Getenv("PODIUM_UPDATE_SCREENSHOTS") == "1" {
			// Tall enough for the charts and the table below them.
			screenshot(baseURL+samplePath, docsScreenshot("leaderboard.png"), 1280, 1640)
			screenshot(baseURL+samplePath+"?sort=cost&dir=asc", docsScreenshot("leaderboard-sorted.png"), 1280, 1640)
			screenshot(baseURL+"/leaderboards", docsScreenshot("leaderboards-index.png"), 1280, 480)
		}
	})

	It("sorts by an enabled column through its header link, keeping each row's rank", func() {
		page := baseURL + samplePath
		dom := dumpDOM(page)
		for _, id := range []string{"agent", "model", "report"} {
			link, err := web.SortLink(dom, id)
			Expect(err).NotTo(HaveOccurred())
			Expect(link).To(BeEmpty(), "column %s has no enableSorting", id)
		}

		page = follow(page, dom, "cost") // numbers start highest first
		dom = dumpDOM(page)
		_, rows, err := web.ParseBoardTable(dom)
		Expect(err).NotTo(HaveOccurred())
		Expect(column(rows, 4)).To(Equal([]string{"12.5", "9.1", "9.1", "7", "3.2", "3.2", "2", "1", "0.5", "–"}))
		Expect(dom).To(ContainSubstring("Sorted by <strong>Cost (USD)</strong> (highest first)"))

		page = follow(page, dom, "cost") // the sorted column's link reverses it
		dom = dumpDOM(page)
		_, rows, err = web.ParseBoardTable(dom)
		Expect(err).NotTo(HaveOccurred())
		Expect(column(rows, 4)).To(Equal([]string{"0.5", "1", "2", "3.2", "3.2", "7", "9.1", "9.1", "12.5", "–"}), "a missing cost stays last")
		Expect(rows[0][:2]).To(Equal([]string{"10", "echo"}), "a row keeps its rank on the board")
		// Rows equal on the sorted column keep the board's order between them.
		_, ranked, err := web.ParseBoardTable(dumpDOM(baseURL + samplePath))
		Expect(err).NotTo(HaveOccurred())
		position := map[string]int{}
		key := func(r []string) string { return r[1] + " " + r[2] } // agent and model
		for i, r := range ranked {
			position[key(r)] = i
		}
		for i := 1; i < len(rows); i++ {
			if rows[i][4] == rows[i-1][4] {
				Expect(position[key(rows[i])]).To(BeNumerically(">", position[key(rows[i-1])]),
					"%s and %s tie on cost but are not in rank order", key(rows[i-1]), key(rows[i]))
			}
		}

		page = follow(page, dom, "reward")
		_, rows, err = web.ParseBoardTable(dumpDOM(page))
		Expect(err).NotTo(HaveOccurred())
		Expect(column(rows, 3)).To(Equal([]string{"0.82", "0.78", "0.78", "0.78", "0.65", "0.65", "0.61", "0.61", "0.4", "0.12"}))
	})

	It("lists the public board, not the private one, on the index", func() {
		applySamples(sampleOrg, "hub_v1alpha1_leaderboard_private.yaml")
		dom := dumpDOM(baseURL + "/leaderboards")
		Expect(dom).To(ContainSubstring(`<a href="/leaderboards/demo/terminal-bench/main">Terminal-Bench 2.0</a>`))
		Expect(dom).NotTo(ContainSubstring("Nightly"))
	})

	It("marks a row changed in the last 7 days, linking to its history page", func() {
		key := client.ObjectKey{Namespace: sampleOrg, Name: "main-opus-terminus"}
		row := &hubv1alpha1.LeaderboardRow{}
		Eventually(func() error {
			if err := k8sClient.Get(ctx, key, row); err != nil {
				return err
			}
			row.Spec.Metrics.Raw = bytes.Replace(row.Spec.Metrics.Raw, []byte("0.82"), []byte("0.84"), 1)
			return k8sClient.Update(ctx, row)
		}).Should(Succeed())
		var board string
		Eventually(func(g Gomega) {
			var status int
			status, board = get(samplePath, "")
			g.Expect(status).To(Equal(http.StatusOK))
			g.Expect(board).To(ContainSubstring("0.84"))
			g.Expect(board).To(ContainSubstring(`class="changed"`))
		}).Should(Succeed())
		Expect(strings.Count(board, `class="changed"`)).To(Equal(1), "only the changed row is marked")
		historyPath := samplePath + "/rows/" + string(row.UID) + "/history"
		Expect(board).To(ContainSubstring(`<a class="changed" href="` + historyPath + `"`))
		Expect(board).To(ContainSubstring("changed " + time.Now().UTC().Format(time.DateOnly)))

		dom := dumpDOM(baseURL + historyPath)
		Expect(dom).To(ContainSubstring("<code>metrics.reward</code>"))
		Expect(dom).To(MatchRegexp(`<code>0\.82</code></td><td class="value"><code>0\.84</code>`))
		Expect(dom).NotTo(ContainSubstring(`<th scope="col">By</th>`), "the board does not show authors")

		By("a hidden row's history is not shown to the public, as a missing row's")
		hidden := &hubv1alpha1.LeaderboardRow{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: sampleOrg, Name: "main-opus-unreleased"}, hidden)).To(Succeed())
		status, page := get(samplePath+"/rows/"+string(hidden.UID)+"/history", "")
		Expect(status).To(Equal(http.StatusNotFound))
		_, missing := get(samplePath+"/rows/00000000-0000-4000-8000-000000000000/history", "")
		Expect(page).To(Equal(missing))

		shot := filepath.Join(GinkgoT().TempDir(), "history.png")
		screenshot(baseURL+historyPath, shot, 1280, 480)
		expectPNG(shot, 1280, 480)
		if os.Getenv("PODIUM_UPDATE_SCREENSHOTS") == "1" {
			screenshot(baseURL+samplePath, docsScreenshot("leaderboard-changed.png"), 1280, 1640)
			screenshot(baseURL+historyPath, docsScreenshot("row-history.png"), 1280, 860)
		}
	})
})

var _ = Describe("A private board", func() {
	It("is a 404 page for an anonymous visitor, identical to a missing board, and readable by a member", func() {
		org := newOrg()
		applySamples(org, "hub_v1alpha1_dataset.yaml", "hub_v1alpha1_leaderboard_private.yaml")
		path := "/leaderboards/" + org + "/terminal-bench/nightly_internal"
		member := memberToken(org, "podium-org-member")
		// The board is in the cache once the member can see it; only then does an
		// anonymous 404 mean "private" rather than "not there yet".
		Eventually(func(g Gomega) {
			status, body := get(path, member)
			g.Expect(status).To(Equal(http.StatusOK))
			g.Expect(body).To(ContainSubstring("Nightly runs (internal)"))
		}).WithTimeout(30 * time.Second).Should(Succeed())

		missingStatus, missing := get("/leaderboards/"+org+"/terminal-bench/no-such-board", "")
		Expect(missingStatus).To(Equal(http.StatusNotFound))
		status, body := get(path, "")
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(body).To(Equal(missing))
		status, body = get(path+"?sort=nope&page=0", "")
		Expect(status).To(Equal(http.StatusNotFound), "a bad query must not reveal the board")
		Expect(body).To(Equal(missing))

		other := newOrg()
		status, body = get(path, memberToken(other, "podium-org-member"))
		Expect(status).To(Equal(http.StatusNotFound), "a member of another org")
		Expect(body).To(Equal(missing))

		dom := dumpDOM(baseURL + path)
		Expect(dom).To(ContainSubstring("<h1>Leaderboard not found</h1>"))
		Expect(dom).NotTo(ContainSubstring("Nightly"))
	})
})

var _ = Describe("A row's markdown", func() {
	It("runs no script, style or event handler in the browser", func() {
		// The payloads report to the beacon server when anything in them runs: a
		// script, an onerror or onload handler, a stylesheet, a javascript: link.
		payload := func(prefix string) string {
			b := beacon.url + prefix
			return strings.Join([]string{
				`<script>document.title='pwned-script';new Image().src='` + b + `script'</script>`,
				`<img src=x onerror="document.title='pwned-onerror';new Image().src='` + b + `onerror'">`,
				`<svg onload="new Image().src='` + b + `svg'"></svg>`,
				`<style>body{background:url(` + b + `style)}</style>`,
				`<iframe src="` + b + `iframe"></iframe>`,
				`<a href="javascript:new Image().src='` + b + `a-js'">html link</a>`,
				`[md link](javascript:new%20Image\(\).src='` + b + `md-js')`,
				`![pixel](` + b + `pixel.png)`,
				`**still bold**`,
			}, "\n\n")
		}

		// Control: the same payloads unsanitised, on a page without a CSP, do run in
		// this browser and do reach the beacon, so silence below means nothing ran.
		beacon.setControl("xss", "<!DOCTYPE html><html><head><title>control</title></head><body>"+payload("/ctl/")+"</body></html>")
		dom := dumpDOM(beacon.url + "/control/xss")
		Expect(dom).To(ContainSubstring("<title>pwned-"))
		Eventually(func() []string { return beacon.hitsUnder("/ctl/") }).WithTimeout(10 * time.Second).
			Should(ContainElements("/ctl/script", "/ctl/onerror", "/ctl/style"))

		org := newOrg()
		Expect(k8sClient.Create(ctx, &hubv1alpha1.Dataset{
			ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "probe"},
			Spec: hubv1alpha1.DatasetSpec{Versions: []hubv1alpha1.DatasetVersion{{
				ID: "0b7c1f2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b", Tag: "1", CreatedAt: metav1.Now(),
			}}},
		})).To(Succeed())
		enable := true
		Expect(k8sClient.Create(ctx, &hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "xss"},
			Spec: hubv1alpha1.LeaderboardSpec{
				Package: org + "/probe", Name: "xss", Title: "XSS probe", Visibility: hubv1alpha1.VisibilityPublic,
				MetadataSchema: rawJSON(map[string]any{"type": "object", "properties": map[string]any{
					"agent": map[string]any{"type": "string"}, "notes": map[string]any{"type": "string"},
					"report": map[string]any{"type": "object"},
				}}),
				MetricsSchema: rawJSON(map[string]any{"type": "object", "properties": map[string]any{"score": map[string]any{"type": "number"}}}),
				Columns: []hubv1alpha1.Column{
					{ID: "agent", Header: "Agent", Accessor: "metadata.agent", Type: hubv1alpha1.ColumnText},
					{ID: "notes", Header: "Notes", Accessor: "metadata.notes", Type: hubv1alpha1.ColumnMarkdown},
					{ID: "report", Header: "Report", Accessor: "metadata.report", Type: hubv1alpha1.ColumnLink},
					{ID: "score", Header: "Score", Accessor: "metrics.score", Type: hubv1alpha1.ColumnNumber, EnableSorting: &enable},
				},
				RankBy: []hubv1alpha1.RankRule{{Accessor: "metrics.score", Direction: hubv1alpha1.Descending}},
			},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &hubv1alpha1.LeaderboardRow{
			ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "evil"},
			Spec: hubv1alpha1.LeaderboardRowSpec{
				Leaderboard: "xss",
				Metadata: rawJSON(map[string]any{
					"agent":  `"><img src=x onerror="new Image().src='` + beacon.url + `/xss/text'">`,
					"notes":  payload("/xss/"),
					"report": map[string]any{"url": "javascript:new Image().src='" + beacon.url + "/xss/link'", "label": "report"},
				}),
				Metrics: rawJSON(map[string]any{"score": 1}),
			},
		})).To(Succeed())
		path := "/leaderboards/" + org + "/probe/xss"
		Eventually(func(g Gomega) {
			_, body := get(path, "")
			_, rows, err := web.ParseBoardTable(body)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rows).To(HaveLen(1))
		}).WithTimeout(30 * time.Second).Should(Succeed())

		dom = dumpDOM(baseURL + path)
		Expect(dom).To(ContainSubstring("<title>XSS probe · Podium</title>"), "a script changed the title")
		Expect(dom).To(ContainSubstring("<strong>still bold</strong>"), "the markdown was rendered")
		doc, err := html.Parse(strings.NewReader(dom))
		Expect(err).NotTo(HaveOccurred())
		Expect(dangerous(doc)).To(BeEmpty())
		// The same browser run reported the control's payloads within this time.
		Consistently(func() []string { return beacon.hitsUnder("/xss/") }).WithTimeout(2 * time.Second).Should(BeEmpty())
	})
})

// follow resolves the sort link of column id on the page at base.
func follow(base, dom, id string) string {
	link, err := web.SortLink(dom, id)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, link).NotTo(BeEmpty(), "column %s has no sort link", id)
	b, err := url.Parse(base)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ref, err := url.Parse(link)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return b.ResolveReference(ref).String()
}

func column(rows [][]string, i int) []string {
	out := make([]string, len(rows))
	for j, r := range rows {
		out[j] = r[i]
	}
	return out
}

// byRank groups column i by the rank column, each group sorted: the order inside a tie
// depends on creation times and UIDs, which a test does not choose.
func byRank(rows [][]string, i int) map[string][]string {
	out := map[string][]string{}
	for _, r := range rows {
		out[r[0]] = append(out[r[0]], r[i])
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// dangerous lists what in a parsed page could run or load something a row put there:
// scripts, styles, frames, objects, on* attributes and javascript: URLs.
func dangerous(n *html.Node) []string {
	var out []string
	if n.Type == html.ElementNode {
		switch n.Data {
		case "svg":
			// The page's own charts (docs/web.md, "Charts") are the only SVG allowed: an
			// <svg class="chart"> directly in a <figure class="chart">, which no row's
			// markdown can make (raw HTML is omitted). Their content is checked below.
			if !hasClass(n, "chart") || n.Parent == nil || n.Parent.Data != "figure" || !hasClass(n.Parent, "chart") {
				out = append(out, "<"+n.Data+">")
			}
		case "script", "iframe", "object", "embed", "foreignobject":
			out = append(out, "<"+n.Data+">")
		case "style":
			out = append(out, "<style> in the page")
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") ||
				strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") ||
				(n.Data == "img" && !strings.HasPrefix(a.Val, "/assets/") && a.Key == "src") {
				out = append(out, "<"+n.Data+" "+a.Key+"="+a.Val+">")
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, dangerous(c)...)
	}
	return out
}

func hasClass(n *html.Node, class string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" && slices.Contains(strings.Fields(a.Val), class) {
			return true
		}
	}
	return false
}

func rawJSON(v any) *apiextensionsv1.JSON {
	b, err := json.Marshal(v)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return &apiextensionsv1.JSON{Raw: b}
}

// readResult is the part of a POST /v1/leaderboard-read answer the pages are checked against.
type readResult struct {
	Rows []struct {
		Rank     int            `json:"rank"`
		Metadata map[string]any `json:"metadata"`
	} `json:"rows"`
}

func (r readResult) models() []string {
	out := make([]string, len(r.Rows))
	for i, row := range r.Rows {
		out[i], _ = row.Metadata["model"].(string)
	}
	return out
}

func (r readResult) ranks() []string {
	out := make([]string, len(r.Rows))
	for i, row := range r.Rows {
		out[i] = strconv.Itoa(row.Rank)
	}
	return out
}

func readBoard(pkg, name string) readResult {
	body, err := json.Marshal(map[string]any{"package": pkg, "name": name})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	res, err := http.Post(baseURL+"/v1/leaderboard-read", "application/json", bytes.NewReader(body))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer res.Body.Close()
	ExpectWithOffset(1, res.StatusCode).To(Equal(http.StatusOK))
	var out readResult
	ExpectWithOffset(1, json.NewDecoder(res.Body).Decode(&out)).To(Succeed())
	return out
}

func expectPNG(path string, width, height int) {
	f, err := os.Open(path)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, []int{cfg.Width, cfg.Height}).To(Equal([]int{width, height}))
}

func docsScreenshot(name string) string {
	dir := filepath.Join(testenv.RepoRoot(), "docs", "screenshots")
	ExpectWithOffset(1, os.MkdirAll(dir, 0o755)).To(Succeed())
	return filepath.Join(dir, name)
}
