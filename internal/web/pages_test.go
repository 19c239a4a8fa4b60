package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/scheme"
)

// fakeRanked is a board's rank index over a fixed slice.
type fakeRanked struct {
	entries []Entry
	records []ranking.Record
	size    int // Len when it differs from len(entries), to stand in for a huge board
	version uint64
}

func (f *fakeRanked) Len() int {
	if f.size > 0 {
		return f.size
	}
	return len(f.entries)
}
func (f *fakeRanked) Version() uint64            { return f.version }
func (f *fakeRanked) Progress() []ranking.Record { return f.records }
func (f *fakeRanked) Page(offset, limit int) []Entry {
	if offset >= len(f.entries) {
		return nil
	}
	return f.entries[offset:min(offset+limit, len(f.entries))]
}

// fakeSort orders by the first rule's number value; ties keep their order. The real
// comparison is ranking.Sort's, exercised against the apiserver in the suite.
func fakeSort(rules []hubv1alpha1.RankRule, rows []*hubv1alpha1.LeaderboardRow) []*hubv1alpha1.LeaderboardRow {
	out := slices.Clone(rows)
	num := func(r *hubv1alpha1.LeaderboardRow) float64 {
		v, _ := decodeRow(r).lookup(rules[0].Accessor)
		f, _ := v.(interface{ Float64() (float64, error) }).Float64()
		return f
	}
	slices.SortStableFunc(out, func(a, b *hubv1alpha1.LeaderboardRow) int {
		c := 0
		if num(a) < num(b) {
			c = -1
		} else if num(a) > num(b) {
			c = 1
		}
		if rules[0].Direction == hubv1alpha1.Descending {
			c = -c
		}
		return c
	})
	return out
}

type fakeReviewer struct {
	allowed map[string]bool // user -> may get leaderboards
	err     error
}

func (f *fakeReviewer) Authenticate(context.Context, string) (*authn.Caller, error) {
	return nil, errors.New("not used")
}

func (f *fakeReviewer) Allowed(_ context.Context, c *authn.Caller, a authn.Attributes) (bool, error) {
	if f.err != nil {
		return false, f.err
	}
	return !c.Anonymous && a.Verb == "get" && a.Resource == "leaderboards" && f.allowed[c.User], nil
}

func board(ns, name, title string, vis hubv1alpha1.Visibility) *hubv1alpha1.Leaderboard {
	desc := "Results of agents on " + name + "."
	return &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: ns + "/bench", Name: name, Title: title, Description: &desc, Visibility: vis,
			Columns: testColumns,
		},
		Status: hubv1alpha1.LeaderboardStatus{DatasetVersionIDs: []string{"v1-id", "v2-id"}},
	}
}

func rankedRows(n int) []Entry {
	out := make([]Entry, n)
	for i := range out {
		r := row(`{"agent":"agent-`+string(rune('a'+i%26))+`","notes":"**ok** <img src=x onerror=alert(1)><script>x</script>"}`,
			`{"reward":`+[]string{"0.9", "0.7", "0.7", "0.5", "0.3"}[i%5]+`}`)
		r.UID = types.UID("row-" + string(rune('a'+i%26)) + string(rune('a'+i/26)))
		out[i] = Entry{Rank: []int{1, 2, 2, 4, 5}[i%5] + 5*(i/5), Row: r}
	}
	return out
}

type fixture struct {
	pages    *Pages
	reviewer *fakeReviewer
}

