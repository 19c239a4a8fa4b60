package servingcert

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// checkInterval is how often every replica looks at the Secret and the webhook
// configuration again: it picks up a certificate another replica renewed, and repairs
// a caBundle someone reset (an `kubectl apply` of the shipped configuration does).
const checkInterval = 30 * time.Second

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;update

// Rotator keeps the serving certificate in a Secret, serves it to the webhook server
// (GetCertificate) and writes its CA into the webhook configuration's caBundle. Every
// replica runs one; writes carry the resourceVersion read, so replicas never overwrite
// each other's certificate.
type Rotator struct {
	// Client writes; Reader reads uncached.
	Client client.Client
	Reader client.Reader
	// Secret is where the certificate is kept (the operator's namespace).
	Secret types.NamespacedName
	// DNSNames the certificate covers: the webhook Service's name in cluster.
	DNSNames []string
	// WebhookConfiguration is the MutatingWebhookConfiguration whose caBundle is kept.
	WebhookConfiguration string
	Log                  logr.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	cert     atomic.Pointer[tls.Certificate]
	patched  atomic.Bool
	warnOnce sync.Once
}

// NeedLeaderElection is false: every replica serves the webhook.
func (r *Rotator) NeedLeaderElection() bool { return false }

// GetCertificate serves the current certificate.
func (r *Rotator) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := r.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("the serving certificate is not ready yet")
}

// Ready says whether the certificate is loaded and the caBundle written.
func (r *Rotator) Ready() bool { return r.cert.Load() != nil && r.patched.Load() }

// Start keeps the certificate current until ctx ends.
func (r *Rotator) Start(ctx context.Context) error {
	for {
		wait := checkInterval
		if err := r.Sync(ctx); err != nil {
			r.Log.Error(err, "Keeping the webhook serving certificate current failed; retrying", "secret", r.Secret)
			wait = 2 * time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

func (r *Rotator) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Sync makes sure the Secret holds a current certificate, loads it, and writes its CA
// bundle into the webhook configuration.
func (r *Rotator) Sync(ctx context.Context) error {
	data, err := r.ensureSecret(ctx)
	if err != nil {
		return err
	}
	pair, err := KeyPair(data)
	if err != nil {
		return fmt.Errorf("loading the serving certificate: %w", err)
	}
	if cur := r.cert.Load(); cur == nil || !bytes.Equal(cur.Certificate[0], pair.Certificate[0]) {
		r.cert.Store(pair)
		r.Log.Info("Serving the webhook certificate", "secret", r.Secret, "renewAt", RenewAt(data).UTC().Format(time.RFC3339))
	}
	return r.patchCABundle(ctx, data[KeyCABundle])
}

// ensureSecret returns the Secret's data after renewing what Plan says needs it.
func (r *Rotator) ensureSecret(ctx context.Context) (map[string][]byte, error) {
	for range 5 {
		s := &corev1.Secret{}
		err := r.Reader.Get(ctx, r.Secret, s)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Secret %s: %w", r.Secret, err)
		}
		exists := err == nil
		data, changed, err := Plan(s.Data, r.DNSNames, r.now())
		if err != nil {
			return nil, err
		}
		if !changed {
			return data, nil
		}
		if !exists {
			s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
				Namespace: r.Secret.Namespace, Name: r.Secret.Name,
				Labels: map[string]string{hubv1alpha1.LabelManagedBy: hubv1alpha1.ManagedByPodium},
			}, Type: corev1.SecretTypeTLS, Data: data}
			err = r.Client.Create(ctx, s)
		} else {
			s.Data = data
			err = r.Client.Update(ctx, s) // carries the resourceVersion read
		}
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			continue // another replica wrote first: use what it wrote
		}
		if err != nil {
			return nil, fmt.Errorf("writing Secret %s: %w", r.Secret, err)
		}
		r.Log.Info("Issued a webhook serving certificate", "secret", r.Secret, "dnsNames", r.DNSNames)
		return data, nil
	}
	return nil, fmt.Errorf("writing Secret %s: it kept changing", r.Secret)
}

// patchCABundle writes bundle into every webhook of the configuration that lacks it. A
// conflict (another replica, or an apply, wrote meanwhile) reads again: the bundle may
// be there already.
func (r *Rotator) patchCABundle(ctx context.Context, bundle []byte) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return r.patchCABundleOnce(ctx, bundle) })
}

func (r *Rotator) patchCABundleOnce(ctx context.Context, bundle []byte) error {
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: r.WebhookConfiguration}, cfg); err != nil {
		if apierrors.IsNotFound(err) {
			r.warnOnce.Do(func() {
				r.Log.Info("The webhook configuration does not exist; nothing sends admission requests to this operator", "configuration", r.WebhookConfiguration)
			})
			return nil
		}
		return fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", r.WebhookConfiguration, err)
	}
	changed := false
	for i := range cfg.Webhooks {
		if !bytes.Equal(cfg.Webhooks[i].ClientConfig.CABundle, bundle) {
			cfg.Webhooks[i].ClientConfig.CABundle = bundle
			changed = true
		}
	}
	if changed {
		if err := r.Client.Update(ctx, cfg); err != nil { // carries the resourceVersion read
			return fmt.Errorf("writing the caBundle of MutatingWebhookConfiguration %s: %w", r.WebhookConfiguration, err)
		}
		r.Log.Info("Wrote the caBundle of the webhook configuration", "configuration", r.WebhookConfiguration)
	}
	r.patched.Store(true)
	return nil
}
