// Package authn describes who calls Podium's HTTP API and what they may do. Callers are
// identified by Kubernetes bearer tokens (TokenReview) and every decision is a
// SubjectAccessReview in the organization's namespace; no user store of our own.
package authn

import (
	"context"
	"net/http"
	"strings"
)

// Caller is an authenticated (or anonymous) HTTP caller.
type Caller struct {
	// Anonymous is true when the request carried no bearer token.
	Anonymous bool
	// User is the Kubernetes user name, e.g. "system:serviceaccount:org:runner".
	User   string
	UID    string
	Groups []string
	Extra  map[string][]string
	// ServiceAccountNamespace is the namespace of a ServiceAccount caller, else "".
	ServiceAccountNamespace string
	// APIKeyID is the id of the Podium API key the caller signed in with (directly or
	// through an access token from the key's exchange), else "". The caller is then the
	// key's creator, with the creator's rights (docs/api-keys.md).
	APIKeyID string
}

// Attributes of one access decision, in Kubernetes RBAC terms.
type Attributes struct {
	Namespace string
	Verb      string // get, list, create, delete, supersede, ...
	Resource  string // leaderboards, hostedsecrets, ...
	Name      string // optional
}

// Reviewer authenticates tokens and authorizes callers. Implementations cache
// answers briefly so that a busy client does not hammer the apiserver.
type Reviewer interface {
	// Authenticate returns the caller behind a bearer token; an invalid token is an
	// error (the HTTP layer answers 401).
	Authenticate(ctx context.Context, token string) (*Caller, error)
	// Allowed says whether the caller may do what the attributes describe. Anonymous
	// callers are never allowed.
	Allowed(ctx context.Context, c *Caller, a Attributes) (bool, error)
}

// BearerToken returns the token of an "Authorization: Bearer <token>" header, or "".
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return ""
	}
	return strings.TrimSpace(h[7:])
}

type callerKey struct{}

// WithCaller stores the caller in a context.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller stored in a context, or an anonymous caller.
func CallerFrom(ctx context.Context) *Caller {
	if c, ok := ctx.Value(callerKey{}).(*Caller); ok && c != nil {
		return c
	}
	return &Caller{Anonymous: true}
}
