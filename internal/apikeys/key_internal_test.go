package apikeys

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseKey(t *testing.T) {
	for key, want := range map[string]string{
		"pdm_0123456789abcdef_secret": "0123456789abcdef",
		"pdm_0123456789ABCDEF_secret": "",
		"pdm_0123456789abcdeg_secret": "",
		"pdm_0123456789abcdef_":       "",
		"pdm_0123456789abcdefXsecret": "",
		"pdm_0123456789abcde_secret":  "",
		"pdmat_0123456789abcdef_x":    "",
		"0123456789abcdef_secret":     "",
		"":                            "",
	} {
		id, ok := parseKey(key)
		if ok != (want != "") || id != want {
			t.Errorf("parseKey(%q) = %q, %v; want %q", key, id, ok, want)
		}
	}
}

func TestBucketChargesBeforeItChecks(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	b := newBucket(6*time.Second, 10)
	var wg sync.WaitGroup
	var taken atomic.Int32
	for range 200 {
		wg.Go(func() {
			if b.take(t0) {
				taken.Add(1)
			}
		})
	}
	wg.Wait()
	if n := taken.Load(); n != 10 {
		t.Fatalf("200 concurrent takes from a bucket of 10 took %d", n)
	}
	b.refund(t0)
	if !b.take(t0) || b.take(t0) {
		t.Fatal("a refund gives back exactly one token")
	}
	if b.take(t0.Add(5*time.Second)) || !b.take(t0.Add(6*time.Second)) || b.take(t0.Add(6*time.Second)) {
		t.Fatal("one token comes back every 6 seconds")
	}
	for range 20 {
		b.refund(t0.Add(time.Hour))
	}
	n := 0
	for b.take(t0.Add(time.Hour)) {
		n++
	}
	if n != 10 {
		t.Fatalf("refunds and refills fill the bucket up to its burst only: took %d", n)
	}
}