func newFixture(t *testing.T, ranked map[types.UID]Ranked, objs ...client.Object) *fixture {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...)
	for _, f := range index.Fields() {
		b = b.WithIndex(f.Object, f.Name, f.Values)
	}
	c := b.Build()
	rev := &fakeReviewer{allowed: map[string]bool{"member": true}}
	p, err := New(Options{
		Reader: c,
		Ranking: func(uid types.UID) Ranked {
			if r, ok := ranked[uid]; ok {
				return r
			}
			return nil
		},
		Sort:     fakeSort,
		Reviewer: rev,
		Log:      logr.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{pages: p, reviewer: rev}
}

// get serves one request through the routes as a ServeMux would, as the given user
// ("" = anonymous).
// result is what a test reads of a response (its body is returned as a string).
type result struct {
	StatusCode int
	Header     http.Header
}

func (f *fixture) get(t *testing.T, path, user string) (result, string) {
	t.Helper()
	mux := http.NewServeMux()
	for pattern, h := range f.pages.Routes() {
		mux.Handle(pattern, h)
	}
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if user != "" {
		req = req.WithContext(authn.WithCaller(req.Context(), &authn.Caller{User: user}))
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	res := rec.Result()
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{StatusCode: res.StatusCode, Header: res.Header}, string(body)
}

// table reads the board table of a page: the header texts and each row's cell texts.
func table(t *testing.T, page string) (headers []string, rows [][]string) {
	t.Helper()
	headers, rows, err := ParseBoardTable(page)
	if err != nil {
		t.Fatal(err)
	}
	return headers, rows
}

// ParseBoardTable reads the board table (id="board") of a page as a browser parses it:
// the header texts (without the sort arrows and info marks) and each row's cell texts.
// Exported for the browser tests of package web_test.
func ParseBoardTable(page string) (headers []string, rows [][]string, err error) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return nil, nil, err
	}
	var walk func(*html.Node, bool)
	walk = func(n *html.Node, inBoard bool) {
		if n.Type == html.ElementNode && n.Data == "table" {
			inBoard = slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == "id" && a.Val == "board" })
		}
		if inBoard && n.Type == html.ElementNode {
			switch n.Data {
			case "th":
				headers = append(headers, strings.TrimSpace(nodeText(n)))
			case "tr":
				if n.Parent.Data == "tbody" {
					var cells []string
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						if c.Type == html.ElementNode && c.Data == "td" {
							cells = append(cells, strings.TrimSpace(nodeText(c)))
						}
					}
					rows = append(rows, cells)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBoard)
		}
	}
	walk(doc, false)
	return headers, rows, nil
}

// SortLink returns the href of the sort link in the header of column id, or "".
func SortLink(page, id string) (string, error) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "", err
	}
	var find func(*html.Node, bool) string
	find = func(n *html.Node, inHeader bool) string {
		if n.Type == html.ElementNode && n.Data == "th" {
			inHeader = slices.Contains(n.Attr, html.Attribute{Key: "data-column", Val: id})
		}
		if inHeader && n.Type == html.ElementNode && n.Data == "a" {
			for _, a := range n.Attr {
				if a.Key == "href" {
					return a.Val
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if h := find(c, inHeader); h != "" {
				return h
			}
		}
		return ""
	}
	return find(doc, false), nil
}

// nodeText is the text of n without the sort arrows and info marks of headers.
func nodeText(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	if n.Type == html.ElementNode && n.Data == "span" && slices.ContainsFunc(n.Attr, func(a html.Attribute) bool {
		return a.Key == "class" && (a.Val == "arrow" || a.Val == "info")
	}) {
		return ""
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(nodeText(c))
	}
	return b.String()
}

func TestBoardPage(t *testing.T) {
	pub := board("acme", "swe", "SWE <Bench>", hubv1alpha1.VisibilityPublic)
	ds := &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "bench"},
		Spec: hubv1alpha1.DatasetSpec{Versions: []hubv1alpha1.DatasetVersion{{ID: "v1-id", Tag: "1.0"}}}}
	f := newFixture(t, map[types.UID]Ranked{pub.UID: &fakeRanked{entries: rankedRows(5), version: 1}}, pub, ds)

	res, body := f.get(t, "/leaderboards/acme/bench/swe", "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	for h, want := range map[string]string{
		"Content-Security-Policy": ContentSecurityPolicy,
		"Content-Type":            "text/html; charset=utf-8",
		"X-Content-Type-Options":  "nosniff",
		"Cache-Control":           httpapi.PublicCacheControl,
	} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	headers, rows := table(t, body)
	if diff := cmp.Diff([]string{"Rank", "Agent", "Reward", "Notes"}, headers); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	wantRows := [][]string{
		{"1", "agent-a", "0.9", "ok x"}, {"2", "agent-b", "0.7", "ok x"}, {"2", "agent-c", "0.7", "ok x"},
		{"4", "agent-d", "0.5", "ok x"}, {"5", "agent-e", "0.3", "ok x"},
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		"<title>SWE &lt;Bench&gt; · Podium</title>",
		`<li title="v1-id">1.0</li>`, `<li title="v2-id"><code>v2-id</code></li>`,
		`title="Mean reward"`, `class="right"`, `class="center"`,
		`<p class="description">Results of agents on swe.</p>`,
		`href="?dir=desc&amp;sort=reward"`, `href="?dir=asc&amp;sort=agent"`,
		"Rows 1–5 of 5",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "onerror") {
		t.Error("a row's <script> reached the page")
	}
}

