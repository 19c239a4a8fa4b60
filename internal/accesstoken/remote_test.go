package accesstoken

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// published is an operator's /.well-known/jwks.json whose set and answer the test
// changes, counting reads.
type published struct {
	mu    sync.Mutex
	set   KeySet
	fail  bool
	body  string
	reads atomic.Int32
}

func (p *published) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.reads.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.fail:
		http.Error(w, "down", http.StatusServiceUnavailable)
	case p.body != "":
		_, _ = w.Write([]byte(p.body))
	default:
		_ = json.NewEncoder(w).Encode(p.set.JWKS())
	}
}

func (p *published) change(f func(p *published)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func TestRemoteKeysRollover(t *testing.T) {
	ctx := context.Background()
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	pubd := &published{set: KeySet{"k1": pub(k1)}}
	srv := httptest.NewServer(pubd) // 127.0.0.1
	defer srv.Close()
	now := t0
	r := &RemoteKeys{URL: srv.URL, Now: func() time.Time { return now }}
	tok1, _ := Sign(k1, claims(t))
	tok2, _ := Sign(k2, claims(t))
	verifies := func(tok string) error { _, err := r.Verify(ctx, tok); return err }

	if err := verifies(tok1); err != nil {
		t.Fatalf("the current key's token: %v", err)
	}
	if err := verifies(tok2); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a token of an unpublished key: %v", err)
	}

	t.Log("a new key is published: its token verifies without waiting for the refresh, once the retry time passed")
	pubd.change(func(p *published) { p.set = KeySet{"k1": pub(k1), "k2": pub(k2)} })
	if err := verifies(tok2); !errors.Is(err, ErrInvalid) {
		t.Fatalf("re-read sooner than %v after the last read: %v", unknownKidRetry, err)
	}
	now = now.Add(unknownKidRetry)
	if err := verifies(tok2); err != nil {
		t.Fatalf("the new key's token after the retry time: %v", err)
	}
	if err := verifies(tok1); err != nil {
		t.Fatalf("the previous key's token during the rollover: %v", err)
	}

	t.Log("a flood of unknown kids costs one read per retry time")
	before := pubd.reads.Load()
	stranger, _ := Sign(newKey(t, "k9"), claims(t))
	for range 100 {
		_ = verifies(stranger)
	}
	if n := pubd.reads.Load() - before; n != 0 {
		t.Fatalf("%d reads for 100 tokens of an unknown kid within the retry time", n)
	}

	t.Log("the previous key is removed: its token is refused after the refresh")
	pubd.change(func(p *published) { p.set = KeySet{"k2": pub(k2)} })
	now = now.Add(DefaultRefresh)
	if err := verifies(tok1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a removed key's token: %v", err)
	}
	if err := verifies(tok2); err != nil {
		t.Fatalf("the current key's token: %v", err)
	}

	t.Log("the operator down, or answering garbage: the last set is kept")
	for _, f := range []func(p *published){
		func(p *published) { p.fail = true },
		func(p *published) { p.fail, p.body = false, `{"keys":[{"kty":"RSA"}]}` },
		func(p *published) { p.body = `{"keys":[` + strings.Repeat(" ", maxJWKSBytes) + `]}` },
	} {
		pubd.change(f)
		now = now.Add(DefaultRefresh)
		if err := verifies(tok2); err != nil {
			t.Fatalf("the last set was dropped: %v", err)
		}
	}
}

func TestRemoteKeysNoSetYet(t *testing.T) {
	pubd := &published{fail: true}
	srv := httptest.NewServer(pubd)
	defer srv.Close()
	tok, _ := Sign(newKey(t, "k1"), claims(t))
	_, err := (&RemoteKeys{URL: srv.URL}).Verify(context.Background(), tok)
	if err == nil || errors.Is(err, ErrInvalid) {
		t.Fatalf("with no set yet, a failed read is an error of its own (try again), not a refusal: %v", err)
	}
}
