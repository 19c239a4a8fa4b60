package keylookup

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"podium.dev/podium/internal/authn"
)

// kubeOnly is the read tier's Kubernetes reviewer in these tests: it knows "kube-token".
type kubeOnly struct{}

func (kubeOnly) Authenticate(_ context.Context, token string) (*authn.Caller, error) {
	if token == "kube-token" {
		return &authn.Caller{User: "alice"}, nil
	}
	return nil, authn.ErrInvalidToken
}

func (kubeOnly) Allowed(context.Context, *authn.Caller, authn.Attributes) (bool, error) {
	return false, nil
}

// The read tier's side of a lookup: keys and access tokens go to the operator with the
// read tier's own token as bearer and the key only in the body; the answer (a sign-in or
// a refusal) is kept for answerTTL; an operator failure is an error (503), never a
// refusal nor kept; Kubernetes tokens never reach the operator.
func TestReviewerLooksKeysUpAtTheOperator(t *testing.T) {
	var lookups atomic.Int32
	status := http.StatusOK
	op := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lookups.Add(1)
		if r.URL.Path != Path || r.Header.Get("Authorization") != "Bearer read-tier-token" {
			t.Errorf("lookup %s with %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		var req request
		_ = json.NewDecoder(r.Body).Decode(&req)
		if status != http.StatusOK {
			w.WriteHeader(status)
			return
		}
		if req.Token != "pdm_good" && req.Token != "pdmat_good" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(Identity{User: "system:serviceaccount:acme:bob", Groups: []string{"g"}, APIKeyID: "0123"})
	}))
	t.Cleanup(op.Close)
	r := &Reviewer{Next: kubeOnly{}, Operator: op.URL, Token: func() (string, error) { return "read-tier-token", nil }}
	ctx := context.Background()

	c, err := r.Authenticate(ctx, "kube-token")
	if err != nil || c.User != "alice" || lookups.Load() != 0 {
		t.Fatalf("a Kubernetes token: %v %v, %d lookups", c, err, lookups.Load())
	}
	for range 3 {
		c, err = r.Authenticate(ctx, "pdm_good")
		if err != nil || c.User != "system:serviceaccount:acme:bob" || c.APIKeyID != "0123" || c.ServiceAccountNamespace != "acme" {
			t.Fatalf("a good key: %+v %v", c, err)
		}
	}
	if n := lookups.Load(); n != 1 {
		t.Errorf("%d lookups for one key used three times within %s, want 1", n, answerTTL)
	}
	for range 3 {
		if _, err = r.Authenticate(ctx, "pdm_bad"); !errors.Is(err, authn.ErrInvalidToken) {
			t.Fatalf("a bad key: %v", err)
		}
	}
	if n := lookups.Load(); n != 2 {
		t.Errorf("%d lookups after a refused key tried three times, want 2 (the refusal is kept)", n)
	}
	status = http.StatusServiceUnavailable
	for range 2 {
		_, err = r.Authenticate(ctx, "pdmat_other")
		if err == nil || errors.Is(err, authn.ErrInvalidToken) || strings.Contains(err.Error(), "pdmat_other") {
			t.Fatalf("an operator failure: %v (want an error that is no refusal and names no token)", err)
		}
	}
	if n := lookups.Load(); n != 4 {
		t.Errorf("%d lookups, want 4: a failure is not kept", n)
	}
}
