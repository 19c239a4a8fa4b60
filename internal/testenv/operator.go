package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/delivery"
	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/scheme"
)

// Operator is the whole operator (operator.NewManager, as cmd/operator builds it)
// running in the test process with its HTTP API on a free 127.0.0.1 port.
type Operator struct {
	// BaseURL is the HTTP API's address, "http://127.0.0.1:<port>".
	BaseURL string
	// WebhookURL is the admission webhook's address when delivery is served.
	WebhookURL string
	// Done is closed when the manager has stopped; Err then says how.
	Done <-chan struct{}
	err  error
}

// Err is the manager's result; read it after Done is closed.
func (o *Operator) Err() error { return o.err }

// StartOperator runs the operator against cfg until ctx ends and waits (at most two
// minutes) until its /readyz answers 200. One process serves everything: the suites read
// through the operator they start (the read tier serves the same handlers: internal/
// operator's read-role test, and SuiteOptions.ReadTier).
func StartOperator(ctx context.Context, cfg *rest.Config) (*Operator, error) {
	return start(ctx, cfg, operator.Options{PublicRead: true})
}

// DeliveryNamespace is the test operator's own namespace: where it keeps its webhook
// certificate and the values of hosted secrets stored over HTTP (its value namespace).
const DeliveryNamespace = "podium-system"

// StartOperatorWithDelivery is StartOperator with the admission webhook of secret
// delivery served on a free 127.0.0.1 port: the shipped config/webhook configuration is
// installed pointing at https://localhost:<port> (what envtest's WebhookInstallOptions
// do), the operator issues its own certificate and writes the caBundle, and this waits
// until a dry-run Pod asking for secrets comes back mutated. orphanGrace shortens the
// clean-up of run Secrets no run was created with (0: the default).
func StartOperatorWithDelivery(ctx context.Context, cfg *rest.Config, orphanGrace time.Duration) (*Operator, error) {
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := fmt.Sprintf("https://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	url := base + delivery.WebhookPath
	if err := InstallWebhook(ctx, c, base); err != nil {
		ln.Close()
		return nil, err
	}
	op, err := start(ctx, cfg, operator.Options{PublicRead: true, Delivery: operator.DeliveryOptions{
		WebhookListener:      ln,
		CertSecret:           types.NamespacedName{Namespace: DeliveryNamespace, Name: operator.DefaultCertSecretName},
		DNSNames:             []string{"localhost"},
		WebhookConfiguration: operator.DefaultWebhookConfiguration,
		RunSecretOrphanGrace: orphanGrace,
	}})
	if err != nil {
		return nil, err
	}
	op.WebhookURL = url
	return op, waitForWebhook(ctx, c)
}

// ShippedWebhook is the MutatingWebhookConfiguration of config/webhook/manifests.yaml, as
// shipped.
func ShippedWebhook() (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "webhook", "manifests.yaml"))
	if err != nil {
		return nil, err
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// InstallWebhook creates (or replaces) the shipped MutatingWebhookConfiguration with each
// webhook's Service reference replaced by base (https://host:port) and the webhook's
// path, and no caBundle: the operator writes that.
func InstallWebhook(ctx context.Context, c client.Client, base string) error {
	return InstallWebhookAt(ctx, c, base, nil)
}

// InstallWebhookAt is InstallWebhook with the caBundle given (PEM): for a server other
// than the operator's, such as a bench's webhook that only answers.
func InstallWebhookAt(ctx context.Context, c client.Client, base string, caBundle []byte) error {
	cfg, err := ShippedWebhook()
	if err != nil {
		return err
	}
	for i := range cfg.Webhooks {
		path := ""
		if s := cfg.Webhooks[i].ClientConfig.Service; s != nil && s.Path != nil {
			path = *s.Path
		}
		cfg.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + path), CABundle: caBundle}
	}
	old := &admissionregistrationv1.MutatingWebhookConfiguration{}
	err = c.Get(ctx, client.ObjectKey{Name: cfg.Name}, old)
	switch {
	case apierrors.IsNotFound(err):
		return c.Create(ctx, cfg)
	case err != nil:
		return err
	}
	cfg.ResourceVersion = old.ResourceVersion
	return c.Update(ctx, cfg)
}

// waitForWebhook waits (at most a minute) until admission mutates a dry-run Pod that asks
// for secrets: the certificate is served and the caBundle written.
func waitForWebhook(ctx context.Context, c client.Client) error {
	deadline := time.Now().Add(time.Minute)
	var last error
	for time.Now().Before(deadline) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "webhook-probe-",
				Annotations: map[string]string{hubv1alpha1.AnnotationSecrets: "PROBE"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		last = c.Create(ctx, pod, client.DryRunAll)
		if last == nil && pod.Annotations[hubv1alpha1.AnnotationRequester] != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("the admission webhook did not answer within a minute: %w", last)
}

func start(ctx context.Context, cfg *rest.Config, o operator.Options) (*Operator, error) {
	// The operator's namespace exists before it starts, as in a deployment.
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DeliveryNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	o.SecretValueNamespace = DeliveryNamespace
	// Ready only once the apiserver admits rows through the policies, as deployed.
	o.AdmissionProbeNamespace = DeliveryNamespace
	o.Restartable = true // a test may stop its operator and start another
	if o.ReadTierUser == "" {
		o.ReadTierUser = ReadTierUser // a read tier started beside it may look keys up
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o.MetricsAddr, o.ProbeAddr, o.HTTPListener = "0", "0", ln
	if o.FingerprintKeySecret.Name == "" {
		// The operator's own namespace holds the key of registry credential fingerprints.
		if err := ensureNamespace(ctx, cfg, DeliveryNamespace); err != nil {
			ln.Close()
			return nil, err
		}
		o.FingerprintKeySecret = types.NamespacedName{Namespace: DeliveryNamespace, Name: FingerprintKeySecret}
	}
	mgr, err := operator.NewManager(cfg, o)
	if err != nil {
		ln.Close()
		return nil, err
	}
	done := make(chan struct{})
	op := &Operator{BaseURL: "http://" + ln.Addr().String(), Done: done}
	go func() {
		defer close(done)
		op.err = mgr.Start(ctx)
	}()
	return op.awaitReady("the operator")
}

// awaitReady waits up to two minutes for the operator's /readyz to answer 200, or for
// it to stop (op.Done closed) first; what names it in the errors.
func (op *Operator) awaitReady(what string) (*Operator, error) {
	deadline := time.After(2 * time.Minute)
	for {
		if resp, err := http.Get(op.BaseURL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return op, nil
			}
		}
		select {
		case <-op.Done:
			return nil, fmt.Errorf("%s stopped before it was ready: %w", what, op.err)
		case <-deadline:
			return nil, fmt.Errorf("%s was not ready within two minutes", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ReadTierUser is the read tier's ServiceAccount (config/read) in DeliveryNamespace, the
// caller the test operator answers API-key lookups for.
const ReadTierUser = "system:serviceaccount:" + DeliveryNamespace + ":podium-read"

// FingerprintKeySecret is the name of the test operator's fingerprint key Secret (in
// DeliveryNamespace).
const FingerprintKeySecret = "podium-fingerprint-key"

func ensureNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
