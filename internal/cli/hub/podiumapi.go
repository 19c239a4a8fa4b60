package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/transport"

	"podium.dev/podium/internal/apierr"
)

// API is a client of Podium's own HTTP API (docs/http-api.md), for what only the
// operator decides: hosted secrets and registry credentials (the supersede decision
// lives there). It signs requests with the bearer token of the kubeconfig's user, the
// way kubectl would send it to the apiserver: a token, a token file, or an exec plugin
// or auth provider that yields one. Client certificates cannot sign in to it.
type API struct {
	base string
	http *http.Client
}

// NewAPI connects to Podium's HTTP API at endpoint as the kubeconfig's user.
func NewAPI(o Options, endpoint string) (*API, error) {
	if err := checkEndpoint(endpoint); err != nil {
		return nil, err
	}
	cfg, _, err := RESTConfig(o)
	if err != nil {
		return nil, err
	}
	tc, err := cfg.TransportConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig's credentials: %w", err)
	}
	if !tc.HasTokenAuth() && tc.WrapTransport == nil {
		return nil, apierr.New(http.StatusUnauthorized, apierr.CodeUnauthenticated,
			"the kubeconfig's user has no bearer token (a token, token file, exec plugin or auth provider); Podium's HTTP API cannot be signed in to with client certificates")
	}
	// The token's round tripper over a plain transport: the apiserver's CA and client
	// certificate are not Podium's.
	base := http.DefaultTransport.(*http.Transport).Clone()
	rt, err := transport.HTTPWrappersForConfig(tc, base)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig's credentials: %w", err)
	}
	if tc.WrapTransport != nil {
		rt = tc.WrapTransport(rt)
	}
	return &API{base: strings.TrimRight(endpoint, "/"), http: newHTTPClient(rt)}, nil
}

// newHTTPClient is every client of Podium's HTTP API that carries a credential (the
// kubeconfig's bearer, an API key, its access token): it follows no redirect (nor does
// the Kubernetes client, New: refuseRedirect is its CheckRedirect too). A
// transport that signs each request would sign the redirected one too, and a 307 sends
// the exchange's body (the key) again, to whatever host the answer names. A redirect is
// an error naming the endpoint and where it pointed, never the credential.
func newHTTPClient(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, Timeout: 60 * time.Second, CheckRedirect: refuseRedirect}
}

func refuseRedirect(req *http.Request, via []*http.Request) error {
	from, status := "", 0
	if len(via) > 0 {
		from = via[len(via)-1].URL.Redacted()
	}
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	return apierr.New(http.StatusBadGateway, apierr.CodeUnavailable,
		"%s answered a redirect (%d) to %s; podium follows no redirect with a credential: use the URL the server is served at", from, status, req.URL.Redacted())
}

// checkEndpoint checks that endpoint is given and an http(s) URL.
func checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return apierr.New(http.StatusBadRequest, apierr.CodeBadRequest,
			"no Podium endpoint: pass --endpoint URL, set PODIUM_ENDPOINT, or run `podium auth login --endpoint URL`")
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return apierr.New(http.StatusBadRequest, apierr.CodeBadRequest, "the Podium endpoint %q is not an http(s) URL", endpoint)
	}
	return nil
}

// Do sends body (JSON, or none when nil) and decodes a 2xx answer into out. Any other
// answer comes back as the API's *apierr.Error, with its status.
func (a *API) Do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := a.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		// An API key's refusal (NewAPIWithKey) is the API's own answer.
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return ae
		}
		// The URL and the transport's reason; a request body is never part of it.
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "Podium at %s could not be reached: %v", a.base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "reading Podium's answer: %v", err)
	}
	if resp.StatusCode/100 == 2 {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("the answer of Podium to %s %s could not be read: %w", method, path, err)
		}
		return nil
	}
	var env struct {
		Error *apierr.Error `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Error == nil || env.Error.Code == "" {
		return apierr.New(resp.StatusCode, apierr.CodeInternal, "%s %s answered %s", method, path, resp.Status)
	}
	env.Error.Status = resp.StatusCode
	return env.Error
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
