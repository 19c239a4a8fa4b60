package web

import (
	"container/list"
	"sync"
)

// lru is a small least-recently-used cache bounded by entries and by bytes. Keys carry
// the versions of what a value was built from, so an entry is never stale: a change
// makes a new key and the old entry ages out.
type lru[K comparable, V any] struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int64
	size       func(V) int64
	bytes      int64
	entries    map[K]*list.Element
	order      *list.List
}

type lruItem[K comparable, V any] struct {
	key   K
	value V
	size  int64
}

func newLRU[K comparable, V any](maxEntries int, maxBytes int64, size func(V) int64) *lru[K, V] {
	return &lru[K, V]{maxEntries: maxEntries, maxBytes: maxBytes, size: size, entries: map[K]*list.Element{}, order: list.New()}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruItem[K, V]).value, true
}

func (c *lru[K, V]) put(k K, v V) {
	n := c.size(v)
	if n > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		it := el.Value.(*lruItem[K, V])
		c.bytes += n - it.size
		it.value, it.size = v, n
		c.order.MoveToFront(el)
	} else {
		c.entries[k] = c.order.PushFront(&lruItem[K, V]{key: k, value: v, size: n})
		c.bytes += n
	}
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		oldest := c.order.Back()
		it := oldest.Value.(*lruItem[K, V])
		c.order.Remove(oldest)
		delete(c.entries, it.key)
		c.bytes -= it.size
	}
}

func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
