package apikeys

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/accesstoken"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/secrets"
	"podium.dev/podium/internal/wire/secretswire"
)

// AccessTokenPrefix started the access tokens of exchanges before they were JWTs
// (legacy: such a token is still accepted until it expires, at most AccessTokenTTL after
// an operator of an earlier release made it; docs/api-keys.md, "Upgrading").
const AccessTokenPrefix = "pdmat_"

// AccessTokenTTL is how long an exchanged access token signs in (never longer than its
// key lives: every use checks the key again).
const AccessTokenTTL = time.Hour

// verifiedTTL is how long a key's successful check is reused: a revoked key, an expired
// one or one whose ServiceAccount is gone stops working within this time.
const verifiedTTL = 2 * time.Second

// Key-shaped tokens without the operator's tag (keys made before tags, and guesses) are
// looked up only within a failure budget shared by all callers (docs/api-keys.md, "Brute
// force"): each lookup takes a token first and a key that signs in gives it back; with
// the bucket empty such a token is refused without a lookup. Tagged keys and access
// tokens with a valid MAC never touch this budget: a flood of guesses cannot refuse them.
const (
	failureEvery = time.Second / 20 // 20 per second
	failureBurst = 100
)

// tagDomain separates key tags from any other MAC of the signing key; tagBytes of the MAC
// end the secret of every key made since tags exist.
const (
	tagDomain = "podium-api-key-tag"
	tagBytes  = 8
)

// accessDomain separated legacy access-token MACs from any other use of the signing key.
const accessDomain = "podium-api-key-access-token"

// Reviewer authenticates Podium API keys and their access tokens, and passes every
// other token and every access decision to Next (the Kubernetes reviewer): a key's
// caller is its creator's identity, authorized by the same SubjectAccessReviews.
type Reviewer struct {
	Next authn.Reviewer
	Keys *Store
	// Signer tags keys (and checked legacy pdmat_ access tokens); every replica uses the
	// same key (its Secret).
	Signer *secrets.Keyring
	// TokenKeys sign access tokens (JWTs) and verify them; every replica uses the same
	// keys (their Secret, TokenKeysSecret).
	TokenKeys *TokenKeys

	verified *utilcache.LRUExpireCache // digest of the token -> *authn.Caller
	refused  *utilcache.LRUExpireCache // digest of a tagged key or signed token -> struct{}
	failures *bucket
}

// NewReviewer returns a Reviewer of keys kept in keys, tagging keys with signer and
// signing access tokens with the keys of the Secret TokenKeysSecret in keys' namespace.
func NewReviewer(next authn.Reviewer, keys *Store, signer *secrets.Keyring) *Reviewer {
	return &Reviewer{
		Next: next, Keys: keys, Signer: signer,
		TokenKeys: &TokenKeys{Client: keys.Client, Reader: keys.Reader, Now: keys.Now,
			Secret: types.NamespacedName{Namespace: keys.Namespace, Name: TokenKeysSecret}},
		verified: utilcache.NewLRUExpireCache(authn.DefaultCacheSize),
		refused:  utilcache.NewLRUExpireCache(authn.DefaultCacheSize),
		failures: newBucket(failureEvery, failureBurst),
	}
}

// Authenticate implements authn.Reviewer.
func (r *Reviewer) Authenticate(ctx context.Context, token string) (*authn.Caller, error) {
	switch {
	case strings.HasPrefix(token, KeyPrefix):
		return r.VerifyKey(ctx, token)
	case strings.HasPrefix(token, AccessTokenPrefix):
		return r.verifyLegacyAccessToken(ctx, token)
	case accesstoken.Looks(token):
		return r.VerifyAccessToken(ctx, token)
	default:
		return r.Next.Authenticate(ctx, token)
	}
}

// Allowed implements authn.Reviewer: the Kubernetes decision for the key's identity.
func (r *Reviewer) Allowed(ctx context.Context, c *authn.Caller, a authn.Attributes) (bool, error) {
	return r.Next.Allowed(ctx, c, a)
}

