package httpapi

import (
	"container/list"
	"sync"
)

// byteCache is an LRU of encoded responses bounded by their total size, so that deep
// pages of many boards cannot grow the operator's memory without limit.
type byteCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	order *list.List // front = most recently used; elements hold *byteEntry
	items map[string]*list.Element
}

type byteEntry struct {
	key  string
	body []byte
}

func newByteCache(max int64) *byteCache {
	return &byteCache{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (c *byteCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*byteEntry).body, true
}

// put keeps body under key; a body larger than a quarter of the bound is not kept.
func (c *byteCache) put(key string, body []byte) {
	n := int64(len(body) + len(key))
	if n > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	c.items[key] = c.order.PushFront(&byteEntry{key: key, body: body})
	c.size += n
	for c.size > c.max {
		last := c.order.Back()
		e := last.Value.(*byteEntry)
		c.order.Remove(last)
		delete(c.items, e.key)
		c.size -= int64(len(e.body) + len(e.key))
	}
}
