package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/boardaccess"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/lru"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/wire"
)

// Paging of the public read (docs/http-api.md, "Request"). A read that gives page or
// page_size gets that page (page_size DefaultPageSize when only page is given). A read
// that gives neither gets the whole board, as one page of MaxPageSize rows, when the
// board has at most WholeBoardMax ranked rows, and a 400 telling it to page otherwise:
// never a silent cut (clients that send neither treat the answer as the whole board).
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
	WholeBoardMax   = MaxPageSize
)

// ReadPath is the public leaderboard read.
const ReadPath = "/v1/leaderboard-read"

// PublicCacheControl is the Cache-Control of everything public a shared cache or CDN
// may store: the GET read of a public board and the web pages (docs/http-api.md, "GET
// and caching"). Boards change a few times a day: a cache may keep an answer 5 minutes
// and, past that, serve it stale for up to an hour while it revalidates by ETag.
const PublicCacheControl = "public, max-age=300, stale-while-revalidate=3600"

// GET read routes (ServeMux patterns, without the method).
const (
	GetBySlugPath = "/v1/leaderboards/{org}/{dataset}/{name}"
	GetByIDPath   = "/v1/leaderboards/{id}"
)

// Ranks is the ranking index as the read sees it (ranking.Registry behind an adapter).
type Ranks interface {
	// Board returns the ranked rows of the board with this UID, or nil when unknown.
	Board(uid types.UID) RankedBoard
}

// RankedBoard is one board's rank index.
type RankedBoard interface {
	// Len is the number of ranked rows (display and valid).
	Len() int
	// Version changes whenever anything served from the board's rows changes.
	Version() uint64
	// Page returns up to limit rows from offset, in rank order.
	Page(offset, limit int) []RankedRow
	// Find returns one ranked row by UID, false when it is not ranked on the board.
	Find(uid types.UID) (RankedRow, bool)
}

// RankedRow is a row with its standard competition rank and, on boards whose rules
// name an uncertainty, its rank range. Row is the shared cached object: read-only.
type RankedRow = ranking.Entry

// ReadOptions configure the read handler.
type ReadOptions struct {
	// Cache is the manager's cache, with the field indexes of package index.
	Cache client.Reader
	// API reads a row's whole status for the row history (the cache keeps a stripped
	// one); nil reads the cache.
	API client.Reader
	// Ranks is the rank index.
	Ranks Ranks
	// Reviewer decides private reads (get leaderboards in the board's namespace).
	Reviewer authn.Reviewer
	// CacheBytes bounds the encoded responses kept; 0 means 64 MiB.
	CacheBytes int64
	Log        logr.Logger
}

// Read serves POST /v1/leaderboard-read from the informer cache and the rank index:
// a public read makes no apiserver call. Encoded pages are kept, keyed by everything
// that could change them, so a popular page is encoded once per change of its board.
type Read struct {
	o      ReadOptions
	pages  *lru.Cache[pageKey, *page]
	access boardaccess.Access
	boards boardIndex
	rows   RowFinder
	// csv makes readers of a board's CSV that arrive together share one encoding.
	csv singleflight.Group
}

// NewRead returns the read handler.
func NewRead(o ReadOptions) *Read {
	if o.CacheBytes <= 0 {
		o.CacheBytes = 64 << 20
	}
	return &Read{o: o, pages: newPageCache(o.CacheBytes), access: boardaccess.Access{Reviewer: o.Reviewer}}
}

// readRequest is the body of a read. Pointers tell a missing field from a zero one.
type readRequest struct {
	Package       *string `json:"package"`
	Name          *string `json:"name"`
	LeaderboardID *string `json:"leaderboard_id"`
	Page          *int64  `json:"page"`
	PageSize      *int64  `json:"page_size"`
}

// target is a validated read request.
type target struct {
	id         string // lowercase UUID, or ""
	pkg, name  string
	page, size int64
	// whole: the read gave neither page nor page_size (page 1 of MaxPageSize rows, the
	// whole board or a 400).
	whole bool
}

