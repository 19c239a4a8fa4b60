// Package web serves Podium's public leaderboard pages: an index of public boards and
// one HTML page per board, read from the manager's cache and the rank index with the
// same authorization as the JSON read. Pages need no JavaScript: sorting and paging are
// links, so the Content-Security-Policy allows no script at all.
package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"html/template"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/boardaccess"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/lru"
	"podium.dev/podium/internal/ranking"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// ContentSecurityPolicy is sent with every page: no script from anywhere, styles and
// images only from the embedded assets, no framing, no form posts, no <base>. A row's
// markdown is sanitised anyway; this is the second wall.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Options are what the pages read.
type Options struct {
	// Reader reads Leaderboards (with the index.BoardSlug field index) and Datasets,
	// normally the manager's cache.
	Reader client.Reader
	// Ranking returns the rank index of a board by UID, or nil when it has none yet.
	Ranking func(uid types.UID) Ranked
	// Sort orders rows by rules the way the rank index does (ranking.Sort).
	Sort SortFunc
	// Reviewer decides whether an authenticated caller may read a private board.
	Reviewer authn.Reviewer
	// Log receives failures (never a row's content or a token).
	Log logr.Logger
	// API reads a row's whole status for its history page (the cache keeps a stripped
	// one); nil reads Reader.
	API client.Reader
	// Now is the clock of the pages' "changed in the last 7 days" marks; nil is time.Now.
	Now func() time.Time
}

// Pages serves the leaderboard pages.
type Pages struct {
	o       Options
	tmpl    *template.Template
	sorted  *lru.Cache[sortKey, []Entry]
	sorting singleflight.Group
	pages   *lru.Cache[pageKey, []byte]
	rows    httpapi.RowFinder
	access  boardaccess.Access
}

// Rendered board pages kept: enough for the first pages of the popular boards in each
// order. A kept page is served without decoding a row or running a template.
const (
	pageCacheEntries = 512
	pageCacheBytes   = 32 << 20
)

// New parses the embedded templates.
func New(o Options) (*Pages, error) {
	if o.Reader == nil || o.Ranking == nil || o.Sort == nil || o.Reviewer == nil {
		return nil, errors.New("web: Reader, Ranking, Sort and Reviewer are required")
	}
	tmpl, err := template.New("").Funcs(template.FuncMap{"add": func(a, b int) int { return a + b }}).
		ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	pages := lru.New[pageKey](pageCacheEntries, pageCacheBytes, pageCacheBytes, func(b []byte) int64 { return int64(len(b)) })
	return &Pages{o: o, tmpl: tmpl, sorted: newSortCache(), pages: pages, access: boardaccess.Access{Reviewer: o.Reviewer}}, nil
}

// Routes are the pages' handlers by ServeMux pattern.
func (p *Pages) Routes() map[string]http.Handler {
	assets, _ := fs.Sub(assetFS, "assets")
	return map[string]http.Handler{
		"GET /leaderboards":                                           http.HandlerFunc(p.serveIndex),
		"GET /leaderboards/{$}":                                       http.RedirectHandler("/leaderboards", http.StatusMovedPermanently),
		"GET /leaderboards/{org}/{dataset}/{name}":                    http.HandlerFunc(p.serveBoard),
		"GET /leaderboards/{org}/{dataset}/{name}/rows/{row}/history": http.HandlerFunc(p.serveHistory),
		"GET /leaderboards/{org}/{dataset}/{name}/" + IntervalsFile:   p.serveChart(IntervalsFile),
		"GET /leaderboards/{org}/{dataset}/{name}/" + ProgressFile:    p.serveChart(ProgressFile),
		"GET /assets/{file}":                                          serveAssets(assets),
	}
}

