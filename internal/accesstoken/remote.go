package accesstoken

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultRefresh is how often RemoteKeys reads the published keys again: the operator
// reads its key Secret as often, so a rollover's new key is known everywhere a minute
// after it is added (docs/api-keys.md, "Signing keys and their rollover").
const DefaultRefresh = 30 * time.Second

// unknownKidRetry bounds the extra reads a token with an unknown kid causes: at most one
// per this time, whatever a client sends.
const unknownKidRetry = 5 * time.Second

// maxJWKSBytes bounds the key set read.
const maxJWKSBytes = 64 << 10

// RemoteKeys verifies tokens with the public keys published at URL (the operator's
// GET /.well-known/jwks.json): what the read tier needs to check an access token's
// signature without holding any key that could sign one. The set is read again every
// Refresh, and at most once per few seconds when a token names a kid it does not hold.
// A failed read keeps the last set. A signature says nothing of revocation: the caller
// still asks the operator whether the token's key is revoked (docs/api-keys.md, "Keys in
// the read tier").
type RemoteKeys struct {
	URL string
	// Client reads the set (nil: a client with a 5 s timeout).
	Client *http.Client
	// Refresh is how long a read set is used (0: DefaultRefresh).
	Refresh time.Duration
	Now     func() time.Time

	mu    sync.Mutex
	set   KeySet
	tried time.Time // the last read, successful or not
}

func (r *RemoteKeys) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Verify checks token with the published keys (Verifier.Verify).
func (r *RemoteKeys) Verify(ctx context.Context, token string) (*Claims, error) {
	set, err := r.Keys(ctx)
	if err != nil {
		return nil, err
	}
	c, err := (&Verifier{Keys: set, Now: r.Now}).Verify(token)
	if err == nil || !errors.Is(err, ErrInvalid) {
		return c, err
	}
	if h, _, _, _, perr := split(token); perr == nil && h.Alg == Alg && h.Typ == Type && set[h.Kid] == nil {
		// A kid of a key added since the last read, perhaps: read again, now and then.
		set, rerr := r.reload(ctx, unknownKidRetry)
		if rerr == nil && set[h.Kid] != nil {
			return (&Verifier{Keys: set, Now: r.Now}).Verify(token)
		}
	}
	return nil, err
}

// Keys returns the set, read again when it is older than Refresh.
func (r *RemoteKeys) Keys(ctx context.Context) (KeySet, error) {
	refresh := r.Refresh
	if refresh == 0 {
		refresh = DefaultRefresh
	}
	return r.reload(ctx, refresh)
}

// reload reads the set unless the last attempt is more recent than every. On a failure
// the last set is kept and answered; with none yet, the error is.
func (r *RemoteKeys) reload(ctx context.Context, every time.Duration) (KeySet, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if r.set != nil && now.Sub(r.tried) < every {
		return r.set, nil
	}
	r.tried = now
	set, err := r.fetch(ctx)
	if err != nil {
		if r.set != nil {
			return r.set, nil
		}
		return nil, err
	}
	r.set = set
	return set, nil
}

func (r *RemoteKeys) fetch(ctx context.Context) (KeySet, error) {
	hc := r.Client
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("accesstoken: reading the public keys: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("accesstoken: reading the public keys: HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("accesstoken: reading the public keys: %w", err)
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("accesstoken: the public keys are longer than %d bytes", maxJWKSBytes)
	}
	return ParseJWKS(b)
}