func TestBoardPageSortsAndPages(t *testing.T) {
	pub := board("acme", "swe", "SWE", hubv1alpha1.VisibilityPublic)
	f := newFixture(t, map[types.UID]Ranked{pub.UID: &fakeRanked{entries: rankedRows(60)}}, pub)

	_, body := f.get(t, "/leaderboards/acme/bench/swe?sort=reward&dir=asc", "")
	_, rows := table(t, body)
	if len(rows) != PageSize {
		t.Fatalf("%d rows, want %d", len(rows), PageSize)
	}
	// Lowest reward first, each row keeping its rank on the board.
	if diff := cmp.Diff([]string{"5", "agent-e", "0.3", "ok x"}, rows[0]); diff != "" {
		t.Errorf("first row (-want +got):\n%s", diff)
	}
	for _, want := range []string{"Sorted by <strong>Reward</strong> (lowest first)", `aria-sort="ascending"`,
		`href="?dir=asc&amp;page=2&amp;sort=reward"`, "Rows 1–50 of 60"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	sorts := 0
	f.pages.o.Sort = func(rules []hubv1alpha1.RankRule, rows []*hubv1alpha1.LeaderboardRow) []*hubv1alpha1.LeaderboardRow {
		sorts++
		return fakeSort(rules, rows)
	}
	_, body = f.get(t, "/leaderboards/acme/bench/swe?sort=reward&dir=asc&page=2", "")
	if sorts != 0 {
		t.Errorf("the next page of a kept order sorted the board again")
	}
	if _, rows = table(t, body); len(rows) != 10 || rows[9][2] != "0.9" {
		t.Errorf("page 2 rows = %v, want 10 ending with the highest reward", rows)
	}
	_, body = f.get(t, "/leaderboards/acme/bench/swe?page=5", "")
	if _, rows = table(t, body); len(rows) != 1 || !strings.Contains(rows[0][0], "No rows on this page") {
		t.Errorf("page past the end rows = %v", rows)
	}
}

func TestBoardTooLargeToSort(t *testing.T) {
	pub := board("acme", "big", "Big", hubv1alpha1.VisibilityPublic)
	f := newFixture(t, map[types.UID]Ranked{pub.UID: &fakeRanked{entries: rankedRows(5), size: MaxSortRows + 1}}, pub)
	res, body := f.get(t, "/leaderboards/acme/bench/big?sort=reward", "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	if !strings.Contains(body, "Sorting by a column is available on boards of up to 20,000 rows") || strings.Contains(body, "sort=") {
		t.Errorf("a board above MaxSortRows offers sorting:\n%s", body)
	}
	if _, rows := table(t, body); rows[0][1] != "agent-a" {
		t.Errorf("rows not in rank order: %v", rows)
	}
}

func TestPrivateBoardIsNotFound(t *testing.T) {
	priv := board("acme", "secret", "Secret", hubv1alpha1.VisibilityPrivate)
	noVis := board("acme", "default", "Default", "")
	f := newFixture(t, map[types.UID]Ranked{priv.UID: &fakeRanked{entries: rankedRows(3)}}, priv, noVis)

	missingRes, missing := f.get(t, "/leaderboards/acme/bench/nope", "")
	if missingRes.StatusCode != http.StatusNotFound {
		t.Fatalf("missing board: status %d", missingRes.StatusCode)
	}
	for _, tc := range []struct{ path, user string }{
		{"/leaderboards/acme/bench/secret", ""},
		{"/leaderboards/acme/bench/secret", "stranger"},
		{"/leaderboards/acme/bench/default", ""},
		{"/leaderboards/acme/bench/secret?sort=bad&page=0", ""},
		{"/leaderboards/acme/bench/nope", "member"},
	} {
		res, body := f.get(t, tc.path, tc.user)
		if res.StatusCode != http.StatusNotFound || body != missing {
			t.Errorf("%s as %q: status %d, body differs from a missing board's: %v", tc.path, tc.user, res.StatusCode, body != missing)
		}
		if got := res.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s as %q: Cache-Control = %q, want no-store (a cache must not keep a 404 a member would get a page for)", tc.path, tc.user, got)
		}
	}
	res, body := f.get(t, "/leaderboards/acme/bench/secret", "member")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `<span class="badge"`) {
		t.Fatalf("member: status %d", res.StatusCode)
	}
	if got := res.Header.Get("Cache-Control"); got != "private, no-store" {
		t.Errorf("Cache-Control = %q", got)
	}
	f.reviewer.err = errors.New("apiserver down")
	if res, _ := f.get(t, "/leaderboards/acme/bench/secret", "member"); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("review failure: status %d, want 503", res.StatusCode)
	}
}