func serveAssets(assets fs.FS) http.Handler {
	files := http.FileServerFS(assets)
	return http.StripPrefix("/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	}))
}

// errorPage is the content of an error page.
type errorPage struct {
	Status  int
	Heading string
	Message string
}

// notFound is the page of a missing board and of a private board the caller may not
// read: the same bytes, so that a private board's existence does not leak.
var notFound = errorPage{
	Status:  http.StatusNotFound,
	Heading: "Leaderboard not found",
	Message: "There is no leaderboard at this address that you can see.",
}

func (p *Pages) serveBoard(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	lb, private, ok := p.readableBoard(w, r)
	if !ok {
		return
	}
	// The query is checked only now: a 400 for a private board would tell an outsider
	// it exists.
	q, err := parseQuery(r.URL.Query(), lb.Spec.Columns)
	if err != nil {
		p.render(w, r, http.StatusBadRequest, "error", errorPage{
			Status: http.StatusBadRequest, Heading: "Bad request", Message: err.Error(),
		}, private)
		return
	}
	ds := p.dataset(ctx, lb)
	ranked := p.o.Ranking(lb.UID)
	if ranked == nil {
		ranked = emptyBoard{}
	}
	// The key is read before the page is built: a row that changes meanwhile makes the
	// kept page newer than its key, never older.
	now := p.o.Now()
	key := pageKey{board: lb.UID, boardRV: lb.ResourceVersion, rows: ranked.Version(), total: ranked.Len(),
		datasetRV: ds.ResourceVersion, query: q, hour: now.Unix() / 3600}
	etag := key.etag()
	if matchesETag(r.Header.Get("If-None-Match"), etag) {
		setHeaders(w.Header(), private, etag)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body, ok := p.pages.Get(key)
	if !ok {
		page := p.boardPage(lb, ds, ranked, q, now)
		page.Org, page.Dataset, page.Name = r.PathValue("org"), r.PathValue("dataset"), r.PathValue("name")
		var err error
		if body, err = p.execute("board", page); err != nil {
			p.o.Log.Error(err, "Rendering a leaderboard page", "leaderboard", client.ObjectKeyFromObject(lb))
			p.render(w, r, internalError.Status, "error", internalError, private)
			return
		}
		p.pages.Put(key, body)
	}
	setHeaders(w.Header(), private, etag)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// pageKey names a rendered board page by everything it is built from: the board object,
// its rank index, its Dataset (version tags) and the query.
type pageKey struct {
	board     types.UID
	boardRV   string
	rows      uint64
	total     int
	datasetRV string
	query     query
	// hour is the hour of the clock the page was built at: the "changed in the last 7
	// days" marks go when they are due, within the hour, even on a board nobody changes.
	hour int64
	// chart is the file of a chart served alone (IntervalsFile, ProgressFile), "" for
	// the board page.
	chart string
}

// etag is a strong validator of the page; a polling browser gets 304 until one of the
// key's parts changes.
func (k pageKey) etag() string {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s|%s|%d|%d|%s|%d|%s|%s|%v|%d|%d|%s", k.board, k.boardRV, k.rows, k.total, k.datasetRV,
		k.query.Page, k.query.Sort, k.query.Dir, k.query.Verified, k.hour, k.query.ChartRows, k.chart)
	return `"` + strconv.FormatUint(h.Sum64(), 36) + `"`
}

// matchesETag implements If-None-Match: a list of entity tags, weak or strong, or "*".
func matchesETag(header, etag string) bool {
	if header == "" {
		return false
	}
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// boardPage builds the page of a readable board.
func (p *Pages) boardPage(lb *hubv1alpha1.Leaderboard, ds *hubv1alpha1.Dataset, ranked Ranked, q query, now time.Time) *boardPage {
	// The charts (first page only) describe the whole board in rank order, whatever the
	// table shows.
	page := &boardPage{Title: lb.Spec.Title, Private: lb.Spec.Visibility != hubv1alpha1.VisibilityPublic,
		Versions: versions(lb, ds), Charts: chartsOf(lb, ranked, q)}
	if lb.Spec.Description != nil {
		page.Description = *lb.Spec.Description
	}
	// Filtering to verified rows walks the board: offered up to MaxSortRows, as sorting.
	canFilter := ranked.Len() <= MaxSortRows
	filterNotice := ""
	if q.Verified {
		if canFilter {
			ranked = verifiedRows(ranked)
		} else {
			filterNotice = fmt.Sprintf("Showing only verified rows is available on boards of up to %s rows; all rows are shown.", thousands(MaxSortRows))
			q.Verified = false
		}
	}

	total := ranked.Len()
	canSort := total <= MaxSortRows
	offset := (q.Page - 1) * PageSize
	var entries []Entry
	switch {
	case q.Sort != "" && canSort:
		col, _ := findColumn(lb.Spec.Columns, q.Sort)
		key := sortKey{board: lb.UID, version: ranked.Version(), column: col.ID, dir: q.Dir, verified: q.Verified}
		all, ok := p.sorted.Get(key)
		if !ok {
			// Readers arriving together share one sort instead of each sorting the board.
			v, _, _ := p.sorting.Do(fmt.Sprintf("%s|%d|%s|%s|%v", key.board, key.version, key.column, key.dir, key.verified), func() (any, error) {
				sorted := sortByColumn(p.o.Sort, ranked, lb, col, q.Dir)
				p.sorted.Put(key, sorted)
				return sorted, nil
			})
			all = v.([]Entry)
		}
		if offset < len(all) {
			entries = all[offset:min(offset+PageSize, len(all))]
		}
		page.SortedBy, page.SortDir, page.ResetURL = col.Header, string(q.Dir), pageURL(1, "", "", q.Verified)
	case q.Sort != "":
		page.SortNotice = fmt.Sprintf("Sorting by a column is available on boards of up to %s rows; these rows are in rank order.", thousands(MaxSortRows))
		q.Sort, q.Dir = "", ""
		fallthrough
	default:
		if offset < total {
			entries = ranked.Page(offset, PageSize)
		}
	}
	if filterNotice != "" {
		page.SortNotice = strings.TrimSpace(filterNotice + " " + page.SortNotice)
	}
	page.Verified = q.Verified
	if canFilter {
		page.VerifiedURL, page.AllURL = pageURL(1, q.Sort, q.Dir, true), pageURL(1, q.Sort, q.Dir, false)
	}
	page.Columns = columnViews(lb.Spec.Columns, q, canSort)
	page.Rows = rowViews(lb.Spec.Columns, lb.Spec.RankBy, entries, boardURL(lb), now.Add(-ChangedWithin))
	page.Ranges = ranking.HasRanges(lb.Spec.RankBy)
	page.paginate(total, q)
	return page
}

// findBoard returns the board with this slug, or nil. Two objects can claim a slug for
// a moment; the one the controller keeps Ready wins (internal/boardres), as in the JSON read.
func (p *Pages) findBoard(ctx context.Context, org, dataset, name string) (*hubv1alpha1.Leaderboard, error) {
	var list hubv1alpha1.LeaderboardList
	if err := p.o.Reader.List(ctx, &list, client.InNamespace(org),
		client.MatchingFields{index.BoardSlug: org + "/" + dataset + "/" + name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return boardres.Owner(list.Items), nil
}

// readableBoard returns the board of the page's slug (the path's org, dataset and name)
// if the caller may read it, by the rule every reader follows (boardaccess.Access;
// docs/web.md, "Authorization"): a missing board is reviewed as a private one is, so the
// time of a 404 tells nothing. private is whether the board is not public (its pages are
// then never stored by a shared cache). ok is false when it has answered already:
// notFound for every refusal, a 503 page when the cache or the review failed.
func (p *Pages) readableBoard(w http.ResponseWriter, r *http.Request) (lb *hubv1alpha1.Leaderboard, private, ok bool) {
	ctx := r.Context()
	org, dataset, name := r.PathValue("org"), r.PathValue("dataset"), r.PathValue("name")
	lb, err := p.findBoard(ctx, org, dataset, name)
	if err != nil {
		p.fail(w, r, err, "Reading a leaderboard", "slug", org+"/"+dataset+"/"+name)
		return nil, false, false
	}
	lb, err = p.access.Board(ctx, boardaccess.Asked{Package: org + "/" + dataset, Name: name}, lb)
	if err != nil {
		p.refuse(w, r, err, notFound, false)
		return nil, false, false
	}
	return lb, lb.Spec.Visibility != hubv1alpha1.VisibilityPublic, true
}

// refuse answers a refusal of boardaccess.Access: the page given for ErrNotFound, whatever
// its cause; the unavailable page when the review failed.
func (p *Pages) refuse(w http.ResponseWriter, r *http.Request, err error, page errorPage, private bool) {
	if errors.Is(err, boardaccess.ErrNotFound) {
		p.render(w, r, page.Status, "error", page, private)
		return
	}
	p.fail(w, r, err, "Authorizing a leaderboard read")
}

// dataset returns the board's Dataset from the cache, or an empty one when it is
// missing (the page then shows version ids without tags).
func (p *Pages) dataset(ctx context.Context, lb *hubv1alpha1.Leaderboard) *hubv1alpha1.Dataset {
	var d hubv1alpha1.Dataset
	if _, name, ok := strings.Cut(boardres.Package(lb), "/"); ok {
		if err := p.o.Reader.Get(ctx, client.ObjectKey{Namespace: lb.Namespace, Name: name}, &d); err != nil {
			return &hubv1alpha1.Dataset{}
		}
	}
	return &d
}

// versions are the board's dataset versions with their tags from the Dataset; a
// version the Dataset no longer lists is shown by its id.
func versions(lb *hubv1alpha1.Leaderboard, ds *hubv1alpha1.Dataset) []versionView {
	ids := lb.Status.DatasetVersionIDs
	if len(ids) == 0 {
		return nil
	}
	tags := make(map[string]string, len(ds.Spec.Versions))
	for _, v := range ds.Spec.Versions {
		tags[v.ID] = v.Tag
	}
	out := make([]versionView, 0, len(ids))
	for _, id := range ids {
		out = append(out, versionView{ID: id, Tag: tags[id]})
	}
	return out
}

// indexPage lists the public boards.
type indexPage struct {
	Boards []indexEntry
}

type indexEntry struct {
	Title   string
	Package string
	Name    string
	URL     string
	Rows    int
}

func (p *Pages) serveIndex(w http.ResponseWriter, r *http.Request) {
	var list hubv1alpha1.LeaderboardList
	if err := p.o.Reader.List(r.Context(), &list, client.UnsafeDisableDeepCopy); err != nil {
		p.fail(w, r, err, "Listing leaderboards")
		return
	}
	// A slug two objects claim is listed once, for the board that owns it
	// (internal/boardres): the one findBoard serves, public or not.
	owners := map[string]*hubv1alpha1.Leaderboard{}
	for i := range list.Items {
		lb := &list.Items[i]
		if slug := boardres.Slug(lb); slug != "" {
			if cur := owners[slug]; cur == nil || boardres.Before(lb, cur) {
				owners[slug] = lb
			}
		}
	}
	page := indexPage{}
	for slug, lb := range owners {
		if lb.Spec.Visibility != hubv1alpha1.VisibilityPublic || !boardres.Servable(lb) {
			continue
		}
		e := indexEntry{Title: lb.Spec.Title, Name: lb.Spec.Name, URL: "/leaderboards/" + slug}
		e.Package, _, _ = boardres.SplitSlug(slug)
		if ranked := p.o.Ranking(lb.UID); ranked != nil {
			e.Rows = ranked.Len()
		}
		page.Boards = append(page.Boards, e)
	}
	slices.SortFunc(page.Boards, func(a, b indexEntry) int { return strings.Compare(a.URL, b.URL) })
	p.render(w, r, http.StatusOK, "index", page, false)
}

// render writes a page that is not kept (index, errors) with the security headers.
func (p *Pages) render(w http.ResponseWriter, r *http.Request, status int, name string, data any, private bool) {
	body, err := p.execute(name, data)
	if err != nil {
		p.o.Log.Error(err, "Rendering a page", "template", name, "path", r.URL.Path)
		status = http.StatusInternalServerError
		body, _ = p.execute("error", internalError)
	}
	setHeaders(w.Header(), private, "")
	if status != http.StatusOK {
		// An error page (a 404 may be a private board) is never stored by a cache.
		w.Header().Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (p *Pages) execute(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// setHeaders sets the security and caching headers of a page. Private content is never
// stored by caches; public pages are cacheable as the GET read is
// (httpapi.PublicCacheControl) and revalidated by ETag.
func setHeaders(h http.Header, private bool, etag string) {
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Vary", "Authorization")
	if private {
		h.Set("Cache-Control", "private, no-store")
	} else {
		h.Set("Cache-Control", httpapi.PublicCacheControl)
	}
	if etag != "" {
		h.Set("ETag", etag)
	}
}

// unavailable is the page when the cache or an access review cannot answer, as the
// JSON read's 503: nothing about the board or the failure is shown.
var unavailable = errorPage{
	Status:  http.StatusServiceUnavailable,
	Heading: "Leaderboards are unavailable",
	Message: "The leaderboard cannot be read now. Try again in a moment.",
}

// internalError is the page when a template fails (a bug).
var internalError = errorPage{
	Status:  http.StatusInternalServerError,
	Heading: "Something went wrong",
	Message: "The page could not be shown.",
}

// fail logs err and answers 503 without internals.
func (p *Pages) fail(w http.ResponseWriter, r *http.Request, err error, msg string, kv ...any) {
	p.o.Log.Error(err, msg, kv...)
	p.render(w, r, unavailable.Status, "error", unavailable, true)
}

// thousands writes n with comma separators (20000 -> "20,000").
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// emptyBoard stands in for a board the rank index does not know yet.
type emptyBoard struct{}

func (emptyBoard) Len() int              { return 0 }
func (emptyBoard) Version() uint64       { return 0 }
func (emptyBoard) Page(int, int) []Entry { return nil }

func (emptyBoard) Progress() []ranking.Record { return nil }
