package keylookup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/rest"

	"podium.dev/podium/internal/accesstoken"
	"podium.dev/podium/internal/authn"
)

// answerTTL is how long the read tier reuses an answer (a sign-in or a refusal): the
// operator's own reuse of a key's check (2 s), so a revoked key's callers are refused by
// the read tier within seconds too.
const answerTTL = 2 * time.Second

// lookupTimeout bounds one lookup.
const lookupTimeout = 5 * time.Second

// maxAnswerBytes bounds the operator's answer the read tier reads.
const maxAnswerBytes = 64 << 10

// Reviewer is the read tier's side: an access token is first checked here with the
// operator's public keys (Tokens: signature, header, issuer, audience, expiry), then, like
// an API key, looked up at the operator (Operator + Path), whose word says whether its key
// is revoked; every other token and every access decision goes to Next (the Kubernetes
// reviewer: TokenReview and SubjectAccessReview, which the read tier may create).
type Reviewer struct {
	Next authn.Reviewer
	// Operator is the operator's HTTP API, e.g. http://podium.podium-system.svc.
	Operator string
	// Token is the read tier's own ServiceAccount token, sent as its bearer.
	Token func() (string, error)
	// Client makes the lookups (nil: a client with lookupTimeout).
	Client *http.Client
	// Tokens checks access tokens with the operator's public keys before any lookup (nil:
	// the keys published at Operator + accesstoken.JWKSPath).
	Tokens *accesstoken.RemoteKeys

	once    sync.Once
	answers *utilcache.LRUExpireCache // digest of the token -> *authn.Caller, or nil for a refusal
}

// Authenticate implements authn.Reviewer.
func (r *Reviewer) Authenticate(ctx context.Context, token string) (*authn.Caller, error) {
	if !IsKey(token) {
		return r.Next.Authenticate(ctx, token)
	}
	r.once.Do(r.init)
	sum := sha256.Sum256([]byte(token))
	d := hex.EncodeToString(sum[:])
	if v, ok := r.answers.Get(d); ok {
		if v == nil {
			return nil, authn.ErrInvalidToken
		}
		return v.(*authn.Caller), nil
	}
	if accesstoken.Looks(token) {
		// The signature, header and claims are the read tier's own check, with public
		// keys only: a forged, expired or foreign token never reaches the operator. Such
		// refusals are not kept, so a flood of them cannot push out the answers kept.
		_, err := r.Tokens.Verify(ctx, token)
		switch {
		case errors.Is(err, accesstoken.ErrInvalid):
			return nil, authn.ErrInvalidToken
		case err != nil:
			return nil, err // no key set read yet: try again (503), no refusal
		}
	}
	c, err := r.lookup(ctx, token)
	switch {
	case errors.Is(err, authn.ErrInvalidToken):
		r.answers.Add(d, nil, answerTTL)
	case err == nil:
		r.answers.Add(d, c, answerTTL)
	}
	return c, err
}

func (r *Reviewer) init() {
	r.answers = utilcache.NewLRUExpireCache(authn.DefaultCacheSize)
	if r.Tokens == nil {
		r.Tokens = &accesstoken.RemoteKeys{URL: strings.TrimSuffix(r.Operator, "/") + accesstoken.JWKSPath, Client: r.Client}
	}
}

// Allowed implements authn.Reviewer: the Kubernetes decision for the key's identity.
func (r *Reviewer) Allowed(ctx context.Context, c *authn.Caller, a authn.Attributes) (bool, error) {
	return r.Next.Allowed(ctx, c, a)
}

func (r *Reviewer) lookup(ctx context.Context, token string) (*authn.Caller, error) {
	if r.Operator == "" {
		return nil, errors.New("no operator to look API keys up at (--operator-url)")
	}
	own, err := r.Token()
	if err != nil {
		return nil, fmt.Errorf("reading the read tier's own token: %w", err)
	}
	body, err := json.Marshal(request{Token: token})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(r.Operator, "/")+Path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+own)
	hc := r.Client
	if hc == nil {
		hc = &http.Client{Timeout: lookupTimeout}
	}
	resp, err := hc.Do(req)
	if err != nil {
		// The error names the URL, never the token (it is in the body only).
		return nil, fmt.Errorf("looking an API key up at the operator: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return nil, authn.ErrInvalidToken
	default:
		return nil, fmt.Errorf("looking an API key up at the operator: %s", resp.Status)
	}
	var id Identity
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswerBytes)).Decode(&id); err != nil {
		return nil, fmt.Errorf("reading the operator's answer: %w", err)
	}
	if id.User == "" {
		return nil, errors.New("the operator's answer names no user")
	}
	return id.caller(), nil
}

// TokenOf is the bearer token of cfg, the read tier's own: in a Pod the projected
// ServiceAccount token file (read again at most once a minute: the kubelet rotates it),
// else the token cfg holds.
func TokenOf(cfg *rest.Config) func() (string, error) {
	if cfg.BearerTokenFile == "" {
		tok := cfg.BearerToken
		return func() (string, error) {
			if tok == "" {
				return "", errors.New("the read tier's client configuration holds no bearer token")
			}
			return tok, nil
		}
	}
	var (
		mu   sync.Mutex
		tok  string
		read time.Time
	)
	path := cfg.BearerTokenFile
	return func() (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if tok != "" && time.Since(read) < time.Minute {
			return tok, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		tok, read = strings.TrimSpace(string(b)), time.Now()
		return tok, nil
	}
}
