// Package lru is a least-recently-used cache bounded by entries and by bytes, for the
// encoded pages the public read and the web pages keep. Keys carry the versions of
// what a value was built from, so an entry is never stale: a change makes a new key
// and the old entry ages out.
package lru

import (
	"container/list"
	"sync"
)

// Cache is safe for concurrent use.
type Cache[K comparable, V any] struct {
	mu         sync.Mutex
	maxEntries int   // 0: no bound on the count
	maxBytes   int64 // bound on the summed sizes
	maxItem    int64 // a larger value is not kept
	size       func(V) int64
	bytes      int64
	entries    map[K]*list.Element
	order      *list.List // front = most recently used
}

type item[K comparable, V any] struct {
	key   K
	value V
	size  int64
}

// New returns a cache of at most maxEntries values (0: any number) whose sizes, as size
// measures them, sum to at most maxBytes; a value larger than maxItem is never kept.
func New[K comparable, V any](maxEntries int, maxBytes, maxItem int64, size func(V) int64) *Cache[K, V] {
	return &Cache[K, V]{maxEntries: maxEntries, maxBytes: maxBytes, maxItem: min(maxItem, maxBytes), size: size,
		entries: map[K]*list.Element{}, order: list.New()}
}

// Get returns the value kept under k and marks it used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*item[K, V]).value, true
}

// Put keeps v under k (replacing what k held), then drops the least recently used
// values until the bounds hold.
func (c *Cache[K, V]) Put(k K, v V) {
	n := c.size(v)
	if n > c.maxItem {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		it := el.Value.(*item[K, V])
		c.bytes += n - it.size
		it.value, it.size = v, n
		c.order.MoveToFront(el)
	} else {
		c.entries[k] = c.order.PushFront(&item[K, V]{key: k, value: v, size: n})
		c.bytes += n
	}
	for (c.maxEntries > 0 && c.order.Len() > c.maxEntries) || c.bytes > c.maxBytes {
		oldest := c.order.Back()
		it := oldest.Value.(*item[K, V])
		c.order.Remove(oldest)
		delete(c.entries, it.key)
		c.bytes -= it.size
	}
}

// Len is the number of values kept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Bytes is the summed size of the values kept.
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
