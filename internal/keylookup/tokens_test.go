package keylookup

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"podium.dev/podium/internal/accesstoken"
	"podium.dev/podium/internal/authn"
)

// fakeOperator publishes a key set at accesstoken.JWKSPath and answers lookups of the
// tokens it holds valid, counting them.
type fakeOperator struct {
	mu      sync.Mutex
	set     accesstoken.KeySet
	valid   map[string]bool
	down    bool
	lookups atomic.Int32
}

func (f *fakeOperator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path == Path {
		f.lookups.Add(1)
	}
	if f.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	switch r.URL.Path {
	case accesstoken.JWKSPath:
		_ = json.NewEncoder(w).Encode(f.set.JWKS())
	case Path:
		var req request
		_ = json.NewDecoder(r.Body).Decode(&req)
		if !f.valid[req.Token] {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(Identity{User: "system:serviceaccount:acme:bob", APIKeyID: "0123456789abcdef"})
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeOperator) change(do func(f *fakeOperator)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	do(f)
}

func signingKey(t *testing.T, id string) accesstoken.SigningKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return accesstoken.SigningKey{ID: id, Private: priv}
}

func publicOf(k accesstoken.SigningKey) ed25519.PublicKey {
	return k.Private.Public().(ed25519.PublicKey)
}

// token signs an access token for bob's key, issued at iat.
func token(t *testing.T, k accesstoken.SigningKey, iat time.Time) string {
	t.Helper()
	c, err := accesstoken.NewClaims("system:serviceaccount:acme:bob", "0123456789abcdef", iat, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := accesstoken.Sign(k, c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// The read tier checks an access token's signature, header and claims itself, with the
// public keys the operator publishes: a token of a key the set does not list, or an
// expired one, is refused without asking the operator; a token that verifies is still
// looked up (revocation is the operator's word); during a rollover the tokens of both
// keys verify, and a removed key's do not once the set is read again.
func TestReviewerChecksAccessTokensWithThePublishedKeys(t *testing.T) {
	ctx := context.Background()
	k1, k2, stranger := signingKey(t, "k1"), signingKey(t, "k2"), signingKey(t, "k9")
	now := time.Now()
	fake := &fakeOperator{set: accesstoken.KeySet{"k1": publicOf(k1)}, valid: map[string]bool{}}
	op := httptest.NewServer(fake)
	t.Cleanup(op.Close)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	r := &Reviewer{Next: kubeOnly{}, Operator: op.URL, Token: func() (string, error) { return "read-tier-token", nil },
		Tokens: &accesstoken.RemoteKeys{URL: op.URL + accesstoken.JWKSPath, Now: clock}}
	signsIn := func(tok string) error { _, err := r.Authenticate(ctx, tok); return err }
	refusedLocally := func(what, tok string) {
		t.Helper()
		before := fake.lookups.Load()
		if err := signsIn(tok); !errors.Is(err, authn.ErrInvalidToken) {
			t.Fatalf("%s: %v, want a refusal", what, err)
		}
		if n := fake.lookups.Load() - before; n != 0 {
			t.Errorf("%s: %d lookups at the operator, want none (the signature is the read tier's check)", what, n)
		}
	}

	tok1 := token(t, k1, now)
	fake.change(func(f *fakeOperator) { f.valid[tok1] = true })
	if err := signsIn(tok1); err != nil {
		t.Fatalf("a token of the published key: %v", err)
	}
	if n := fake.lookups.Load(); n != 1 {
		t.Errorf("%d lookups for a token that verifies, want 1 (revocation is the operator's word)", n)
	}

	forged := token(t, stranger, now)
	fake.change(func(f *fakeOperator) { f.valid[forged] = true }) // even an operator that would say yes is not asked
	refusedLocally("a token of a key the set does not list", forged)
	refusedLocally("a token under a listed kid, signed by another key", token(t, accesstoken.SigningKey{ID: "k1", Private: stranger.Private}, now))
	refusedLocally("an expired token of the published key", token(t, k1, now.Add(-2*time.Hour)))

	t.Log("rollover: k2 is added and signs; k1's tokens still verify")
	fake.change(func(f *fakeOperator) { f.set = accesstoken.KeySet{"k1": publicOf(k1), "k2": publicOf(k2)} })
	advance(5 * time.Second) // a kid it does not hold is read again at most every 5 s
	tok2, tok1b := token(t, k2, now), token(t, k1, now)
	fake.change(func(f *fakeOperator) { f.valid[tok2], f.valid[tok1b] = true, true })
	if err := signsIn(tok2); err != nil {
		t.Fatalf("a token of the new key: %v", err)
	}
	if err := signsIn(tok1b); err != nil {
		t.Fatalf("a token of the previous key during the rollover: %v", err)
	}

	t.Log("k1 is removed: once the set is read again (30 s), its tokens are refused without a lookup")
	fake.change(func(f *fakeOperator) { f.set = accesstoken.KeySet{"k2": publicOf(k2)} })
	advance(accesstoken.DefaultRefresh)
	tok1c := token(t, k1, now)
	fake.change(func(f *fakeOperator) { f.valid[tok1c] = true })
	refusedLocally("a token of the removed key", tok1c)
	if err := signsIn(token(t, k2, now)); !errors.Is(err, authn.ErrInvalidToken) {
		t.Fatalf("a token of the current key the operator does not hold valid (revoked): %v", err)
	}

	t.Log("no key set read yet and the operator down: an error (503), not a refusal, and no lookup")
	fake.change(func(f *fakeOperator) { f.down = true })
	cold := &Reviewer{Next: kubeOnly{}, Operator: op.URL, Token: func() (string, error) { return "read-tier-token", nil }}
	before := fake.lookups.Load()
	if err := func() error { _, err := cold.Authenticate(ctx, tok2); return err }(); err == nil || errors.Is(err, authn.ErrInvalidToken) {
		t.Fatalf("with no key set: %v, want an error that is no refusal", err)
	}
	if fake.lookups.Load() != before {
		t.Errorf("a lookup was made without a key set")
	}
}
