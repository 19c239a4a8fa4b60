// Package apikeys keeps Podium's API keys (docs/api-keys.md): a user creates, lists and
// revokes their own keys over HTTP; a key (or an access token exchanged for it) signs
// in as its creator's Kubernetes identity, whose RBAC then decides every request, as
// for a Kubernetes bearer token. Keys are stored as Secrets in the operator's value
// namespace holding a SHA-256 of the key, never the key.
package apikeys

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/wire/secretswire"
)

// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get

// KeyPrefix starts every API key: pdm_<id>_<secret>.
const KeyPrefix = "pdm_"

const (
	idChars = 16 // hex digits of a key's id
	// secretBytes make a key's secret: 24 random bytes (192 bits, so a plain SHA-256 of
	// the key is a safe thing to store: no dictionary to try) and the tag (tagBytes)
	// that tells the operator's keys from guesses without a lookup.
	secretBytes = 32
	// MaxKeysPerUser bounds the keys one identity holds.
	MaxKeysPerUser = 20
	// MaxExpiresInDays bounds a key's lifetime when one is asked for.
	MaxExpiresInDays = 366
)

// Labels, annotations and data keys of a key's Secret.
const (
	componentLabel = "app.kubernetes.io/component"
	component      = "api-key"
	ownerLabel     = "hub.podium.dev/api-key-owner" // a hash of the creator's user name
	nameAnn        = "hub.podium.dev/api-key-name"
	expiresAnn     = "hub.podium.dev/api-key-expires-at"
	lastUsedAnn    = "hub.podium.dev/api-key-last-used-at"
	hashKey        = "sha256"
	identityKey    = "identity"
	secretPrefix   = "podium-api-key-"
)

// ErrInvalid is any key that does not sign in: unknown, wrong, expired, revoked, or of
// an identity that is gone. The reasons are not told apart to the caller.
var ErrInvalid = authn.ErrInvalidToken

// identity is the Kubernetes identity a key acts as: what TokenReview said of its
// creator when the key was created.
type identity struct {
	User   string              `json:"user"`
	UID    string              `json:"uid,omitempty"`
	Groups []string            `json:"groups,omitempty"`
	Extra  map[string][]string `json:"extra,omitempty"`
}

// Store keeps API keys as Secrets in Namespace.
type Store struct {
	Client client.Client
	// Reader reads uncached: a revoked key's Secret is gone at once.
	Reader    client.Reader
	Namespace string
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// parseKey splits a key into its id and the whole key; ok is false for anything that
// is not shaped like a key.
func parseKey(key string) (id string, ok bool) {
	rest, found := strings.CutPrefix(key, KeyPrefix)
	if !found || len(rest) < idChars+2 || rest[idChars] != '_' {
		return "", false
	}
	id = rest[:idChars]
	if _, err := hex.DecodeString(id); err != nil || strings.ToLower(id) != id {
		return "", false
	}
	return id, true
}

func digest(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

func ownerHash(user string) string {
	sum := sha256.Sum256([]byte("podium-api-key-owner\x00" + user))
	return hex.EncodeToString(sum[:])[:32]
}

// create keeps key (of id, made by Reviewer.Create) for the caller: its hash, the
// caller's identity, name and expiry. expiresIn 0 means no expiry.
func (s *Store) create(ctx context.Context, c *authn.Caller, name string, expiresIn time.Duration, id, key string) (secretswire.APIKey, string, error) {
	own, err := s.list(ctx, c.User)
	if err != nil {
		return secretswire.APIKey{}, "", err
	}
	if len(own) >= MaxKeysPerUser {
		return secretswire.APIKey{}, "", errLimit
	}
	ident, err := json.Marshal(identity{User: c.User, UID: c.UID, Groups: c.Groups, Extra: c.Extra})
	if err != nil {
		return secretswire.APIKey{}, "", err
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace, Name: secretPrefix + id,
			Labels:      map[string]string{"app.kubernetes.io/name": "podium", componentLabel: component, ownerLabel: ownerHash(c.User)},
			Annotations: map[string]string{nameAnn: name},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{hashKey: digest(key), identityKey: ident},
	}
	if expiresIn > 0 {
		sec.Annotations[expiresAnn] = s.now().Add(expiresIn).UTC().Format(time.RFC3339)
	}
	if err := s.Client.Create(ctx, sec); err != nil {
		return secretswire.APIKey{}, "", fmt.Errorf("creating the API key Secret %s: %w", sec.Name, err)
	}
	return recordOf(sec, c.User), key, nil
}

var errLimit = errors.New("the caller holds the maximum number of API keys")

// list returns the Secrets of a user's keys, oldest first.
func (s *Store) list(ctx context.Context, user string) ([]corev1.Secret, error) {
	sl := &corev1.SecretList{}
	if err := s.Reader.List(ctx, sl, client.InNamespace(s.Namespace), client.MatchingLabels{componentLabel: component, ownerLabel: ownerHash(user)}); err != nil {
		return nil, fmt.Errorf("listing API keys: %w", err)
	}
	out := sl.Items[:0]
	for _, sec := range sl.Items {
		if id, err := identityOf(&sec); err == nil && id.User == user {
			out = append(out, sec)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreationTimestamp.Equal(&out[j].CreationTimestamp) {
			return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// List returns the records of a user's keys.
func (s *Store) List(ctx context.Context, user string) ([]secretswire.APIKey, error) {
	secs, err := s.list(ctx, user)
	if err != nil {
		return nil, err
	}
	out := make([]secretswire.APIKey, 0, len(secs))
	for i := range secs {
		out = append(out, recordOf(&secs[i], user))
	}
	return out, nil
}

// Revoke deletes one of the user's keys; false when the user has no key of that id.
func (s *Store) Revoke(ctx context.Context, user, id string) (bool, error) {
	sec, err := s.get(ctx, id)
	if err != nil || sec == nil {
		return false, err
	}
	if ident, err := identityOf(sec); err != nil || ident.User != user {
		return false, nil // another user's key reads like no key
	}
	err = s.Client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting the API key Secret %s: %w", sec.Name, err)
	}
	return true, nil
}

// get reads a key's Secret by id; nil when there is none.
func (s *Store) get(ctx context.Context, id string) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: secretPrefix + id}, sec)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading an API key: %w", err)
	}
	if sec.Labels[componentLabel] != component {
		return nil, nil
	}
	return sec, nil
}

// check returns the identity of key id when it is live: its Secret exists, the key's
// hash matches (when key is given; an access token carries none), and it has not
// expired.
func (s *Store) check(ctx context.Context, id, key string) (*corev1.Secret, identity, error) {
	sec, err := s.get(ctx, id)
	if err != nil {
		return nil, identity{}, err
	}
	if sec == nil {
		return nil, identity{}, ErrInvalid
	}
	if key != "" && subtle.ConstantTimeCompare(digest(key), sec.Data[hashKey]) != 1 {
		return nil, identity{}, ErrInvalid
	}
	if exp, ok := expiry(sec); ok && !s.now().Before(exp) {
		return nil, identity{}, ErrInvalid
	}
	ident, err := identityOf(sec)
	if err != nil {
		return nil, identity{}, ErrInvalid
	}
	return sec, ident, nil
}

func expiry(sec *corev1.Secret) (time.Time, bool) {
	v, ok := sec.Annotations[expiresAnn]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, true // unreadable: already expired
	}
	return t, true
}

func identityOf(sec *corev1.Secret) (identity, error) {
	var id identity
	if err := json.Unmarshal(sec.Data[identityKey], &id); err != nil || id.User == "" {
		return identity{}, errors.New("the API key Secret holds no identity")
	}
	return id, nil
}

// touch records that a key was used, at most once a minute.
func (s *Store) touch(ctx context.Context, sec *corev1.Secret) {
	now := s.now().UTC()
	if v, err := time.Parse(time.RFC3339, sec.Annotations[lastUsedAnn]); err == nil && now.Sub(v) < time.Minute {
		return
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, lastUsedAnn, now.Format(time.RFC3339))
	_ = s.Client.Patch(ctx, sec.DeepCopy(), client.RawPatch("application/merge-patch+json", patch))
}

func recordOf(sec *corev1.Secret, user string) secretswire.APIKey {
	r := secretswire.APIKey{
		ID:        strings.TrimPrefix(sec.Name, secretPrefix),
		Name:      sec.Annotations[nameAnn],
		User:      user,
		CreatedAt: sec.CreationTimestamp.UTC().Format(time.RFC3339),
	}
	if v, ok := sec.Annotations[expiresAnn]; ok {
		r.ExpiresAt = &v
	}
	if v, ok := sec.Annotations[lastUsedAnn]; ok {
		r.LastUsedAt = &v
	}
	return r
}
