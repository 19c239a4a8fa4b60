package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"podium.dev/podium/internal/apierr"
)

// APIKeyEnv is the environment variable that holds a Podium API key for the CLI's HTTP
// commands (docs/api-keys.md, "The podium CLI with an API key").
const APIKeyEnv = "PODIUM_API_KEY"

// exchangePath is where an API key is exchanged for an access token.
const exchangePath = "/v1/api-key-exchange"

// tokenSkew re-exchanges a key this long before its access token expires, so that a
// request never leaves with a token that expires on the way.
const tokenSkew = 30 * time.Second

// NewAPIWithKey connects to Podium's HTTP API at endpoint as the holder of an API key,
// as Harbor's client does: the key is exchanged at /v1/api-key-exchange for an access
// token, which signs every request as the key's creator; it is exchanged again shortly
// before the token expires, and once after a 401. No kubeconfig is read. The key never
// appears in an error: a refused key is a 401 naming PODIUM_API_KEY (source), not the
// key.
func NewAPIWithKey(endpoint, key, source string) (*API, error) {
	if err := checkEndpoint(endpoint); err != nil {
		return nil, err
	}
	if err := checkKeyTransport(endpoint); err != nil {
		return nil, err
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, apierr.New(http.StatusUnauthorized, apierr.CodeUnauthenticated, "%s is empty: it must hold a Podium API key (podium auth api-key create)", source)
	}
	base := strings.TrimRight(endpoint, "/")
	rt := &keyTransport{next: http.DefaultTransport, exchange: &keyExchange{url: base + exchangePath, key: key, source: source, http: newHTTPClient(http.DefaultTransport)}}
	return &API{base: base, http: newHTTPClient(rt)}, nil
}

// checkKeyTransport refuses to send a key in clear text off the machine: https, or http
// to a loopback address only (as Harbor's client does).
func checkKeyTransport(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return apierr.New(http.StatusBadRequest, apierr.CodeBadRequest, "the Podium endpoint %q is not an http(s) URL", endpoint)
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return apierr.New(http.StatusBadRequest, apierr.CodeBadRequest,
		"refusing to send an API key over http:// to %s: use an https:// endpoint (http:// only to localhost)", host)
}

// keyExchange holds an API key and the access token last exchanged for it.
type keyExchange struct {
	url, key, source string
	http             *http.Client

	mu      sync.Mutex
	token   string
	expires time.Time
}

// accessToken returns a token valid for at least tokenSkew, exchanging the key when
// there is none (or stale is the one held: a 401 answered it).
func (e *keyExchange) accessToken(stale string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token != "" && e.token != stale && time.Now().Add(tokenSkew).Before(e.expires) {
		return e.token, nil
	}
	e.token = ""
	body, _ := json.Marshal(map[string]string{"api_key": e.key})
	resp, err := e.http.Post(e.url, "application/json", bytes.NewReader(body))
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return "", ae // a redirect (newHTTPClient): it names the endpoint, never the key
		}
		// The transport's reason names the URL, never the body (the key).
		return "", apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "exchanging the API key of %s at %s: %v", e.source, e.url, unwrapURLError(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "reading Podium's answer to the API key exchange: %v", err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return "", apierr.New(http.StatusUnauthorized, apierr.CodeUnauthenticated,
			"Podium refused the API key in %s (unknown, revoked or expired, or its user is gone): create a new one with `podium auth api-key create`", e.source)
	case resp.StatusCode/100 != 2:
		var env struct {
			Error *apierr.Error `json:"error"`
		}
		if json.Unmarshal(raw, &env) == nil && env.Error != nil && env.Error.Code != "" {
			env.Error.Status = resp.StatusCode
			return "", env.Error
		}
		return "", apierr.New(resp.StatusCode, apierr.CodeInternal, "the API key exchange answered %s", resp.Status)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if json.Unmarshal(raw, &tok) != nil || tok.AccessToken == "" || tok.ExpiresIn <= 0 {
		return "", fmt.Errorf("the answer of Podium to the API key exchange could not be read (no access_token and expires_in)")
	}
	e.token, e.expires = tok.AccessToken, time.Now().Add(time.Duration(tok.ExpiresIn)*time.Second)
	return e.token, nil
}

// keyTransport signs each request with the exchanged access token and, when Podium
// answers 401 (the token expired or was cut short), exchanges the key once more and
// sends the request again.
type keyTransport struct {
	next     http.RoundTripper
	exchange *keyExchange
}

func (t *keyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	send := func(stale string) (*http.Response, string, error) {
		tok, err := t.exchange.accessToken(stale)
		if err != nil {
			return nil, "", err
		}
		r := req.Clone(req.Context())
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		r.Header.Set("Authorization", "Bearer "+tok)
		resp, err := t.next.RoundTrip(r)
		return resp, tok, err
	}
	resp, tok, err := send("")
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	resp, _, err = send(tok)
	return resp, err
}
