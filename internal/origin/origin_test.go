package origin

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The router sends the secrets, registry-credentials and API-key paths (and their
// /functions/v1/ aliases) to the operator and everything else to the read tier.
func TestRouterSendsEachPathToItsWorkload(t *testing.T) {
	backend := func(name string) (*httptest.Server, *url.URL) {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, name+" "+r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		}))
		t.Cleanup(s.Close)
		u, _ := url.Parse(s.URL)
		return s, u
	}
	_, op := backend("operator")
	_, rd := backend("read")
	router := httptest.NewServer(NewRouter(op, rd))
	t.Cleanup(router.Close)
	for path, want := range map[string]string{
		"/v1/secrets":                            "operator",
		"/functions/v1/secrets":                  "operator",
		"/v1/registry-credentials":               "operator",
		"/functions/v1/registry-credentials":     "operator",
		"/v1/api-keys":                           "operator",
		"/v1/api-key-exchange":                   "operator",
		"/.well-known/jwks.json":                 "operator",
		"/functions/v1/api-key-exchange":         "operator",
		"/v1/secrets/preflight":                  "read",
		"/functions/v1/secrets/preflight":        "read",
		"/v1/leaderboard-read":                   "read",
		"/functions/v1/leaderboard-read":         "read",
		"/v1/leaderboard-row-read":               "read",
		"/v1/leaderboards/acme/ds/main/rows.csv": "read",
		"/leaderboards":                          "read",
		"/assets/style.css":                      "read",
		"/readyz":                                "read",
		"/v1/secretsx":                           "read",
	} {
		req, _ := http.NewRequest(http.MethodPost, router.URL+path, strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer t")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := string(b); got != want+" POST "+path+" Bearer t" {
			t.Errorf("%s went to %q, want %s", path, got, want)
		}
	}
	// The operator's key lookup for the read tier is no public path.
	resp, err := http.Post(router.URL+"/internal/v1/authenticate", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/internal/v1/authenticate: %d, want 404", resp.StatusCode)
	}
}

// A workload that is down (restarting) answers 502 naming it, not a hang.
func TestRouterSaysWhichWorkloadIsDown(t *testing.T) {
	down, _ := url.Parse("http://127.0.0.1:1")
	router := httptest.NewServer(NewRouter(down, down))
	t.Cleanup(router.Close)
	resp, err := http.Get(router.URL + "/v1/secrets")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "the operator is not answering") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}
