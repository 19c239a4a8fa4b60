package httpapi

import (
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	"podium.dev/podium/internal/lru"
)

// pageKey is everything an encoded page depends on: the board (UID), its rows
// (the rank index's version), its definition and resolved status (resourceVersion) and
// the page asked for. A struct rather than the ETag string, so that a cached page is
// found without building a string.
type pageKey struct {
	uid        types.UID
	version    uint64
	rv         string
	page, size int64
}

// etag is the page's entity tag.
func (k pageKey) etag() string {
	return `"` + string(k.uid) + "." + strconv.FormatUint(k.version, 36) + "." + k.rv + "." +
		strconv.FormatInt(k.page, 10) + "." + strconv.FormatInt(k.size, 10) + `"`
}

// page is an encoded page with its header values, built once: net/http only reads
// header values, so every answer of the page shares them.
type page struct {
	body          []byte
	etag          []string // one value
	contentLength []string // one value
}

func newPage(etag string, body []byte) *page {
	v := []string{etag, strconv.Itoa(len(body))}
	return &page{body: body, etag: v[0:1:1], contentLength: v[1:2:2]}
}

func (p *page) size() int64 { return int64(len(p.body) + len(p.etag[0]) + len(p.contentLength[0])) }

// newPageCache is an LRU of encoded pages bounded by their total size, so that deep
// pages of many boards cannot grow the operator's memory without limit; a page larger
// than a quarter of the bound is not kept.
func newPageCache(max int64) *lru.Cache[pageKey, *page] {
	return lru.New[pageKey](0, max, max/4, (*page).size)
}