func (t target) String() string {
	if t.id != "" {
		return t.id
	}
	return t.pkg + "/" + t.name
}

// parseRead decodes and validates the body. The package must match
// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$ and a leaderboard_id
// hubv1alpha1.UUIDPattern (validPackage and hubv1alpha1.IsUUID check both without a regexp).
func parseRead(r *http.Request) (target, error) {
	req, err := decodeRead(r)
	if err != nil {
		return target{}, err
	}
	t := target{page: 1, size: DefaultPageSize}
	switch {
	case req.hasID && (req.hasPkg || req.hasName):
		return t, apierr.BadRequest("leaderboard_id", "give either leaderboard_id or package and name, not both")
	case req.hasID:
		if !hubv1alpha1.IsUUID(req.id) {
			return t, apierr.BadRequest("leaderboard_id", "must be a UUID")
		}
		t.id = strings.ToLower(req.id)
	case !req.hasPkg && !req.hasName:
		return t, apierr.BadRequest("leaderboard_id", "required: give leaderboard_id, or package and name")
	case !req.hasPkg:
		return t, apierr.BadRequest("package", "required with name")
	case !req.hasName:
		return t, apierr.BadRequest("name", "required with package")
	default:
		if !validPackage(req.pkg) {
			return t, apierr.BadRequest("package", "must be <org>/<dataset>")
		}
		if req.name == "" {
			return t, apierr.BadRequest("name", "must not be empty")
		}
		t.pkg, t.name = req.pkg, req.name
	}
	t.whole = !req.hasPage && !req.hasSize
	if t.whole {
		t.size = MaxPageSize
	}
	if req.hasPage {
		if req.page < 1 {
			return t, apierr.BadRequest("page", "must be at least 1")
		}
		t.page = req.page
	}
	if req.hasSize {
		if req.size < 1 || req.size > MaxPageSize {
			return t, apierr.BadRequest("page_size", "must be between 1 and %d", MaxPageSize)
		}
		t.size = req.size
	}
	return t, nil
}

// setCORS allows any origin to read, without credentials: a private board is read from
// a server with a token, never from browser code (docs/http-api.md, CORS), so Authorization is not an
// allowed header.
func setCORS(h http.Header) {
	h["Access-Control-Allow-Origin"] = anyOrigin
	h["Access-Control-Expose-Headers"] = exposeETag
}

// Header values the read sets on every answer, allocated once (net/http only reads
// them). Keys assigned directly must be in canonical form ("Etag").
var (
	anyOrigin       = []string{"*"}
	exposeETag      = []string{"ETag"}
	contentTypeJSON = []string{"application/json"}
	cachePublic     = []string{"no-cache"}
	cachePrivate    = []string{"private, no-cache"}
	// The GET read's: boards change a few times a day, so a shared cache may keep a
	// public page 5 minutes and, past that, serve it stale for up to an hour while it
	// revalidates (a 304 when nothing changed). Private boards are never stored.
	cacheGETPublic      = []string{PublicCacheControl}
	cacheNoStorePrivate = []string{"private, no-store"}
	cacheNoStore        = []string{"no-store"}
	varyAuthorization   = []string{"Authorization"}
)

// Preflight answers the browser's CORS preflight of the read.
func Preflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	setCORS(h)
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, If-None-Match")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}

// ServeHTTP implements POST /v1/leaderboard-read.
func (rd *Read) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setCORS(w.Header())
	t, err := parseRead(r)
	if err != nil {
		apierr.Write(w, err)
		return
	}
	rd.serve(w, r, t, false)
}

// ServeGET implements GET /v1/leaderboards/{org}/{dataset}/{name} and
// GET /v1/leaderboards/{id}, with page and page_size in the query: the same answer as
// the POST read, byte for byte, in a form shared caches and CDNs store (docs/http-api.md,
// "GET and caching"). Public boards are cacheable (cacheGETPublic), private ones never
// (private, no-store); errors are never stored. Vary: Authorization keeps a cache from
// answering a member's request with what an anonymous reader got.
func (rd *Read) ServeGET(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	setCORS(h)
	h["Vary"] = varyAuthorization
	t, err := parseGET(r)
	if err != nil {
		h["Cache-Control"] = cacheNoStore
		apierr.Write(w, err)
		return
	}
	rd.serve(w, r, t, true)
}

