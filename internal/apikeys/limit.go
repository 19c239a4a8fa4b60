package apikeys

import (
	"sync"
	"time"
)

// bucket is a token bucket that is charged before the work it limits and refunded when
// the work turns out to be legitimate: of n concurrent attempts against a bucket holding
// k tokens, exactly k proceed (a check followed by a later charge lets them all through
// the check first). It starts full.
type bucket struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
	every  time.Duration // one token comes back per every
	burst  float64
}

func newBucket(every time.Duration, burst int) *bucket {
	return &bucket{tokens: float64(burst), every: every, burst: float64(burst)}
}

// fill adds the tokens earned since the last call. b.mu is held.
func (b *bucket) fill(now time.Time) {
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+float64(now.Sub(b.last))/float64(b.every))
	}
	if now.After(b.last) {
		b.last = now
	}
}

// take spends one token; false (and nothing spent) when there is none.
func (b *bucket) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fill(now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// refund gives back a token taken for an attempt that was not a failure.
func (b *bucket) refund(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fill(now)
	b.tokens = min(b.burst, b.tokens+1)
}
