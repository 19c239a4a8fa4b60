package authn

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
)

func TestTTLCache(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newTTLCacheWithClock[int](2, 10*time.Second, clockFunc(func() time.Time { return now }))

	c.put("a", 1)
	c.put("b", 2)
	if v, ok := c.get("a"); !ok || v != 1 {
		t.Fatalf("get(a) = %v, %v; want 1, true", v, ok)
	}
	// "b" is now the least recently used: adding "c" evicts it, not "a".
	c.put("c", 3)
	got := map[string]bool{}
	for _, k := range []string{"a", "b", "c"} {
		_, got[k] = c.get(k)
	}
	if diff := cmp.Diff(map[string]bool{"a": true, "b": false, "c": true}, got); diff != "" {
		t.Errorf("after eviction (-want +got):\n%s", diff)
	}
	if c.len() != 2 {
		t.Errorf("len = %d, want 2", c.len())
	}

	now = now.Add(10*time.Second + time.Nanosecond)
	if _, ok := c.get("a"); ok {
		t.Errorf("get(a) after the TTL found an entry")
	}
	if c.len() != 0 {
		t.Errorf("expired entries are not counted: len = %d, want 0", c.len())
	}
}

func TestTTLCacheDisabled(t *testing.T) {
	c := newTTLCache[bool](10, 0)
	c.put("a", true)
	if _, ok := c.get("a"); ok {
		t.Errorf("a cache with TTL 0 kept an entry")
	}
}

func TestDecisionKey(t *testing.T) {
	base := &Caller{User: "u", UID: "1", Groups: []string{"g1", "g2"}, Extra: map[string][]string{"k": {"v"}}}
	attrs := Attributes{Namespace: "ns", Verb: "get", Resource: "leaderboards"}
	same := &Caller{User: "u", UID: "1", Groups: []string{"g2", "g1"}, Extra: map[string][]string{"k": {"v"}}}
	if decisionKey(base, attrs) != decisionKey(same, attrs) {
		t.Errorf("group order changed the decision key")
	}
	for name, tc := range map[string]struct {
		c *Caller
		a Attributes
	}{
		"other user":      {&Caller{User: "v", UID: "1", Groups: base.Groups, Extra: base.Extra}, attrs},
		"other group":     {&Caller{User: "u", UID: "1", Groups: []string{"g1"}, Extra: base.Extra}, attrs},
		"other extra":     {&Caller{User: "u", UID: "1", Groups: base.Groups, Extra: map[string][]string{"k": {"w"}}}, attrs},
		"other namespace": {base, Attributes{Namespace: "ns2", Verb: "get", Resource: "leaderboards"}},
		"other verb":      {base, Attributes{Namespace: "ns", Verb: "list", Resource: "leaderboards"}},
		"other name":      {base, Attributes{Namespace: "ns", Verb: "get", Resource: "leaderboards", Name: "x"}},
		// Separators keep "ab"+"c" apart from "a"+"bc".
		"shifted fields": {&Caller{User: "u1", UID: "", Groups: base.Groups, Extra: base.Extra}, attrs},
	} {
		if decisionKey(tc.c, tc.a) == decisionKey(base, attrs) {
			t.Errorf("%s: same decision key as the base", name)
		}
	}
}

func TestCallerFromUserServiceAccount(t *testing.T) {
	for _, tc := range []struct {
		user, wantNS string
	}{
		{"system:serviceaccount:acme:runner", "acme"},
		{"alice", ""},
		{"system:serviceaccount:broken", ""},
	} {
		c := callerFromUser(userInfo(tc.user))
		if c.ServiceAccountNamespace != tc.wantNS {
			t.Errorf("%q: ServiceAccountNamespace = %q, want %q", tc.user, c.ServiceAccountNamespace, tc.wantNS)
		}
	}
}

func userInfo(name string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: name}
}

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }
