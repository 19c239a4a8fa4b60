package httpapi

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/boardcsv"
)

// The CSV read and the row badge (docs/http-api.md, "CSV" and "Badges"): ServeMux
// patterns, without the method. They follow the GET read's visibility and caching.
const (
	CSVBySlugPath   = "/v1/leaderboards/{org}/{dataset}/{name}/rows.csv"
	CSVByIDPath     = "/v1/leaderboards/{id}/rows.csv"
	BadgeBySlugPath = "/v1/leaderboards/{org}/{dataset}/{name}/rows/{row}/badge.svg"
	BadgeByIDPath   = "/v1/leaderboards/{id}/rows/{row}/badge.svg"
)

// Header values of the badge: an SVG can hold script, so it may load and run nothing
// (inline styles only), and a browser may not sniff it into another type.
var (
	contentTypeSVG = []string{"image/svg+xml"}
	badgeCSP       = []string{"default-src 'none'; style-src 'unsafe-inline'"}
	noSniff        = []string{"nosniff"}
)

// exportTarget reads the board from the path; these routes take no query parameters.
func exportTarget(r *http.Request) (target, error) {
	t, err := pathTarget(r)
	if err != nil {
		return t, err
	}
	if r.URL.RawQuery != "" {
		param, _, _ := strings.Cut(r.URL.RawQuery, "&")
		param, _, _ = strings.Cut(param, "=")
		return t, apierr.BadRequest(param, "unknown query parameter; this route takes none")
	}
	return t, nil
}

// exportStart finds the board of an export route with the GET read's rules (same 404s,
// same review of private boards) and sets the headers every answer carries; ok is false
// when it has answered already (an error).
func (rd *Read) exportStart(w http.ResponseWriter, r *http.Request) (t target, lb *hubv1alpha1.Leaderboard, board RankedBoard, ok bool) {
	h := w.Header()
	setCORS(h)
	h["Vary"] = varyAuthorization
	t, err := exportTarget(r)
	if err == nil {
		lb, err = rd.find(r.Context(), t)
	}
	if err != nil {
		h["Cache-Control"] = cacheNoStore
		apierr.Write(w, err)
		return t, nil, nil, false
	}
	if rd.o.Ranks != nil {
		board = rd.o.Ranks.Board(lb.UID)
	}
	if lb.Spec.Visibility == hubv1alpha1.VisibilityPublic {
		h["Cache-Control"] = cacheGETPublic
	} else {
		h["Cache-Control"] = cacheNoStorePrivate
	}
	return t, lb, board, true
}

// exportETag is the entity tag of an export of a board: it changes with the board's
// rows (index version) and definition (resourceVersion), like the read's.
func exportETag(lb *hubv1alpha1.Leaderboard, board RankedBoard, what string) string {
	var version uint64
	if board != nil {
		version = board.Version()
	}
	return `"` + string(lb.UID) + "." + strconv.FormatUint(version, 10) + "." + lb.ResourceVersion + "." + what + `"`
}

// ServeCSV implements GET .../rows.csv: every ranked row of the board, in rank order,
// as CSV (package boardcsv), with the GET read's visibility, Cache-Control, Vary and
// ETag rules.
func (rd *Read) ServeCSV(w http.ResponseWriter, r *http.Request) {
	_, lb, board, ok := rd.exportStart(w, r)
	if !ok {
		return
	}
	var version uint64
	if board != nil {
		version = board.Version()
	}
	// Kept in the read's page cache under page 0, which no JSON page uses: a board's
	// CSV is encoded once per change of the board (readers arriving together share one
	// encoding), not once per request. A CSV larger than a quarter of the cache is not
	// kept, and is encoded per request.
	key := pageKey{uid: lb.UID, version: version, rv: lb.ResourceVersion}
	etag := exportETag(lb, board, "csv")
	h := w.Header()
	h["Etag"] = []string{etag}
	if matchesETag(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	cached, hit := rd.pages.Get(key)
	if !hit {
		v, err, _ := rd.csv.Do(etag, func() (any, error) {
			var rows []RankedRow
			if board != nil {
				rows = board.Page(0, board.Len())
			}
			var buf bytes.Buffer
			if err := boardcsv.Write(&buf, lb, rows); err != nil {
				return nil, err
			}
			p := newPage(etag, buf.Bytes())
			if board != nil {
				rd.pages.Put(key, p)
			}
			return p, nil
		})
		if err != nil {
			rd.o.Log.Error(err, "Encoding a leaderboard as CSV failed", "leaderboard", client.ObjectKeyFromObject(lb))
			h["Cache-Control"] = cacheNoStore
			apierr.Write(w, apierr.Internal())
			return
		}
		cached = v.(*page)
	}
	h.Set("Content-Type", boardcsv.ContentType)
	h.Set("Content-Disposition", `attachment; filename="`+lb.Spec.Name+`.csv"`)
	h["Content-Length"] = cached.contentLength
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(cached.body)
}

// ServeBadge implements GET .../rows/{row}/badge.svg: an SVG badge "#3 on <title>" for
// a ranked row, for READMEs. A row that is not ranked on the board (unknown, another
// board's, hidden, invalid or not validated yet) is a 404, as a missing board is: a
// badge never tells that a hidden row exists.
func (rd *Read) ServeBadge(w http.ResponseWriter, r *http.Request) {
	rowID := r.PathValue("row")
	if !hubv1alpha1.IsUUID(rowID) {
		w.Header()["Cache-Control"] = cacheNoStore
		w.Header()["Vary"] = varyAuthorization
		apierr.Write(w, apierr.BadRequest("row_id", "must be a UUID"))
		return
	}
	rowID = strings.ToLower(rowID)
	t, lb, board, ok := rd.exportStart(w, r)
	if !ok {
		return
	}
	h := w.Header()
	var e RankedRow
	if board != nil {
		e, ok = board.Find(types.UID(rowID))
	}
	if !ok {
		h["Cache-Control"] = cacheNoStore
		apierr.Write(w, apierr.NotFound("row %s not found on leaderboard %s", rowID, t))
		return
	}
	etag := exportETag(lb, board, "badge."+rowID)
	h["Etag"] = []string{etag}
	if matchesETag(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := Badge(e, lb.Spec.Title)
	h["Content-Type"] = contentTypeSVG
	h["Content-Security-Policy"] = badgeCSP
	h["X-Content-Type-Options"] = noSniff
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// badgeTitleMax is how many characters of a board's title a badge shows.
const badgeTitleMax = 60

// Badge draws a row's badge: "#3" (with its range, "#3 (2–3)", when the row's
// uncertainty allows a better rank) on the left, the board's title on the right. Text
// is XML-escaped; the badge holds no script, link or external reference.
func Badge(e RankedRow, title string) []byte {
	rank := "#" + strconv.Itoa(e.Rank)
	if e.RankUpper > 0 && e.RankUpper < e.Rank {
		rank += " (" + strconv.Itoa(e.RankUpper) + "–" + strconv.Itoa(e.Rank) + ")"
	}
	shown := title
	if utf8.RuneCountInString(shown) > badgeTitleMax {
		shown = string([]rune(shown)[:badgeTitleMax-1]) + "…"
	}
	label := rank + " on " + title
	lw := 10 + 7*utf8.RuneCountInString(rank)
	rw := 10 + 7*utf8.RuneCountInString(shown)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="`, lw+rw)
	escape(&b, label)
	b.WriteString(`"><title>`)
	escape(&b, label)
	fmt.Fprintf(&b, `</title><rect width="%d" height="20" fill="#555"/><rect x="%d" width="%d" height="20" fill="#007ec6"/>`, lw, lw, rw)
	b.WriteString(`<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">`)
	fmt.Fprintf(&b, `<text x="5" y="14">`)
	escape(&b, rank)
	fmt.Fprintf(&b, `</text><text x="%d" y="14">`, lw+5)
	escape(&b, shown)
	b.WriteString("</text></g></svg>\n")
	return b.Bytes()
}

// escape writes s as XML text (also inside an attribute: quotes are escaped too);
// characters XML cannot hold become U+FFFD.
func escape(b *bytes.Buffer, s string) { _ = xml.EscapeText(b, []byte(s)) }
