package lru

import "testing"

func TestBounds(t *testing.T) {
	size := func(s string) int64 { return int64(len(s)) }
	c := New[int](2, 10, 6, size)
	c.Put(1, "aaaa")
	c.Put(2, "bbbb")
	if _, ok := c.Get(1); !ok { // 1 is now the most recently used
		t.Fatal("1 not kept")
	}
	c.Put(3, "cc") // three entries: 2, the least recently used, goes
	if _, ok := c.Get(2); ok || c.Len() != 2 {
		t.Fatalf("entry bound: 2 kept=%v, len %d", ok, c.Len())
	}
	c.Put(4, "ddddddd") // larger than maxItem: not kept
	if _, ok := c.Get(4); ok {
		t.Fatal("an oversized value was kept")
	}
	c.Put(1, "eeeeee") // replaces 1: 6+2 bytes
	if v, _ := c.Get(1); v != "eeeeee" || c.Bytes() != 8 {
		t.Fatalf("replace: %q, %d bytes", v, c.Bytes())
	}
	c.Put(5, "ffff") // 12 bytes > 10: the least recently used (3) goes
	if _, ok := c.Get(3); ok || c.Bytes() != 10 {
		t.Fatalf("byte bound: 3 kept=%v, %d bytes", ok, c.Bytes())
	}

	unbounded := New[int](0, 100, 100, size)
	for i := range 50 {
		unbounded.Put(i, "x")
	}
	if unbounded.Len() != 50 {
		t.Fatalf("maxEntries 0 bounded the count: %d", unbounded.Len())
	}
}