func tokenDigest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// signed checks a token the operator signed (a tagged key, or an access token whose MAC
// held): a success is reused for verifiedTTL, and so is a refusal (a revoked key's holder
// retrying costs one lookup per verifiedTTL). Forgers cannot make such tokens, so no
// budget is spent.
func (r *Reviewer) signed(ctx context.Context, token string, check func(context.Context) (*authn.Caller, error)) (*authn.Caller, error) {
	d := tokenDigest(token)
	if c, ok := r.verified.Get(d); ok {
		return c.(*authn.Caller), nil
	}
	if _, ok := r.refused.Get(d); ok {
		return nil, ErrInvalid
	}
	c, err := check(ctx)
	if errors.Is(err, ErrInvalid) {
		r.refused.Add(d, struct{}{}, verifiedTTL)
		return nil, ErrInvalid
	}
	if err != nil {
		return nil, err
	}
	r.verified.Add(d, c, verifiedTTL)
	return c, nil
}

// Tagged says whether key is shaped like a key and ends with the tag the operator gives
// every key it makes: only such a key can be one made since tags exist. A guess is not
// tagged (a tag is 64 bits of a MAC under the operator's signing key).
func (r *Reviewer) Tagged(ctx context.Context, key string) (bool, error) {
	id, ok := parseKey(key)
	if !ok {
		return false, nil
	}
	secret, err := base64.RawURLEncoding.DecodeString(key[len(KeyPrefix)+idChars+1:])
	if err != nil || len(secret) != secretBytes {
		return false, nil
	}
	want, err := r.tag(ctx, id, secret[:secretBytes-tagBytes])
	if err != nil {
		return false, err
	}
	return hmac.Equal(secret[secretBytes-tagBytes:], want), nil
}

func (r *Reviewer) tag(ctx context.Context, id string, random []byte) ([]byte, error) {
	m, err := r.Signer.MAC(ctx, tagDomain, append([]byte(id+"_"), random...))
	if err != nil {
		return nil, err
	}
	return m[:tagBytes], nil
}

// newKey makes a key: pdm_, 16 hex digits of id, '_', and the base64url of 24 random
// bytes followed by their tag (192 random bits).
func (r *Reviewer) newKey(ctx context.Context) (id, key string, err error) {
	raw := make([]byte, idChars/2+secretBytes-tagBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", "", err
	}
	id = hex.EncodeToString(raw[:idChars/2])
	random := raw[idChars/2:]
	tag, err := r.tag(ctx, id, random)
	if err != nil {
		return "", "", err
	}
	return id, KeyPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(append(random, tag...)), nil
}

// Create makes a key for the caller (Store.create keeps it): the record, and the key,
// which is never stored and never shown again. expiresIn 0 means no expiry.
func (r *Reviewer) Create(ctx context.Context, c *authn.Caller, name string, expiresIn time.Duration) (secretswire.APIKey, string, error) {
	id, key, err := r.newKey(ctx)
	if err != nil {
		return secretswire.APIKey{}, "", err
	}
	return r.Keys.create(ctx, c, name, expiresIn, id, key)
}

