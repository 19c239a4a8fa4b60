package apikeys

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/go-logr/logr"
	utilcache "k8s.io/apimachinery/pkg/util/cache"

	"podium.dev/podium/internal/accesstoken"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/wire/secretswire"
)

// Paths of the API-key endpoints (docs/api-keys.md).
const (
	KeysPath     = "/v1/api-keys"
	ExchangePath = "/v1/api-key-exchange"
)

// The exchange's failures are rate-limited per client address: exchangeBurst failures
// at once, then one per exchangeEvery; past that, 429 until the bucket refills. Each
// attempt with a key the operator did not tag takes a token before it is checked, and a
// key that signs in gives it back; a tagged key is no guess and takes none.
const (
	exchangeBurst = 10
	exchangeEvery = 6 * time.Second
)

// codeRateLimited is the error code of a 429.
const codeRateLimited = "rate_limited"

// API serves /v1/api-keys, /v1/api-key-exchange and the access tokens' public keys.
type API struct {
	Reviewer *Reviewer
	Log      logr.Logger

	mu      sync.Mutex                // makes each address's bucket once
	clients *utilcache.LRUExpireCache // client address -> *bucket of failures
}

// NewAPI returns the handlers of the API-key endpoints.
func NewAPI(r *Reviewer, log logr.Logger) *API {
	return &API{Reviewer: r, Log: log, clients: utilcache.NewLRUExpireCache(authn.DefaultCacheSize)}
}

// Routes are the API's handlers by ServeMux pattern.
func (a *API) Routes() map[string]http.Handler {
	return map[string]http.Handler{
		"POST " + KeysPath:     http.HandlerFunc(a.create),
		"GET " + KeysPath:      http.HandlerFunc(a.list),
		"DELETE " + KeysPath:   http.HandlerFunc(a.revoke),
		"POST " + ExchangePath: http.HandlerFunc(a.exchange),
		"GET " + JWKSPath:      http.HandlerFunc(a.jwks),
	}
}

// JWKSPath is where the operator publishes the public keys of access tokens as a JWK
// Set (RFC 7517), to anyone: the read tier checks tokens with them.
const JWKSPath = accesstoken.JWKSPath

// jwks answers the public keys that verify access tokens now: the current key's and,
// during a rollover, the previous one's. Never a private key.
func (a *API) jwks(w http.ResponseWriter, r *http.Request) {
	set, err := a.Reviewer.TokenKeys.Public(r.Context())
	if err != nil {
		a.internal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age="+strconv.Itoa(int(TokenKeyRefresh.Seconds())))
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(set.JWKS())
}

func caller(w http.ResponseWriter, r *http.Request) (*authn.Caller, bool) {
	c := authn.CallerFrom(r.Context())
	if c.Anonymous || c.User == "" {
		apierr.Write(w, apierr.Unauthenticated())
		return nil, false
	}
	return c, true
}

func (a *API) create(w http.ResponseWriter, r *http.Request) {
	c, ok := caller(w, r)
	if !ok {
		return
	}
	if c.APIKeyID != "" {
		// A key that makes keys would outlive its own expiry and revocation.
		apierr.Write(w, apierr.Forbidden("API keys are created with a Kubernetes credential (podium auth api-key create), not with an API key"))
		return
	}
	if b := boundTo(c.Extra); b != "" {
		// A key lives until revoked or expired; the token's binding would not hold it.
		apierr.Write(w, apierr.Forbidden("this token is bound to %s: an API key made with it would outlive it; create keys with a credential of the identity itself (a user's kubeconfig, or kubectl create token for a ServiceAccount)", b))
		return
	}
	var body secretswire.CreateAPIKey
	if err := apierr.DecodeJSON(r, &body); err != nil {
		apierr.Write(w, err)
		return
	}
	var name string
	var expiresIn time.Duration
	var errs []apierr.FieldError
	if body.Name != nil {
		name = *body.Name
		if len(name) > 63 || !printable(name) {
			errs = append(errs, apierr.FieldError{Field: "name", Message: "must be at most 63 printable characters, without bidirectional controls"})
		}
	}
	if body.ExpiresInDays != nil {
		if d := *body.ExpiresInDays; d < 1 || d > MaxExpiresInDays {
			errs = append(errs, apierr.FieldError{Field: "expires_in_days", Message: "must be 1 to 366"})
		} else {
			expiresIn = time.Duration(d) * 24 * time.Hour
		}
	}
	if len(errs) > 0 {
		apierr.Write(w, apierr.Invalid(errs...))
		return
	}
	rec, key, err := a.Reviewer.Create(r.Context(), c, name, expiresIn)
	if errors.Is(err, errLimit) {
		apierr.Write(w, apierr.New(http.StatusConflict, apierr.CodeLimitReached, "%s already holds %d API keys; revoke one first", c.User, MaxKeysPerUser))
		return
	}
	if err != nil {
		a.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, secretswire.APIKeyCreated{APIKey: rec, Key: key})
}

// printable refuses control characters and the bidirectional controls (U+061C,
// U+200E-200F, U+202A-202E, U+2066-2069), which make a listed name read as another.
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || unicode.Is(unicode.Bidi_Control, r) {
			return false
		}
	}
	return true
}