func TestBadQueryOnPublicBoard(t *testing.T) {
	pub := board("acme", "swe", "SWE", hubv1alpha1.VisibilityPublic)
	f := newFixture(t, nil, pub)
	for path, want := range map[string]string{
		"/leaderboards/acme/bench/swe?page=0":      "page: must be a whole number from 1",
		"/leaderboards/acme/bench/swe?sort=notes":  "sort: this column cannot be sorted",
		"/leaderboards/acme/bench/swe?sort=a&dir=": "sort: no column has this id",
	} {
		res, body := f.get(t, path, "")
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: status %d, want 400 naming %q", path, res.StatusCode, want)
		}
	}
	// A board the rank index does not know yet is an empty table, not an error.
	res, body := f.get(t, "/leaderboards/acme/bench/swe", "")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "No ranked rows yet.") {
		t.Errorf("status %d, body lacks the empty note", res.StatusCode)
	}
}

func TestIndexListsPublicBoards(t *testing.T) {
	a := board("acme", "swe", "SWE", hubv1alpha1.VisibilityPublic)
	b := board("beta", "math", "Math", hubv1alpha1.VisibilityPublic)
	b.Spec.Package = "beta/bench"
	priv := board("acme", "secret", "Secret", hubv1alpha1.VisibilityPrivate)
	f := newFixture(t, map[types.UID]Ranked{a.UID: &fakeRanked{entries: rankedRows(3)}}, a, b, priv)
	for _, user := range []string{"", "member"} {
		res, body := f.get(t, "/leaderboards", user)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
		if !strings.Contains(body, `<a href="/leaderboards/acme/bench/swe">SWE</a>`) ||
			!strings.Contains(body, `<a href="/leaderboards/beta/bench/math">Math</a>`) {
			t.Errorf("index lacks a public board:\n%s", body)
		}
		if strings.Contains(body, "Secret") {
			t.Errorf("index lists a private board")
		}
		if strings.Index(body, "acme/bench/swe") > strings.Index(body, "beta/bench/math") {
			t.Errorf("boards not in slug order")
		}
	}
	if res, _ := f.get(t, "/leaderboards/", ""); res.StatusCode != http.StatusMovedPermanently {
		t.Errorf("/leaderboards/ status %d, want a redirect", res.StatusCode)
	}
}

