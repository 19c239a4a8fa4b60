package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/web"
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

// TestPrivateAndMissingCostTheSameEverywhere extends the test above to every reader
// that takes a board by slug, the web board and history pages among them, with the
// operator's caching reviewer over an apiserver that counts SubjectAccessReviews: for
// an authenticated caller from another org, the first request for a private name and
// for a missing one each cost one review, a repeat (warm cache) none, and the answers
// are the same but for the name asked for.
func TestPrivateAndMissingCostTheSameEverywhere(t *testing.T) {
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "secret-board", UID: "a71d39e6-6973-4ed1-bd7c-038473968c01", ResourceVersion: "3"},
		Spec:       hubv1alpha1.LeaderboardSpec{Package: "acme/ds", Name: "hidden", Title: "Hidden", Visibility: hubv1alpha1.VisibilityPrivate},
	}
	const rowID = "9d7c1f0e-2b3a-4c5d-8e6f-7a8b9c0d1e2f"
	cs := kubefake.NewClientset()
	var sars atomic.Int32
	cs.PrependReactor("create", "subjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		sars.Add(1)
		return true, &authorizationv1.SubjectAccessReview{}, nil // not allowed
	})
	cs.PrependReactor("create", "tokenreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &authenticationv1.TokenReview{Status: authenticationv1.TokenReviewStatus{
			Authenticated: true, User: authenticationv1.UserInfo{Username: "system:serviceaccount:evil:eve"}}}, nil
	})
	b := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(lb)
	for _, f := range index.Fields() {
		b = b.WithIndex(f.Object, f.Name, f.Values)
	}
	cache := b.Build()
	// stack is the operator's HTTP stack with the readers and the pages mounted, with a
	// reviewer (and so a decision cache) of its own.
	stack := func(t *testing.T) http.Handler {
		rev := authn.NewKubeReviewerFor(cs, time.Minute)
		srv := httpapi.New(httpapi.Options{Log: logr.Discard(), Reviewer: rev})
		rd := httpapi.NewRead(httpapi.ReadOptions{Cache: cache, Ranks: sliceRanks{&sliceBoard{}}, Reviewer: rev, Log: logr.Discard()})
		srv.Handle("POST "+httpapi.ReadPath, rd)
		srv.Handle("GET "+httpapi.GetBySlugPath, http.HandlerFunc(rd.ServeGET))
		srv.Handle("GET "+httpapi.HistoryBySlugPath, http.HandlerFunc(rd.ServeHistory))
		pages, err := web.New(web.Options{Reader: cache, Ranking: func(types.UID) web.Ranked { return nil },
			Sort: func(_ []hubv1alpha1.RankRule, rows []*hubv1alpha1.LeaderboardRow) []*hubv1alpha1.LeaderboardRow {
				return rows
			},
			Reviewer: rev, Log: logr.Discard()})
		if err != nil {
			t.Fatal(err)
		}
		for pattern, h := range pages.Routes() {
			srv.Handle(pattern, h)
		}
		return srv.Handler()
	}
	readers := map[string]func(name string) *http.Request{
		"POST read": func(name string) *http.Request {
			return httptest.NewRequest(http.MethodPost, httpapi.ReadPath, strings.NewReader(`{"package":"acme/ds","name":"`+name+`"}`))
		},
		"GET read": func(name string) *http.Request {
			return httptest.NewRequest(http.MethodGet, "/v1/leaderboards/acme/ds/"+name, nil)
		},
		"row history": func(name string) *http.Request {
			return httptest.NewRequest(http.MethodGet, "/v1/leaderboards/acme/ds/"+name+"/rows/"+rowID+"/history", nil)
		},
		"web board page": func(name string) *http.Request {
			return httptest.NewRequest(http.MethodGet, "/leaderboards/acme/ds/"+name, nil)
		},
		"web history page": func(name string) *http.Request {
			return httptest.NewRequest(http.MethodGet, "/leaderboards/acme/ds/"+name+"/rows/"+rowID+"/history", nil)
		},
	}
	for reader, req := range readers {
		t.Run(reader, func(t *testing.T) {
			h := stack(t)
			answers := map[string]string{}
			for _, name := range []string{"hidden", "absent"} {
				for _, round := range []string{"first request", "warm cache"} {
					r := req(name)
					r.Header.Set("Authorization", "Bearer eve-token")
					w := httptest.NewRecorder()
					before := sars.Load()
					h.ServeHTTP(w, r)
					if w.Code != http.StatusNotFound {
						t.Fatalf("%s, %s: status %d, want 404", name, round, w.Code)
					}
					want := int32(1)
					if round == "warm cache" {
						want = 0
					}
					if n := sars.Load() - before; n != want {
						t.Errorf("%s, %s: %d reviews, want %d", name, round, n, want)
					}
					answers[name] = strings.ReplaceAll(w.Body.String(), name, "NAME")
				}
			}
			if answers["hidden"] != answers["absent"] {
				t.Errorf("the answers differ:\n%s\n%s", answers["hidden"], answers["absent"])
			}
		})
	}
}
