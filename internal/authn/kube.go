package authn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// ErrInvalidToken is returned by Authenticate for a token the apiserver does not accept.
var ErrInvalidToken = errors.New("the bearer token is not valid")

// DefaultCacheSize bounds each of the reviewer's caches (tokens and decisions), so that
// a flood of distinct tokens cannot grow the operator's memory without limit.
const DefaultCacheSize = 4096

// serviceAccountPrefix starts the user name of every ServiceAccount token.
const serviceAccountPrefix = "system:serviceaccount:"

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// KubeReviewer is the Reviewer of a Kubernetes cluster: TokenReview authenticates,
// SubjectAccessReview authorizes in the org's namespace. Answers (also negative ones)
// are kept for a short time so that a polling client costs one review per TTL.
type KubeReviewer struct {
	client    kubernetes.Interface
	tokens    *ttlCache[*Caller] // nil value = invalid token
	decisions *ttlCache[bool]
}

// NewKubeReviewer returns a Reviewer that asks the apiserver behind cfg and caches each
// answer for ttl.
func NewKubeReviewer(cfg *rest.Config, ttl time.Duration) (Reviewer, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client for token and access reviews: %w", err)
	}
	return NewKubeReviewerFor(cs, ttl), nil
}

// NewKubeReviewerFor is NewKubeReviewer with an existing clientset.
func NewKubeReviewerFor(cs kubernetes.Interface, ttl time.Duration) *KubeReviewer {
	return &KubeReviewer{
		client:    cs,
		tokens:    newTTLCache[*Caller](DefaultCacheSize, ttl),
		decisions: newTTLCache[bool](DefaultCacheSize, ttl),
	}
}

// Authenticate implements Reviewer with a TokenReview. The cache is keyed by a hash of
// the token so the token itself is never kept or logged.
func (k *KubeReviewer) Authenticate(ctx context.Context, token string) (*Caller, error) {
	if token == "" {
		return nil, ErrInvalidToken
	}
	key := hashKey(token)
	if c, ok := k.tokens.get(key); ok {
		if c == nil {
			return nil, ErrInvalidToken
		}
		return c, nil
	}
	tr, err := k.client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		// Not cached: the apiserver failing says nothing about the token.
		return nil, fmt.Errorf("reviewing a bearer token: %w", err)
	}
	if !tr.Status.Authenticated {
		k.tokens.put(key, nil)
		return nil, ErrInvalidToken
	}
	c := callerFromUser(tr.Status.User)
	k.tokens.put(key, c)
	return c, nil
}

func callerFromUser(u authenticationv1.UserInfo) *Caller {
	return NewCaller(u.Username, u.UID, u.Groups, u.Extra)
}

// NewCaller is the caller of a Kubernetes identity: its user name, UID, groups and
// extra, and its ServiceAccount namespace when it is a ServiceAccount.
func NewCaller[E ~[]string](user, uid string, groups []string, extra map[string]E) *Caller {
	c := &Caller{User: user, UID: uid, Groups: groups}
	if len(extra) > 0 {
		c.Extra = make(map[string][]string, len(extra))
		for k, v := range extra {
			c.Extra[k] = v
		}
	}
	if rest, ok := strings.CutPrefix(user, serviceAccountPrefix); ok {
		if ns, _, ok := strings.Cut(rest, ":"); ok {
			c.ServiceAccountNamespace = ns
		}
	}
	return c
}

// Allowed implements Reviewer with a SubjectAccessReview on the hub.podium.dev resource
// in a.Namespace. Anonymous callers are never allowed and cost no review.
func (k *KubeReviewer) Allowed(ctx context.Context, c *Caller, a Attributes) (bool, error) {
	if c == nil || c.Anonymous || c.User == "" {
		return false, nil
	}
	key := decisionKey(c, a)
	if ok, found := k.decisions.get(key); found {
		return ok, nil
	}
	extra := make(map[string]authorizationv1.ExtraValue, len(c.Extra))
	for k, v := range c.Extra {
		extra[k] = v
	}
	sar, err := k.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   c.User,
			UID:    c.UID,
			Groups: c.Groups,
			Extra:  extra,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: a.Namespace,
				Verb:      a.Verb,
				Group:     hubv1alpha1.GroupVersion.Group,
				Resource:  a.Resource,
				Name:      a.Name,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("reviewing access to %s %s in %s: %w", a.Verb, a.Resource, a.Namespace, err)
	}
	allowed := sar.Status.Allowed && !sar.Status.Denied
	k.decisions.put(key, allowed)
	return allowed, nil
}

// decisionKey identifies a decision by everything the SubjectAccessReview was asked.
func decisionKey(c *Caller, a Attributes) string {
	var b strings.Builder
	for _, s := range []string{c.User, c.UID, a.Namespace, a.Verb, a.Resource, a.Name} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	groups := append([]string(nil), c.Groups...)
	sort.Strings(groups)
	for _, g := range groups {
		b.WriteString(g)
		b.WriteByte(1)
	}
	keys := make([]string, 0, len(c.Extra))
	for k := range c.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(2)
		for _, v := range c.Extra[k] {
			b.WriteString(v)
			b.WriteByte(3)
		}
	}
	return hashKey(b.String())
}

func hashKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// ttlCache is a typed LRU whose entries also expire after ttl: apimachinery's
// LRUExpireCache. A ttl or size of 0 keeps nothing.
type ttlCache[V any] struct {
	ttl time.Duration
	c   *utilcache.LRUExpireCache // nil when nothing is kept
}

func newTTLCache[V any](max int, ttl time.Duration) *ttlCache[V] {
	return newTTLCacheWithClock[V](max, ttl, realClock{})
}

func newTTLCacheWithClock[V any](max int, ttl time.Duration, clock utilcache.Clock) *ttlCache[V] {
	c := &ttlCache[V]{ttl: ttl}
	if ttl > 0 && max > 0 {
		c.c = utilcache.NewLRUExpireCacheWithClock(max, clock)
	}
	return c
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (c *ttlCache[V]) get(key string) (V, bool) {
	var zero V
	if c.c == nil {
		return zero, false
	}
	v, ok := c.c.Get(key)
	if !ok {
		return zero, false
	}
	return v.(V), true
}

func (c *ttlCache[V]) put(key string, v V) {
	if c.c != nil {
		c.c.Add(key, v, c.ttl)
	}
}

// len is the number of entries not yet expired.
func (c *ttlCache[V]) len() int {
	if c.c == nil {
		return 0
	}
	return len(c.c.Keys())
}