// parseGET reads the target from the path and the query. Unknown, repeated or
// unparseable query parameters are a 400, as a body's unknown fields are.
func parseGET(r *http.Request) (target, error) {
	t, err := pathTarget(r)
	if err != nil {
		return t, err
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return t, apierr.BadRequest("", "the query string could not be parsed")
	}
	t.whole, t.size = true, MaxPageSize
	for k, v := range q {
		if k != "page" && k != "page_size" {
			return t, apierr.BadRequest(k, "unknown query parameter; known: page, page_size")
		}
		if len(v) > 1 {
			return t, apierr.BadRequest(k, "must be given at most once")
		}
		if t.whole { // a page is asked for: DefaultPageSize unless page_size says
			t.whole, t.size = false, DefaultPageSize
		}
		n, err := strconv.ParseInt(v[0], 10, 64)
		switch {
		case err != nil:
			return t, apierr.BadRequest(k, "must be an integer")
		case k == "page" && n < 1:
			return t, apierr.BadRequest("page", "must be at least 1")
		case k == "page":
			t.page = n
		case n < 1 || n > MaxPageSize:
			return t, apierr.BadRequest("page_size", "must be between 1 and %d", MaxPageSize)
		default:
			t.size = n
		}
	}
	return t, nil
}

// pathTarget reads the board of a GET route from its path: {id}, or {org}, {dataset}
// and {name}.
func pathTarget(r *http.Request) (target, error) {
	t := target{page: 1, size: DefaultPageSize}
	if id := r.PathValue("id"); id != "" {
		if !hubv1alpha1.IsUUID(id) {
			return t, apierr.BadRequest("leaderboard_id", "must be a UUID")
		}
		t.id = strings.ToLower(id)
		return t, nil
	}
	pkg := r.PathValue("org") + "/" + r.PathValue("dataset")
	if !validPackage(pkg) {
		return t, apierr.BadRequest("package", "must be <org>/<dataset>")
	}
	t.pkg, t.name = pkg, r.PathValue("name")
	return t, nil
}

// refuse answers a read with err; a refused GET read is never stored by a cache.
func refuse(w http.ResponseWriter, err error, get bool) {
	if get {
		w.Header()["Cache-Control"] = cacheNoStore
	}
	apierr.Write(w, err)
}

// serve answers a validated read with the page of t, cached by everything it depends
// on. get selects the GET read's Cache-Control values over the POST read's.
func (rd *Read) serve(w http.ResponseWriter, r *http.Request, t target, get bool) {
	public, private := cachePublic, cachePrivate
	if get {
		public, private = cacheGETPublic, cacheNoStorePrivate
	}
	lb, err := rd.find(r.Context(), t)
	if err != nil {
		refuse(w, err, get)
		return
	}
	var board RankedBoard
	if rd.o.Ranks != nil {
		board = rd.o.Ranks.Board(lb.UID)
	}
	var version uint64
	if board != nil {
		version = board.Version()
		if t.whole && board.Len() > WholeBoardMax {
			refuse(w, tooLargeForOneRead(board.Len()), get)
			return
		}
	}
	// Everything a response depends on: the rows (version), the definition and its
	// resolved status (resourceVersion) and the page asked for.
	key := pageKey{uid: lb.UID, version: version, rv: lb.ResourceVersion, page: t.page, size: t.size}
	cached, hit := rd.pages.Get(key)
	var etag string
	h := w.Header()
	if hit {
		etag = cached.etag[0]
		h["Etag"] = cached.etag
	} else {
		etag = key.etag()
		h["Etag"] = []string{etag}
	}
	if notModified(w, r, etag, lb.Spec.Visibility == hubv1alpha1.VisibilityPublic, public, private) {
		return
	}
	if !hit {
		body, err := encodeRead(lb, board, t)
		if err != nil {
			rd.o.Log.Error(err, "Encoding a leaderboard read failed", "leaderboard", client.ObjectKeyFromObject(lb))
			apierr.Write(w, apierr.Internal())
			return
		}
		cached = newPage(etag, body)
		if board != nil {
			rd.pages.Put(key, cached)
		}
	}
	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = cached.contentLength
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(cached.body)
}