func TestAssets(t *testing.T) {
	f := newFixture(t, nil)
	for path, ctype := range map[string]string{"/assets/style.css": "text/css; charset=utf-8", "/assets/favicon.svg": "image/svg+xml"} {
		res, body := f.get(t, path, "")
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != ctype || body == "" {
			t.Errorf("%s: status %d, type %q", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
	if res, _ := f.get(t, "/assets/nope.js", ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("missing asset status %d", res.StatusCode)
	}
}

func TestKeptPagesAndETag(t *testing.T) {
	pub := board("acme", "swe", "SWE", hubv1alpha1.VisibilityPublic)
	ranked := &fakeRanked{entries: rankedRows(3), version: 1}
	f := newFixture(t, map[types.UID]Ranked{pub.UID: ranked}, pub)
	mux := http.NewServeMux()
	for pattern, h := range f.pages.Routes() {
		mux.Handle(pattern, h)
	}
	get := func(path, inm string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	first := get("/leaderboards/acme/bench/swe", "")
	etag := first.Header().Get("ETag")
	if first.Code != http.StatusOK || etag == "" {
		t.Fatalf("status %d, ETag %q", first.Code, etag)
	}
	if got := get("/leaderboards/acme/bench/swe", etag); got.Code != http.StatusNotModified || got.Body.Len() != 0 {
		t.Errorf("If-None-Match of the current ETag: status %d, %d bytes; want 304, empty", got.Code, got.Body.Len())
	}
	if got := get("/leaderboards/acme/bench/swe", `"other", W/`+etag); got.Code != http.StatusNotModified {
		t.Errorf("weak ETag in a list: status %d, want 304", got.Code)
	}
	if got := get("/leaderboards/acme/bench/swe?page=2", etag); got.Code != http.StatusOK || got.Header().Get("ETag") == etag {
		t.Errorf("another page shares the ETag")
	}
	if f.pages.pages.Len() != 2 {
		t.Errorf("%d pages kept, want 2", f.pages.pages.Len())
	}

	// A changed row (a new index version) is a new page, never the kept one.
	r := *ranked.entries[0].Row
	r.Spec.Metadata = row(`{"agent":"renamed"}`, "").Spec.Metadata
	ranked.entries[0].Row = &r
	ranked.version = 2
	got := get("/leaderboards/acme/bench/swe", etag)
	if got.Code != http.StatusOK || got.Header().Get("ETag") == etag {
		t.Fatalf("after a change: status %d, same ETag %v", got.Code, got.Header().Get("ETag") == etag)
	}
	if _, rows := table(t, got.Body.String()); rows[0][1] != "renamed" {
		t.Errorf("after a change the page shows %v", rows[0])
	}
}

// TestVerifiedFilter: verified rows carry a mark; ?verified=1 shows only them, with their
// ranks on the board, and the pager and sort links keep the filter.
func TestVerifiedFilter(t *testing.T) {
	pub := board("acme", "ver", "Ver", hubv1alpha1.VisibilityPublic)
	entries := rankedRows(5)
	for _, i := range []int{1, 3} {
		r := entries[i].Row
		r.Generation = 1
		r.Status.Provenance = &hubv1alpha1.RowProvenance{PodName: "p", PodUID: "u", Requester: "alice",
			Images: []hubv1alpha1.ContainerImage{{Name: "eval", ImageID: "repo@sha256:abc"}}}
		r.Status.Conditions = []metav1.Condition{{Type: hubv1alpha1.ConditionVerified, Status: metav1.ConditionTrue, ObservedGeneration: 1}}
	}
	f := newFixture(t, map[types.UID]Ranked{pub.UID: &fakeRanked{entries: entries}}, pub)
	res, all := f.get(t, "/leaderboards/acme/bench/ver", "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	if n := strings.Count(all, `<span class="verified"`); n != 2 {
		t.Errorf("%d verified marks, want 2", n)
	}
	if strings.Contains(all, "alice") {
		t.Error("the public page names a run's requester")
	}
	if !strings.Contains(all, `href="?verified=1"`) {
		t.Errorf("no link to the verified rows:\n%s", all)
	}
	res, only := f.get(t, "/leaderboards/acme/bench/ver?verified=1", "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	_, rows := table(t, only)
	if len(rows) != 2 || !strings.HasPrefix(rows[0][0], "2") || !strings.HasPrefix(rows[1][0], "4") {
		t.Errorf("verified rows = %v, want the rows ranked 2 and 4", rows)
	}
	if !strings.Contains(only, "Showing verified rows only") {
		t.Error("the filtered page does not say so")
	}
	if res, _ := f.get(t, "/leaderboards/acme/bench/ver?verified=yes", ""); res.StatusCode != http.StatusBadRequest {
		t.Errorf("verified=yes: status %d, want 400", res.StatusCode)
	}
}
