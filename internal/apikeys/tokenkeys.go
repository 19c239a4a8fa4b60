package apikeys

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/accesstoken"
)

// TokenKeysSecret is the operator-only Secret (in the value namespace) holding the
// Ed25519 private keys that sign access tokens (docs/api-keys.md, "Signing keys and
// their rollover"): one data entry per key, named by its key id and holding its 32-byte
// seed, and the entry "current" naming the key that signs. Every other key only
// verifies: the previous key during a rollover.
const TokenKeysSecret = "podium-access-token-keys"

// currentEntry is the data entry of TokenKeysSecret naming the signing key.
const currentEntry = "current"

// TokenKeyRefresh is how often the keys are read again: a key added to the Secret
// verifies, a key made current signs, and a key removed stops verifying, on every
// replica within this time.
const TokenKeyRefresh = 30 * time.Second

// TokenKeys reads the access-token signing keys from their Secret, making it on first
// use with create-if-absent (so every replica ends up with the same keys), and reads it
// again every Refresh.
type TokenKeys struct {
	// Client creates the Secret; Reader reads it uncached (the manager caches no such
	// Secret).
	Client client.Client
	Reader client.Reader
	Secret types.NamespacedName
	// Refresh is how long a read is used (0: TokenKeyRefresh).
	Refresh time.Duration
	Now     func() time.Time

	mu      sync.Mutex
	read    time.Time
	signing accesstoken.SigningKey
	set     accesstoken.KeySet
}

func (k *TokenKeys) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// Signing returns the key that signs new tokens.
func (k *TokenKeys) Signing(ctx context.Context) (accesstoken.SigningKey, error) {
	if err := k.load(ctx); err != nil {
		return accesstoken.SigningKey{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.signing, nil
}

// Public returns the public keys that verify tokens: the signing key's and every other
// key in the Secret.
func (k *TokenKeys) Public(ctx context.Context) (accesstoken.KeySet, error) {
	if err := k.load(ctx); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.set, nil
}

func (k *TokenKeys) load(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	refresh := k.Refresh
	if refresh == 0 {
		refresh = TokenKeyRefresh
	}
	if k.set != nil && k.now().Sub(k.read) < refresh {
		return nil
	}
	for range 3 {
		s := &corev1.Secret{}
		err := k.Reader.Get(ctx, k.Secret, s)
		if err == nil {
			signing, set, err := parseTokenKeys(s.Data)
			if err != nil {
				return fmt.Errorf("the access-token key Secret %s: %w", k.Secret, err)
			}
			k.signing, k.set, k.read = signing, set, k.now()
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading the access-token key Secret %s: %w", k.Secret, err)
		}
		err = k.Client.Create(ctx, newTokenKeysSecret(k.Secret))
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the access-token key Secret %s: %w", k.Secret, err)
		}
		// Made, by this replica or another: read it back.
	}
	return fmt.Errorf("the access-token key Secret %s kept changing", k.Secret)
}

// NewTokenKeySeed makes a key: its random 32-byte seed and its id (the first 16 hex
// digits of SHA-256 of its public key).
func NewTokenKeySeed() (id string, seed []byte, err error) {
	seed = make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
	return hex.EncodeToString(sum[:8]), seed, nil
}

func newTokenKeysSecret(name types.NamespacedName) *corev1.Secret {
	id, seed, err := NewTokenKeySeed()
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: name.Namespace, Name: name.Name,
			Labels: map[string]string{"app.kubernetes.io/name": "podium", "app.kubernetes.io/component": "access-token-keys"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{currentEntry: []byte(id), id: seed},
	}
}

// parseTokenKeys reads the Secret's data: "current" names the signing key; every other
// entry is a key id and its seed. A malformed entry makes the whole Secret an error (the
// operator then neither signs nor verifies: it fails closed, and says which entry).
func parseTokenKeys(data map[string][]byte) (accesstoken.SigningKey, accesstoken.KeySet, error) {
	set := accesstoken.KeySet{}
	var signing accesstoken.SigningKey
	current := string(data[currentEntry])
	for id, seed := range data {
		if id == currentEntry {
			continue
		}
		if !accesstoken.ValidKeyID(id) {
			return signing, nil, fmt.Errorf("entry %q is not a valid key id", id)
		}
		if len(seed) != ed25519.SeedSize {
			return signing, nil, fmt.Errorf("entry %q holds %d bytes, not a %d-byte Ed25519 seed", id, len(seed), ed25519.SeedSize)
		}
		priv := ed25519.NewKeyFromSeed(seed)
		set[id] = priv.Public().(ed25519.PublicKey)
		if id == current {
			signing = accesstoken.SigningKey{ID: id, Private: priv}
		}
	}
	if signing.Private == nil {
		return signing, nil, fmt.Errorf("%q names no key of the Secret", currentEntry)
	}
	return signing, set, nil
}
