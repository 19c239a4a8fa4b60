package httpapi

import (
	"container/list"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/types"
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

// pageCache is an LRU of encoded pages bounded by their total size, so that deep
// pages of many boards cannot grow the operator's memory without limit.
type pageCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	order *list.List // front = most recently used; elements hold *pageEntry
	items map[pageKey]*list.Element
}

type pageEntry struct {
	key pageKey
	p   *page
}

func newPageCache(max int64) *pageCache {
	return &pageCache{max: max, order: list.New(), items: map[pageKey]*list.Element{}}
}

func (c *pageCache) get(key pageKey) (*page, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*pageEntry).p, true
}

// put keeps p under key; a page larger than a quarter of the bound is not kept.
func (c *pageCache) put(key pageKey, p *page) {
	n := p.size()
	if n > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	c.items[key] = c.order.PushFront(&pageEntry{key: key, p: p})
	c.size += n
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*pageEntry)
		c.order.Remove(last)
		delete(c.items, e.key)
		c.size -= e.p.size()
	}
}
