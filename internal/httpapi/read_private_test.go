package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/httpapi"
)

// countingReviewer authenticates the token "eve" and refuses every review, counting them.
type countingReviewer struct {
	mu      sync.Mutex
	reviews []authn.Attributes
}

func (c *countingReviewer) Authenticate(_ context.Context, token string) (*authn.Caller, error) {
	if token != "eve" {
		return nil, errors.New("bad token")
	}
	return &authn.Caller{User: "eve"}, nil
}

func (c *countingReviewer) Allowed(_ context.Context, _ *authn.Caller, a authn.Attributes) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reviews = append(c.reviews, a)
	return false, nil
}

// TestPrivateAndMissingCostTheSame: an authenticated caller from another org gets the
// same 404 for a private board and a missing one, after the same work (one review), so
// the time of the answer does not tell whether the board exists.
func TestPrivateAndMissingCostTheSame(t *testing.T) {
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "secret-board", UID: "a71d39e6-6973-4ed1-bd7c-038473968c01", ResourceVersion: "3"},
		Spec:       hubv1alpha1.LeaderboardSpec{Package: "acme/ds", Name: "hidden", Title: "Hidden", Visibility: hubv1alpha1.VisibilityPrivate},
	}
	rev := &countingReviewer{}
	srv := httpapi.New(httpapi.Options{Log: logr.Discard(), Reviewer: rev})
	srv.Handle("POST "+httpapi.ReadPath, httpapi.NewRead(httpapi.ReadOptions{
		Cache: newOneBoard(lb), Ranks: sliceRanks{&sliceBoard{}}, Reviewer: rev, Log: logr.Discard(),
	}))
	h := srv.Handler()
	read := func(body, token string) (int, string) {
		req := httptest.NewRequest(http.MethodPost, httpapi.ReadPath, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	cases := []struct {
		name, private, missing string
	}{
		{"by slug", `{"package":"acme/ds","name":"hidden"}`, `{"package":"acme/ds","name":"absent"}`},
		{"by id", `{"leaderboard_id":"a71d39e6-6973-4ed1-bd7c-038473968c01"}`, `{"leaderboard_id":"a71d39e6-6973-4ed1-bd7c-038473968c02"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, body := range []string{tc.private, tc.missing} {
				rev.reviews = nil
				code, out := read(body, "eve")
				if code != http.StatusNotFound {
					t.Fatalf("%s: status %d %s, want 404", body, code, out)
				}
				if len(rev.reviews) != 1 {
					t.Errorf("%s: %d reviews, want 1 (private and missing boards must cost the same)", body, len(rev.reviews))
				}
				rev.reviews = nil
				if code, _ := read(body, ""); code != http.StatusNotFound || len(rev.reviews) != 0 {
					t.Errorf("%s anonymous: status %d with %d reviews, want 404 with none", body, code, len(rev.reviews))
				}
			}
		})
	}
}
