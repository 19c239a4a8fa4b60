package hub

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"podium.dev/podium/internal/apierr"
)

const testKey = "pdm_0123456789abcdef_s3cr3t-part-of-the-key"

// fakePodium answers the exchange with tokens tok-1, tok-2, ... and GET /v1/secrets
// with 200 for the newest token, 401 for any other.
type fakePodium struct {
	exchanges atomic.Int32
	refuse    bool // the exchange refuses the key
	limited   bool // the exchange answers 429
}

func (f *fakePodium) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/api-key-exchange":
		var body struct {
			APIKey string `json:"api_key"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		switch {
		case f.limited:
			apierr.Write(w, apierr.New(http.StatusTooManyRequests, "rate_limited", "too many failed API key exchanges"))
		case f.refuse || body.APIKey != testKey:
			apierr.Write(w, apierr.Unauthenticated())
		default:
			n := f.exchanges.Add(1)
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-" + strconv.Itoa(int(n)), "expires_in": 3600})
		}
	default:
		want := "Bearer tok-" + strconv.Itoa(int(f.exchanges.Load()))
		if r.Header.Get("Authorization") != want {
			apierr.Write(w, apierr.Unauthenticated())
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"secrets": []any{}})
	}
}

func TestAPIKeySignIn(t *testing.T) {
	ctx := context.Background()
	f := &fakePodium{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	api, err := NewAPIWithKey(srv.URL, " "+testKey+"\n", "PODIUM_API_KEY")
	if err != nil {
		t.Fatal(err)
	}
	get := func() error { return api.Do(ctx, http.MethodGet, "/v1/secrets", nil, nil, &map[string]any{}) }

	for range 3 {
		if err := get(); err != nil {
			t.Fatalf("a signed-in request: %v", err)
		}
	}
	if n := f.exchanges.Load(); n != 1 {
		t.Errorf("exchanged %d times for three requests; want once (the token is reused)", n)
	}

	// The server forgets the token (an operator restart, a shorter lifetime): one 401,
	// one new exchange, the request sent again.
	f.exchanges.Add(1)
	if err := get(); err != nil {
		t.Fatalf("after a 401 the key is exchanged again: %v", err)
	}
	if n := f.exchanges.Load(); n != 3 {
		t.Errorf("exchanges = %d; want 3", n)
	}

	for _, tc := range []struct {
		name    string
		refuse  bool
		limited bool
		status  int
		text    string
	}{
		{name: "refused", refuse: true, status: http.StatusUnauthorized, text: "Podium refused the API key in PODIUM_API_KEY"},
		{name: "rate limited", limited: true, status: http.StatusTooManyRequests, text: "too many failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePodium{refuse: tc.refuse, limited: tc.limited}
			srv := httptest.NewServer(f)
			defer srv.Close()
			api, err := NewAPIWithKey(srv.URL, testKey, "PODIUM_API_KEY")
			if err != nil {
				t.Fatal(err)
			}
			err = api.Do(ctx, http.MethodGet, "/v1/secrets", nil, nil, nil)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != tc.status || !strings.Contains(ae.Error(), tc.text) {
				t.Fatalf("error = %v; want %d containing %q", err, tc.status, tc.text)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the error holds the key: %v", err)
			}
		})
	}

	if _, err := NewAPIWithKey(srv.URL, "  ", "PODIUM_API_KEY"); err == nil || !strings.Contains(err.Error(), "PODIUM_API_KEY is empty") {
		t.Errorf("an empty key: %v", err)
	}
}

// A key is never sent in clear text off the machine.
func TestAPIKeyNeedsTLSOffLoopback(t *testing.T) {
	for endpoint, ok := range map[string]bool{
		"https://podium.example.com": true,
		"http://127.0.0.1:8080":      true,
		"http://[::1]:8080":          true,
		"http://localhost:8080":      true,
		"http://podium.example.com":  false,
		"http://10.0.0.7:8080":       false,
	} {
		_, err := NewAPIWithKey(endpoint, testKey, "PODIUM_API_KEY")
		if (err == nil) != ok {
			t.Errorf("%s: err = %v; want ok=%v", endpoint, err, ok)
		}
		if err != nil && (!strings.Contains(err.Error(), "https://") || strings.Contains(err.Error(), "s3cr3t")) {
			t.Errorf("%s: %v", endpoint, err)
		}
	}
}
