package apikeys

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/secrets"
)

// AccessTokenPrefix starts every access token an exchange hands out.
const AccessTokenPrefix = "pdmat_"

// AccessTokenTTL is how long an exchanged access token signs in (never longer than its
// key lives: every use checks the key again).
const AccessTokenTTL = time.Hour

// verifiedTTL is how long a key's successful check is reused: a revoked key, an expired
// one or one whose ServiceAccount is gone stops working within this time.
const verifiedTTL = 2 * time.Second

// Failed sign-ins with key-shaped tokens are rate-limited (docs/api-keys.md): every
// failure costs a token of this bucket, and with the bucket empty a key that is not
// already verified is refused without a lookup.
const (
	failureRate  = 20 // per second
	failureBurst = 100
)

// accessDomain separates access-token MACs from any other use of the signing key.
const accessDomain = "podium-api-key-access-token"

// Reviewer authenticates Podium API keys and their access tokens, and passes every
// other token and every access decision to Next (the Kubernetes reviewer): a key's
// caller is its creator's identity, authorized by the same SubjectAccessReviews.
type Reviewer struct {
	Next authn.Reviewer
	Keys *Store
	// Signer signs access tokens; every replica uses the same key (its Secret).
	Signer *secrets.Keyring

	verified *utilcache.LRUExpireCache // digest of the token -> *authn.Caller
	failures *rate.Limiter
}

// NewReviewer returns a Reviewer of keys kept in keys, signing access tokens with signer.
func NewReviewer(next authn.Reviewer, keys *Store, signer *secrets.Keyring) *Reviewer {
	return &Reviewer{
		Next: next, Keys: keys, Signer: signer,
		verified: utilcache.NewLRUExpireCache(authn.DefaultCacheSize),
		failures: rate.NewLimiter(failureRate, failureBurst),
	}
}

// Authenticate implements authn.Reviewer.
func (r *Reviewer) Authenticate(ctx context.Context, token string) (*authn.Caller, error) {
	switch {
	case strings.HasPrefix(token, KeyPrefix):
		return r.verify(ctx, token, r.verifyKey)
	case strings.HasPrefix(token, AccessTokenPrefix):
		return r.verify(ctx, token, r.verifyAccessToken)
	default:
		return r.Next.Authenticate(ctx, token)
	}
}

// Allowed implements authn.Reviewer: the Kubernetes decision for the key's identity.
func (r *Reviewer) Allowed(ctx context.Context, c *authn.Caller, a authn.Attributes) (bool, error) {
	return r.Next.Allowed(ctx, c, a)
}

// verify runs check on a token not verified in the last verifiedTTL, counting failures.
func (r *Reviewer) verify(ctx context.Context, token string, check func(context.Context, string) (*authn.Caller, error)) (*authn.Caller, error) {
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:])
	if c, ok := r.verified.Get(key); ok {
		return c.(*authn.Caller), nil
	}
	if r.failures.Tokens() < 1 {
		return nil, ErrInvalid // too many failures lately: no lookups for unknown keys
	}
	c, err := check(ctx, token)
	if errors.Is(err, ErrInvalid) {
		r.failures.Allow()
		return nil, ErrInvalid
	}
	if err != nil {
		return nil, err
	}
	r.verified.Add(key, c, verifiedTTL)
	return c, nil
}

// VerifyKey checks an API key (the exchange uses it): the caller it signs in as, or
// ErrInvalid.
func (r *Reviewer) VerifyKey(ctx context.Context, key string) (*authn.Caller, error) {
	if !strings.HasPrefix(key, KeyPrefix) {
		return nil, ErrInvalid
	}
	return r.verify(ctx, key, r.verifyKey)
}

func (r *Reviewer) verifyKey(ctx context.Context, key string) (*authn.Caller, error) {
	id, ok := parseKey(key)
	if !ok {
		return nil, ErrInvalid
	}
	return r.callerOf(ctx, id, key)
}

// callerOf checks key id (with the key itself, or "" for an access token) and that its
// identity still exists, and returns the caller it signs in as.
func (r *Reviewer) callerOf(ctx context.Context, id, key string) (*authn.Caller, error) {
	sec, ident, err := r.Keys.check(ctx, id, key)
	if err != nil {
		return nil, err
	}
	if err := r.identityExists(ctx, ident); err != nil {
		return nil, err
	}
	go r.Keys.touch(context.WithoutCancel(ctx), sec)
	c := authn.NewCaller(ident.User, ident.UID, ident.Groups, ident.Extra)
	c.APIKeyID = id
	return c, nil
}

// identityExists refuses a key whose ServiceAccount was deleted (or deleted and made
// again: another UID). Other users have no object to look at; their rights are what
// the SubjectAccessReviews of every request say.
func (r *Reviewer) identityExists(ctx context.Context, ident identity) error {
	rest, ok := strings.CutPrefix(ident.User, "system:serviceaccount:")
	if !ok {
		return nil
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok {
		return ErrInvalid
	}
	sa := &corev1.ServiceAccount{}
	err := r.Keys.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sa)
	if apierrors.IsNotFound(err) {
		return ErrInvalid
	}
	if err != nil {
		return fmt.Errorf("reading the ServiceAccount of an API key: %w", err)
	}
	if ident.UID != "" && string(sa.UID) != ident.UID {
		return ErrInvalid
	}
	return nil
}

// Exchange returns an access token for a verified key's id: pdmat_, the base64 of
// "<id>.<expiry unix seconds>", '.', and the base64 of its MAC.
func (r *Reviewer) Exchange(ctx context.Context, id string) (string, int, error) {
	exp := r.Keys.now().Add(AccessTokenTTL).Unix()
	payload := id + "." + strconv.FormatInt(exp, 10)
	mac, err := r.Signer.MAC(ctx, accessDomain, []byte(payload))
	if err != nil {
		return "", 0, err
	}
	enc := base64.RawURLEncoding
	return AccessTokenPrefix + enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(mac), int(AccessTokenTTL.Seconds()), nil
}

func (r *Reviewer) verifyAccessToken(ctx context.Context, token string) (*authn.Caller, error) {
	enc := base64.RawURLEncoding
	p, m, ok := strings.Cut(strings.TrimPrefix(token, AccessTokenPrefix), ".")
	if !ok {
		return nil, ErrInvalid
	}
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil {
		return nil, ErrInvalid
	}
	want, err := r.Signer.MAC(ctx, accessDomain, payload)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(mac, want) {
		return nil, ErrInvalid
	}
	id, expS, ok := strings.Cut(string(payload), ".")
	exp, err := strconv.ParseInt(expS, 10, 64)
	if !ok || err != nil || !r.Keys.now().Before(time.Unix(exp, 0)) {
		return nil, ErrInvalid
	}
	if _, ok := parseKey(KeyPrefix + id + "_x"); !ok {
		return nil, ErrInvalid
	}
	return r.callerOf(ctx, id, "")
}
