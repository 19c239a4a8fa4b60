package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"

	"podium.dev/podium/internal/httpapi"
)

// Every /v1/ route is served under /functions/v1/ by the same handler, whoever mounts
// it; other routes are not.
func TestFunctionsTwins(t *testing.T) {
	srv := httpapi.New(httpapi.Options{Log: logr.Discard()})
	srv.Handle("POST /v1/some-function", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("served " + r.URL.Path))
	}))
	srv.Handle("GET /v1/things/{id}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("thing " + r.PathValue("id")))
	}))
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{http.MethodPost, "/v1/some-function", 200, "served /v1/some-function"},
		{http.MethodPost, "/functions/v1/some-function", 200, "served /functions/v1/some-function"},
		{http.MethodGet, "/functions/v1/things/7", 200, "thing 7"},
		{http.MethodGet, "/functions/v1/some-function", 405, ""},
		{http.MethodGet, "/functions/healthz", 404, ""},
		{http.MethodGet, "/functions/v2/some-function", 404, ""},
	} {
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.code || (tc.body != "" && w.Body.String() != tc.body) {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, w.Code, w.Body, tc.code, tc.body)
		}
	}
	for pattern, want := range map[string]string{
		"POST /v1/secrets":             "POST /functions/v1/secrets",
		"/v1/leaderboards/{id}":        "/functions/v1/leaderboards/{id}",
		"GET /healthz":                 "",
		"GET /leaderboards/{org}":      "",
		"GET /v1":                      "",
		"OPTIONS /v1/leaderboard-read": "OPTIONS /functions/v1/leaderboard-read",
	} {
		if got, ok := httpapi.FunctionsPattern(pattern); got != want || ok != (want != "") {
			t.Errorf("FunctionsPattern(%q) = %q, %v; want %q", pattern, got, ok, want)
		}
	}
}