// VerifyKey checks an API key (the exchange uses it): the caller it signs in as, or
// ErrInvalid. A tagged key is checked whatever others try; an untagged one only within
// the shared failure budget.
func (r *Reviewer) VerifyKey(ctx context.Context, key string) (*authn.Caller, error) {
	if _, ok := parseKey(key); !ok {
		return nil, ErrInvalid // malformed: no lookup, no cost
	}
	tagged, err := r.Tagged(ctx, key)
	if err != nil {
		return nil, err
	}
	if tagged {
		return r.signed(ctx, key, func(ctx context.Context) (*authn.Caller, error) { return r.verifyKey(ctx, key) })
	}
	d := tokenDigest(key)
	if c, ok := r.verified.Get(d); ok {
		return c.(*authn.Caller), nil
	}
	if !r.failures.take(r.Keys.now()) {
		return nil, ErrInvalid // too many failures lately: no lookups for untagged keys
	}
	c, err := r.verifyKey(ctx, key)
	if errors.Is(err, ErrInvalid) {
		return nil, ErrInvalid // the token stays spent
	}
	r.failures.refund(r.Keys.now()) // a key that signs in (or an apiserver failure) is no failure
	if err != nil {
		return nil, err
	}
	r.verified.Add(d, c, verifiedTTL)
	return c, nil
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
	if boundTo(ident.Extra) != "" {
		return nil, ErrInvalid // recorded before bound tokens were refused (docs/api-keys.md)
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

// Exchange returns an access token for the caller a verified key signs in as (its
// APIKeyID set): a JWT signed by the current token key, valid for AccessTokenTTL, whose
// sub is the caller's user name (docs/api-keys.md, "The access token").
func (r *Reviewer) Exchange(ctx context.Context, c *authn.Caller) (string, int, error) {
	k, err := r.TokenKeys.Signing(ctx)
	if err != nil {
		return "", 0, err
	}
	claims, err := accesstoken.NewClaims(c.User, c.APIKeyID, r.Keys.now(), AccessTokenTTL)
	if err != nil {
		return "", 0, err
	}
	claims.UID, claims.Groups, claims.Extra = c.UID, c.Groups, c.Extra
	token, err := accesstoken.Sign(k, claims)
	if err != nil {
		return "", 0, err
	}
	return token, int(AccessTokenTTL.Seconds()), nil
}

// Verifier is the access-token verifier of the keys' Secret now (what the operator
// publishes at /.well-known/jwks.json).
func (r *Reviewer) Verifier(ctx context.Context) (*accesstoken.Verifier, error) {
	set, err := r.TokenKeys.Public(ctx)
	if err != nil {
		return nil, err
	}
	return &accesstoken.Verifier{Keys: set, Now: r.Keys.now}, nil
}

// VerifyAccessToken checks an access token's signature, header and claims (no lookup, no
// budget: a forgery costs one signature check), then its key as signed does: the key's
// record is read again (a revoked key's tokens stop within verifiedTTL), and the token
// must name the identity the record holds.
func (r *Reviewer) VerifyAccessToken(ctx context.Context, token string) (*authn.Caller, error) {
	if c, ok := r.verified.Get(tokenDigest(token)); ok {
		return c.(*authn.Caller), nil
	}
	v, err := r.Verifier(ctx)
	if err != nil {
		return nil, err
	}
	claims, err := v.Verify(token)
	if err != nil {
		return nil, ErrInvalid
	}
	if _, ok := parseKey(KeyPrefix + claims.APIKeyID + "_x"); !ok {
		return nil, ErrInvalid
	}
	return r.signed(ctx, token, func(ctx context.Context) (*authn.Caller, error) {
		c, err := r.callerOf(ctx, claims.APIKeyID, "")
		if err != nil {
			return nil, err
		}
		if c.User != claims.Subject {
			return nil, ErrInvalid
		}
		return c, nil
	})
}

// verifyLegacyAccessToken checks an access token of an earlier release
// (pdmat_<base64url("<id>.<expiry>")>.<base64url(MAC)>): its MAC and expiry (no lookup, no
// budget: a forgery costs one HMAC), then its key as signed does. Such tokens are
// accepted until they expire (at most AccessTokenTTL after the upgrade); none is made.
func (r *Reviewer) verifyLegacyAccessToken(ctx context.Context, token string) (*authn.Caller, error) {
	if c, ok := r.verified.Get(tokenDigest(token)); ok {
		return c.(*authn.Caller), nil
	}
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
	return r.signed(ctx, token, func(ctx context.Context) (*authn.Caller, error) { return r.callerOf(ctx, id, "") })
}
