package secrets

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/secretkind"
)

// DockerConfigJSON and RegistryPassword read and write a registry credential's
// .dockerconfigjson; their home is the kind table (internal/secretkind).
var (
	DockerConfigJSON = secretkind.DockerConfigJSON
	RegistryPassword = secretkind.RegistryPassword
)

// FingerprintPrefix starts every fingerprint; it names the function, so that another
// one can follow without ambiguity.
const FingerprintPrefix = "hmac-sha256:"

// fingerprintHexDigits is how much of the HMAC a fingerprint shows: 64 bits, enough to
// tell values apart, and nothing to reverse (docs/secrets.md).
const fingerprintHexDigits = 16

// fingerprintKeyBytes is the size of the operator's fingerprint key.
const fingerprintKeyBytes = 32

// fingerprintKeyDataKey is the key of the fingerprint key in its Secret.
const fingerprintKeyDataKey = "key"

// Keyring computes fingerprints of registry credential values: an HMAC-SHA256 under a
// random key kept in an operator-only Secret, made on first use with create-if-absent
// (so every replica ends up with the same key) and then kept in memory.
type Keyring struct {
	// Client creates the key Secret; Reader reads it uncached (it carries no label the
	// manager's Secret cache selects).
	Client client.Client
	Reader client.Reader
	// Secret is where the key lives: a namespace only the operator may read.
	Secret types.NamespacedName

	mu  sync.Mutex
	key []byte
}

// Fingerprint identifies value without revealing it: FingerprintPrefix and the first
// 16 hex digits of HMAC-SHA256(key, "podium-registry-credential\x00" + value).
func (k *Keyring) Fingerprint(ctx context.Context, value []byte) (string, error) {
	key, err := k.load(ctx)
	if err != nil {
		return "", err
	}
	return fingerprint(key, value), nil
}

func fingerprint(key, value []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("podium-registry-credential\x00"))
	m.Write(value)
	return FingerprintPrefix + hex.EncodeToString(m.Sum(nil))[:fingerprintHexDigits]
}

func (k *Keyring) load(ctx context.Context) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key != nil {
		return k.key, nil
	}
	for range 3 {
		s := &corev1.Secret{}
		err := k.Reader.Get(ctx, k.Secret, s)
		if err == nil {
			key := s.Data[fingerprintKeyDataKey]
			if len(key) < fingerprintKeyBytes {
				return nil, fmt.Errorf("the fingerprint key Secret %s holds no key of %d bytes", k.Secret, fingerprintKeyBytes)
			}
			k.key = key
			return key, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the fingerprint key Secret %s: %w", k.Secret, err)
		}
		key := make([]byte, fingerprintKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		err = k.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: k.Secret.Namespace, Name: k.Secret.Name,
				Labels: map[string]string{"app.kubernetes.io/name": "podium", "app.kubernetes.io/component": "fingerprint-key"},
			},
			Type:      corev1.SecretTypeOpaque,
			Immutable: ptr.To(true),
			Data:      map[string][]byte{fingerprintKeyDataKey: key},
		})
		if err == nil {
			k.key = key
			return key, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating the fingerprint key Secret %s: %w", k.Secret, err)
		}
		// Another replica made it first: read theirs.
	}
	return nil, fmt.Errorf("the fingerprint key Secret %s kept changing", k.Secret)
}

// MAC is HMAC-SHA256 under the keyring's key of domain, a zero byte and data: another
// use of the same kind of operator-only key (a keyring of its own Secret), such as
// signing API-key access tokens (docs/api-keys.md). The domain keeps the uses apart.
func (k *Keyring) MAC(ctx context.Context, domain string, data []byte) ([]byte, error) {
	key, err := k.load(ctx)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write(data)
	return m.Sum(nil), nil
}
