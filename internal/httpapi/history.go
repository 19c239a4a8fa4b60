package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/boardaccess"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/rowhistory"
)

// Row history routes (ServeMux patterns, without the method): a row under its board, so
// the board is found and authorized as the GET read finds it (docs/http-api.md,
// "Row history").
const (
	HistoryBySlugPath = "/v1/leaderboards/{org}/{dataset}/{name}/rows/{row}/history"
	HistoryByIDPath   = "/v1/leaderboards/{id}/rows/{row}/history"
)

// ServeHistory implements the row history read: the change history of one row
// (rowhistory.Served), with the rule of boardaccess.Access: anyone may read the history of
// a row the public read shows (a ranked row of a public board); any other row's history
// is for those who may read the board's private rows (get leaderboards in its
// namespace), and everyone else gets the same 404 as for a missing row. User names are
// shown where the read shows created_by (ShowsAuthors). Public answers are cacheable
// like the GET read; others are private, no-store; errors are never stored.
func (rd *Read) ServeHistory(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	setCORS(h)
	h["Vary"] = varyAuthorization
	fail := func(err error) {
		h["Cache-Control"] = cacheNoStore
		apierr.Write(w, err)
	}
	t, rowID, err := parseHistory(r)
	if err != nil {
		fail(err)
		return
	}
	notFound := apierr.NotFound("row %s of leaderboard %s not found", rowID, t)
	lb, err := rd.find(r.Context(), t)
	if err != nil {
		fail(err)
		return
	}
	row, err := rd.rows.Row(r.Context(), rd.o.Cache, lb, types.UID(rowID))
	if err != nil {
		rd.o.Log.Error(err, "Looking up a leaderboard row in the cache failed", "leaderboard", client.ObjectKeyFromObject(lb))
		fail(apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the row cannot be read now; try again"))
		return
	}
	public := boardaccess.PublicRow(lb, row)
	if row, err = rd.access.Row(r.Context(), lb, row); err != nil {
		fail(rd.refusal(r.Context(), err, func() error { return notFound }))
		return
	}
	if row, err = Full(r.Context(), rd.o.API, row); err != nil {
		rd.o.Log.Error(err, "Reading a leaderboard row failed", "leaderboard", client.ObjectKeyFromObject(lb))
		fail(apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the row cannot be read now; try again"))
		return
	}
	if row == nil {
		fail(notFound)
		return
	}
	body, err := json.Marshal(rowhistory.Served(hubv1alpha1.ID(lb), row, ShowsAuthors(lb)))
	if err != nil {
		rd.o.Log.Error(err, "Encoding a row history failed", "leaderboard", client.ObjectKeyFromObject(lb))
		fail(apierr.Internal())
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
	h["Etag"] = []string{etag}
	if notModified(w, r, etag, public, cacheGETPublic, cacheNoStorePrivate) {
		return
	}
	h["Content-Type"] = contentTypeJSON
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// parseHistory reads the board and the row id from the path; no query parameter is known.
func parseHistory(r *http.Request) (target, string, error) {
	t := target{}
	if id := r.PathValue("id"); id != "" {
		if !hubv1alpha1.IsUUID(id) {
			return t, "", apierr.BadRequest("leaderboard_id", "must be a UUID")
		}
		t.id = strings.ToLower(id)
	} else {
		pkg := r.PathValue("org") + "/" + r.PathValue("dataset")
		if !validPackage(pkg) {
			return t, "", apierr.BadRequest("package", "must be <org>/<dataset>")
		}
		t.pkg, t.name = pkg, r.PathValue("name")
	}
	row := r.PathValue("row")
	if !hubv1alpha1.IsUUID(row) {
		return t, "", apierr.BadRequest("row_id", "must be a UUID")
	}
	if r.URL.RawQuery != "" {
		return t, "", apierr.BadRequest("", "the row history takes no query parameters")
	}
	return t, strings.ToLower(row), nil
}

// rowIndexName is controller-runtime's name of the spec.leaderboard field index.
const rowIndexName = "field:" + index.RowBoard

// RowFinder finds a board's row by UID in the manager's cache; the row history read
// and the web page's history page share it. Rows have no UID index (it would cost
// operator memory on every row): the board's rows are walked through the
// spec.leaderboard index, as pointers into the informer's store when the cache gives
// its indexer, else by a List of copies. The zero value is ready to use.
type RowFinder struct {
	indexer atomic.Pointer[toolscache.Indexer]
}

// Full returns the row with its whole status from the apiserver (api), since the cache
// keeps a stripped history (rowhistory.StripForCache); nil when it is gone. With no api
// it returns the row it is given. Callers decide who may read the row from the cached
// copy first, so that only allowed readers cause an apiserver read.
func Full(ctx context.Context, api client.Reader, row *hubv1alpha1.LeaderboardRow) (*hubv1alpha1.LeaderboardRow, error) {
	if api == nil {
		return row, nil
	}
	uid := row.UID
	full := &hubv1alpha1.LeaderboardRow{}
	if err := api.Get(ctx, client.ObjectKeyFromObject(row), full); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if full.UID != uid {
		return nil, nil // deleted and created again under the same name meanwhile
	}
	return full, nil
}

// Row returns the board's row with this id (hubv1alpha1.ID) from the cache, or nil:
// read-only.
func (f *RowFinder) Row(ctx context.Context, c client.Reader, lb *hubv1alpha1.Leaderboard, uid types.UID) (*hubv1alpha1.LeaderboardRow, error) {
	if idx := f.get(ctx, c); idx != nil {
		if objs, err := idx.ByIndex(rowIndexName, lb.Namespace+"/"+lb.Name); err == nil {
			for _, o := range objs {
				if row, ok := o.(*hubv1alpha1.LeaderboardRow); ok && hubv1alpha1.ID(row) == string(uid) {
					return row, nil
				}
			}
			return nil, nil
		}
	}
	var list hubv1alpha1.LeaderboardRowList
	opts := &client.ListOptions{Namespace: lb.Namespace, UnsafeDisableDeepCopy: &noDeepCopy,
		FieldSelector: fields.OneTermEqualSelector(index.RowBoard, lb.Name)}
	if err := c.List(ctx, &list, opts); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if hubv1alpha1.ID(&list.Items[i]) == string(uid) {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// ByUID returns the row with this UID on any board, or nil: read-only. Rows have no UID
// index, so it walks every cached row, and always all of them, so that how long it
// takes does not tell where (or whether) the row is.
func (f *RowFinder) ByUID(ctx context.Context, c client.Reader, uid types.UID) (*hubv1alpha1.LeaderboardRow, error) {
	var found *hubv1alpha1.LeaderboardRow
	if idx := f.get(ctx, c); idx != nil {
		for _, o := range idx.List() {
			if row, ok := o.(*hubv1alpha1.LeaderboardRow); ok && row.UID == uid {
				found = row
			}
		}
		return found, nil
	}
	var list hubv1alpha1.LeaderboardRowList
	if err := c.List(ctx, &list, &client.ListOptions{UnsafeDisableDeepCopy: &noDeepCopy}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].UID == uid {
			found = &list.Items[i]
		}
	}
	return found, nil
}

// get returns the LeaderboardRow informer's indexer once it is usable, or nil.
func (f *RowFinder) get(ctx context.Context, c client.Reader) toolscache.Indexer {
	if p := f.indexer.Load(); p != nil {
		return *p
	}
	g, ok := c.(informerGetter)
	if !ok {
		return nil
	}
	inf, err := g.GetInformer(ctx, &hubv1alpha1.LeaderboardRow{}, cache.BlockUntilSynced(false))
	if err != nil || !inf.HasSynced() {
		return nil
	}
	ii, ok := inf.(indexedInformer)
	if !ok {
		return nil
	}
	idx := ii.GetIndexer()
	if idx.GetIndexers()[rowIndexName] == nil {
		return nil
	}
	f.indexer.Store(&idx)
	return idx
}