func (a *API) list(w http.ResponseWriter, r *http.Request) {
	c, ok := caller(w, r)
	if !ok {
		return
	}
	if r.URL.RawQuery != "" {
		// The list takes no query parameters (it is the caller's own keys, whole).
		param, _, _ := strings.Cut(r.URL.RawQuery, "&")
		param, _, _ = strings.Cut(param, "=")
		apierr.Write(w, apierr.BadRequest(param, "unknown query parameter; this list takes none"))
		return
	}
	keys, err := a.Reviewer.Keys.List(r.Context(), c.User)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, secretswire.APIKeyList{APIKeys: keys})
}

func (a *API) revoke(w http.ResponseWriter, r *http.Request) {
	c, ok := caller(w, r)
	if !ok {
		return
	}
	var body secretswire.RevokeAPIKey
	if err := apierr.DecodeJSON(r, &body); err != nil {
		apierr.Write(w, err)
		return
	}
	if body.ID == nil {
		apierr.Write(w, apierr.BadRequest("id", "is required"))
		return
	}
	if _, ok := parseKey(KeyPrefix + *body.ID + "_x"); !ok || len(*body.ID) != idChars {
		apierr.Write(w, apierr.Invalid(apierr.FieldError{Field: "id", Message: "must be an API key id (16 hex digits, as listed)"}))
		return
	}
	done, err := a.Reviewer.Keys.Revoke(r.Context(), c.User, *body.ID)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	n := 0
	if done {
		n = 1
	}
	writeJSON(w, http.StatusOK, secretswire.Affected{Affected: n})
}

// exchange answers Harbor's POST {base}/functions/v1/api-key-exchange {"api_key"} with
// {access_token, token_type, expires_in}.
func (a *API) exchange(w http.ResponseWriter, r *http.Request) {
	var body secretswire.APIKeyExchange
	if err := apierr.DecodeJSON(r, &body); err != nil {
		apierr.Write(w, err)
		return
	}
	if body.APIKey == nil {
		apierr.Write(w, apierr.BadRequest("api_key", "is required"))
		return
	}
	key := *body.APIKey
	tagged, err := a.Reviewer.Tagged(r.Context(), key)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	var lim *bucket
	if !tagged {
		// Counted before it is checked: of n parallel attempts, only the budget's are.
		lim = a.limiter(r)
		if !lim.take(time.Now()) {
			w.Header().Set("Retry-After", strconv.Itoa(int(exchangeEvery.Seconds())))
			apierr.Write(w, apierr.New(http.StatusTooManyRequests, codeRateLimited, "too many failed API key exchanges from this address; try again later"))
			return
		}
	}
	c, err := a.Reviewer.VerifyKey(r.Context(), key)
	if errors.Is(err, ErrInvalid) {
		apierr.Write(w, apierr.New(http.StatusUnauthorized, apierr.CodeUnauthenticated, "the API key is not valid (unknown, revoked or expired)"))
		return
	}
	if lim != nil {
		lim.refund(time.Now()) // a key that signs in (or a failure of ours) is no failed guess
	}
	if err != nil {
		a.internal(w, r, err)
		return
	}
	token, ttl, err := a.Reviewer.Exchange(r.Context(), c)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, secretswire.AccessToken{AccessToken: token, TokenType: "bearer", ExpiresIn: ttl})
}

// limiter is the failure bucket of the request's client address.
func (a *API) limiter(r *http.Request) *bucket {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if l, ok := a.clients.Get(host); ok {
		return l.(*bucket)
	}
	l := newBucket(exchangeEvery, exchangeBurst)
	a.clients.Add(host, l, time.Hour)
	return l
}

// internal logs the cause (no error of this package holds a key) and answers 500.
func (a *API) internal(w http.ResponseWriter, r *http.Request, err error) {
	apierr.Fail(w, a.Log, err, "Serving an API key request failed", "method", r.Method, "path", r.URL.Path)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