// tooLargeForOneRead is the answer to a read without page and page_size of a board of
// more than WholeBoardMax rows.
func tooLargeForOneRead(total int) error {
	return apierr.BadRequest("page", "the leaderboard has %d rows, more than the %d a read without page and page_size returns; "+
		"read it in pages (page from 1, page_size up to %d, until pagination.total_pages)", total, WholeBoardMax, MaxPageSize)
}

// find returns the board the target names, from the cache's field indexes, if the
// caller may read it (boardaccess.Access), else the refusal every reader gives.
func (rd *Read) find(ctx context.Context, t target) (*hubv1alpha1.Leaderboard, error) {
	lb, err := rd.lookup(ctx, t)
	if err != nil {
		rd.o.Log.Error(err, "Looking up a leaderboard in the cache failed", "target", t.String())
		return nil, apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the leaderboard cannot be read now; try again")
	}
	lb, err = rd.access.Board(ctx, boardaccess.Asked{ID: t.id, Package: t.pkg, Name: t.name}, lb)
	if err != nil {
		return nil, rd.refusal(ctx, err, func() error { return apierr.NotFound("leaderboard %s not found", t) })
	}
	return lb, nil
}

// refusal is how the JSON readers answer a refusal of boardaccess.Access: notFound (built
// only when needed: the hot path of a public read allocates as little as it can) for
// ErrNotFound, whatever its cause; a 503 naming nothing when the review failed.
func (rd *Read) refusal(ctx context.Context, err error, notFound func() error) error {
	if errors.Is(err, boardaccess.ErrNotFound) {
		return notFound()
	}
	rd.o.Log.Error(err, "Authorizing a leaderboard read failed", "user", authn.CallerFrom(ctx).User)
	return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the read cannot be authorized now; try again")
}

// noDeepCopy: the read only reads the cached board (UnsafeDisableDeepCopy).
var noDeepCopy = true

// lookup returns the board the target names, or nil: from the informer's indexer when
// it can (lookup.go), else by a List of the cache.
func (rd *Read) lookup(ctx context.Context, t target) (*hubv1alpha1.Leaderboard, error) {
	if idx := rd.boards.get(ctx, rd.o.Cache); idx != nil {
		if lb, ok := lookup(idx, t); ok {
			return lb, nil
		}
	}
	var list hubv1alpha1.LeaderboardList
	// One ListOptions rather than option values: fewer allocations.
	opts := &client.ListOptions{UnsafeDisableDeepCopy: &noDeepCopy}
	if t.id != "" {
		opts.FieldSelector = fields.OneTermEqualSelector(index.UID, t.id)
	} else {
		org, _, _ := strings.Cut(t.pkg, "/")
		opts.Namespace = org
		opts.FieldSelector = fields.OneTermEqualSelector(index.BoardSlug, t.pkg+"/"+t.name)
	}
	if err := rd.o.Cache.List(ctx, &list, opts); err != nil {
		return nil, err
	}
	// Two objects can claim a slug; serve the one the controller keeps Ready.
	return boardres.Owner(list.Items), nil
}

// notModified sets the Cache-Control of a public or a private answer and, when the
// request already holds etag (If-None-Match), answers 304 Not Modified and says so.
func notModified(w http.ResponseWriter, r *http.Request, etag string, public bool, cachePublic, cachePrivate []string) bool {
	if public {
		w.Header()["Cache-Control"] = cachePublic
	} else {
		w.Header()["Cache-Control"] = cachePrivate
	}
	if matchesETag(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	return false
}

// matchesETag implements If-None-Match: a list of entity tags, weak or strong, or "*".
func matchesETag(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || strings.TrimPrefix(part, "W/") == etag {
			return true
		}
	}
	return false
}

