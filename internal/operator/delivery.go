package operator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/controllers"
	"podium.dev/podium/internal/delivery"
	"podium.dev/podium/internal/metrics"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/servingcert"
)

// DeliveryOptions configure secret delivery into Jobs and Pods.
type DeliveryOptions struct {
	// WebhookAddr is where the admission webhook listens (HTTPS); "" with no
	// WebhookListener serves no webhook (the run Secret clean-up still runs).
	WebhookAddr string
	// WebhookListener, when set, is served instead of WebhookAddr (tests).
	WebhookListener net.Listener
	// CertDir, when set, holds tls.crt and tls.key (cert-manager's Secret mounted there)
	// and the operator issues no certificate of its own.
	CertDir string
	// CertSecret is the Secret of the certificate the operator issues (its namespace).
	CertSecret types.NamespacedName
	// DNSNames are the names the issued certificate covers.
	DNSNames []string
	// WebhookConfiguration is the MutatingWebhookConfiguration whose caBundle the
	// operator keeps (when it issues the certificate).
	WebhookConfiguration string
	// RunSecretMaxAge bounds a run Secret's life; RunSecretOrphanGrace is how long one
	// waits for its Job or Pod to appear.
	RunSecretMaxAge      time.Duration
	RunSecretOrphanGrace time.Duration
}

// Defaults of DeliveryOptions.
const (
	DefaultWebhookConfiguration = "podium-delivery"
	DefaultCertSecretName       = "podium-webhook-cert"
	DefaultRunSecretMaxAge      = 24 * time.Hour
	DefaultRunSecretOrphanGrace = 2 * time.Minute
)

// setupDelivery registers the run Secret clean-up and, when configured, serves the
// admission webhook with a certificate of its own or cert-manager's.
func setupDelivery(mgr manager.Manager, o Options, c *components) error {
	d := o.Delivery
	if d.RunSecretMaxAge <= 0 {
		d.RunSecretMaxAge = DefaultRunSecretMaxAge
	}
	if d.RunSecretOrphanGrace <= 0 {
		d.RunSecretOrphanGrace = DefaultRunSecretOrphanGrace
	}
	cleanup := &controllers.RunSecretReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		MaxAge: d.RunSecretMaxAge, OrphanGrace: d.RunSecretOrphanGrace,
		Events: mgr.GetEventRecorder("podium-runsecret"),
	}
	if err := cleanup.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the run Secret controller: %w", err)
	}
	if d.WebhookAddr == "" && d.WebhookListener == nil {
		return nil
	}

	log := mgr.GetLogger().WithName("delivery")
	lc := c.Secrets
	injector := &delivery.Injector{
		Resolver: &delivery.Resolver{Cache: mgr.GetClient(), API: mgr.GetAPIReader(), Config: c.Preflight, Place: lc.Place},
		Client:   mgr.GetClient(),
		MarkUsed: func(ctx context.Context, used []*hubv1alpha1.HostedSecret) error {
			now := time.Now()
			var errs []error
			for _, hs := range used {
				errs = append(errs, lc.MarkUsed(ctx, hs, now))
			}
			return errors.Join(errs...)
		},
		Decoder: admission.NewDecoder(scheme.Scheme),
		Log:     log,
	}
	hook, err := admission.StandaloneWebhook(&admission.Webhook{Handler: metrics.TimeAdmission(injector)}, admission.StandaloneOptions{
		Logger: log,
		// controller-runtime's webhook metrics (request latency, in flight, by code).
		MetricsPath: delivery.WebhookPath,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(delivery.WebhookPath, hook)

	var getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	if d.CertDir != "" {
		w, err := certwatcher.New(filepath.Join(d.CertDir, "tls.crt"), filepath.Join(d.CertDir, "tls.key"))
		if err != nil {
			return fmt.Errorf("reading the webhook certificate from %s: %w", d.CertDir, err)
		}
		if err := mgr.Add(w); err != nil {
			return err
		}
		getCert = w.GetCertificate
	} else {
		if d.CertSecret.Name == "" || d.CertSecret.Namespace == "" {
			return errors.New("the webhook certificate Secret needs a namespace and a name")
		}
		if d.WebhookConfiguration == "" {
			d.WebhookConfiguration = DefaultWebhookConfiguration
		}
		rot := &servingcert.Rotator{
			Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
			Secret: d.CertSecret, DNSNames: d.DNSNames, WebhookConfiguration: d.WebhookConfiguration,
			Log: mgr.GetLogger().WithName("servingcert"),
		}
		if err := mgr.Add(rot); err != nil {
			return err
		}
		getCert = rot.GetCertificate
		c.Ready = append(c.Ready, func() bool {
			_, err := rot.GetCertificate(nil)
			return err == nil
		})
	}
	c.Certificate = certificateOf(getCert)
	return mgr.Add(&servingcert.Server{
		Addr: d.WebhookAddr, Listener: d.WebhookListener, Handler: mux, GetCertificate: getCert,
		Log: log,
	})
}
