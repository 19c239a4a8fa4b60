package hub

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// elsewhere is another host a redirect points at: it records whether anything reached
// it, and what.
type elsewhere struct {
	hits atomic.Int32
	seen atomic.Value // string: the last request's Authorization header and body
}

func (e *elsewhere) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.hits.Add(1)
	b, _ := io.ReadAll(r.Body)
	e.seen.Store(r.Header.Get("Authorization") + " " + string(b))
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "stolen", "expires_in": 3600, "secrets": []any{}})
}

func redirectTo(code int, target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, code)
	}
}

// checkRedirectRefused asserts that a request answered by a redirect failed naming the
// endpoint, that nothing reached the other host, and that no credential is in the error.
func checkRedirectRefused(t *testing.T, err error, endpoint string, other *elsewhere, credentials ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("a redirect was followed")
	}
	if n := other.hits.Load(); n != 0 {
		t.Fatalf("the redirect's target received %d request(s): %v", n, other.seen.Load())
	}
	msg := err.Error()
	if !strings.Contains(msg, endpoint) || !strings.Contains(msg, "redirect") {
		t.Errorf("the error does not name the endpoint and the redirect: %s", msg)
	}
	for _, c := range credentials {
		if strings.Contains(msg, c) {
			t.Errorf("the error holds a credential: %s", msg)
		}
	}
}

func TestAPIKeyExchangeFollowsNoRedirect(t *testing.T) {
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		other := &elsewhere{}
		dst := httptest.NewServer(other)
		src := httptest.NewServer(redirectTo(code, dst.URL))
		api, err := NewAPIWithKey(src.URL, testKey, "PODIUM_API_KEY")
		if err != nil {
			t.Fatal(err)
		}
		err = api.Do(context.Background(), http.MethodGet, "/v1/secrets", nil, nil, &map[string]any{})
		checkRedirectRefused(t, err, src.URL, other, testKey, "s3cr3t")
		src.Close()
		dst.Close()
	}
}

func TestAccessTokenFollowsNoRedirect(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusMovedPermanently} {
		other := &elsewhere{}
		dst := httptest.NewServer(other)
		f := &fakePodium{}
		src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == exchangePath {
				f.ServeHTTP(w, r)
				return
			}
			redirectTo(code, dst.URL)(w, r)
		}))
		api, err := NewAPIWithKey(src.URL, testKey, "PODIUM_API_KEY")
		if err != nil {
			t.Fatal(err)
		}
		err = api.Do(context.Background(), http.MethodPost, "/v1/secrets", nil, map[string]any{"env_var": "X"}, nil)
		checkRedirectRefused(t, err, src.URL, other, "tok-1", testKey)
		src.Close()
		dst.Close()
	}
}

func TestKubeconfigTokenFollowsNoRedirect(t *testing.T) {
	const token = "kubeconfig-bearer-token-0123456789"
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: `+token+`}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: demo}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		other := &elsewhere{}
		dst := httptest.NewServer(other)
		src := httptest.NewServer(redirectTo(code, dst.URL))
		api, err := NewAPI(Options{Kubeconfig: kc}, src.URL)
		if err != nil {
			t.Fatal(err)
		}
		err = api.Do(context.Background(), http.MethodGet, "/v1/secrets", nil, nil, &map[string]any{})
		checkRedirectRefused(t, err, src.URL, other, token)
		src.Close()
		dst.Close()
	}
}

func TestKubernetesClientFollowsNoRedirect(t *testing.T) {
	const token = "kubeconfig-bearer-token-0123456789"
	other := &elsewhere{}
	dst := httptest.NewServer(other)
	defer dst.Close()
	src := httptest.NewServer(redirectTo(http.StatusTemporaryRedirect, dst.URL))
	defer src.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+src.URL+`"}}]
users: [{name: u, user: {token: `+token+`}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: demo}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Kubeconfig: kc, Org: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Board(context.Background(), "demo/ds/lb")
	if err == nil {
		t.Fatal("a redirect was followed")
	}
	if n := other.hits.Load(); n != 0 {
		t.Fatalf("the redirect's target received %d request(s): %v", n, other.seen.Load())
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("the error holds the token: %v", err)
	}
	if !strings.Contains(err.Error(), src.URL) || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("the error does not name the server and the redirect: %v", err)
	}
}