// Wire shapes of the read (package wire; docs/http-api.md).
type readResponse struct {
	Leaderboard wire.Board      `json:"leaderboard"`
	Rows        []wire.Row      `json:"rows"`
	Pagination  wire.Pagination `json:"pagination"`
}

// EncodeRead encodes one page of a board exactly as the read serves it (for the
// benchmark's naive read, which ranks on every request).
func EncodeRead(lb *hubv1alpha1.Leaderboard, board RankedBoard, page, pageSize int64) ([]byte, error) {
	return encodeRead(lb, board, target{page: page, size: pageSize})
}

// encodeRead encodes one page of a board.
func encodeRead(lb *hubv1alpha1.Leaderboard, board RankedBoard, t target) ([]byte, error) {
	resp := readResponse{Leaderboard: boardWire(lb), Rows: []wire.Row{}}
	var total int64
	if board != nil {
		total = int64(board.Len())
	}
	resp.Pagination = wire.Page(total, t.page, t.size)
	// page-1 < total/size keeps the offset arithmetic clear of overflow for huge pages.
	if board != nil && t.page-1 <= total/t.size {
		offset := (t.page - 1) * t.size
		if offset < total {
			entries := board.Page(int(offset), int(t.size))
			resp.Rows = make([]wire.Row, 0, len(entries))
			for _, e := range entries {
				resp.Rows = append(resp.Rows, rowWire(lb, e))
			}
		}
	}
	return json.Marshal(resp)
}

func boardWire(lb *hubv1alpha1.Leaderboard) wire.Board {
	return wire.BoardOf(lb, wire.Timestamp(wire.ServedUpdatedAt(&lb.ObjectMeta, lb.Status.UpdatedAt)))
}

func rowWire(lb *hubv1alpha1.Leaderboard, e RankedRow) wire.Row {
	row := e.Row
	w := wire.Row{
		ID:            hubv1alpha1.ID(row),
		LeaderboardID: hubv1alpha1.ID(lb),
		Rank:          e.Rank,
		Metadata:      wire.EmptyObject,
		Metrics:       wire.EmptyObject,
		Status:        wire.RowStatus(row),
		CreatedAt:     wire.Timestamp(hubv1alpha1.CreatedAt(row).Time),
		UpdatedAt:     wire.Timestamp(wire.ServedUpdatedAt(&row.ObjectMeta, row.Status.UpdatedAt)),
		NTrials:       len(row.Spec.TrialIDs),
	}
	if e.RankUpper > 0 {
		w.RankUpper = &e.RankUpper
	}
	if e.Interval.OK {
		w.Interval = &wire.Interval{Low: e.Interval.Low, High: e.Interval.High}
	}
	if row.Spec.Metadata != nil {
		w.Metadata = wire.ObjectOrEmpty(row.Spec.Metadata.Raw)
	}
	if row.Spec.Metrics != nil {
		w.Metrics = wire.ObjectOrEmpty(row.Spec.Metrics.Raw)
	}
	if ShowsAuthors(lb) {
		w.CreatedBy = rowhistory.Author(row, hubv1alpha1.AnnotationCreatedBy)
		w.UpdatedBy = rowhistory.Author(row, hubv1alpha1.AnnotationUpdatedBy)
	}
	w.Provenance = wire.ProvenanceOf(row, ShowsAuthors(lb))
	w.Verified = w.Provenance != nil
	return w
}

// ShowsAuthors says whether the read shows who created and who last changed a board's
// rows (created_by, updated_by, and the authors of the change history). User names can
// be personal data: a public board shows them only when it opts in (spec.showAuthors);
// a private board, which only its org's members can read, always does.
func ShowsAuthors(lb *hubv1alpha1.Leaderboard) bool {
	return lb.Spec.Visibility != hubv1alpha1.VisibilityPublic || lb.Spec.ShowAuthors
}
