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

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/controllers"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/delivery"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/metrics"
	"podium.dev/podium/internal/rowadmission"
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
	resolver := &delivery.Resolver{Cache: mgr.GetClient(), API: mgr.GetAPIReader(), Config: c.Preflight, Place: c.Secrets.Place}
	cleanup := &controllers.RunSecretReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		MaxAge: d.RunSecretMaxAge, OrphanGrace: d.RunSecretOrphanGrace,
		Events:  mgr.GetEventRecorder("podium-runsecret"),
		Reissue: resolver.Reissue,
	}
	if err := cleanup.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the run Secret controller: %w", err)
	}
	if d.WebhookAddr == "" && d.WebhookListener == nil {
		return nil
	}

	log := mgr.GetLogger().WithName("delivery")
	mux, err := webhookHandler(mgr, c, resolver, log)
	if err != nil {
		return err
	}
	getCert, err := webhookCertificate(mgr, d, c)
	if err != nil {
		return err
	}
	c.Certificate = certificateOf(getCert)
	return mgr.Add(&servingcert.Server{
		Addr: d.WebhookAddr, Listener: d.WebhookListener, Handler: mux, GetCertificate: getCert,
		Log: log,
	})
}

// webhookHandler serves the admission webhooks: secret delivery (the Injector, timed) at
// delivery.WebhookPath, and a row's identity and controller reference at its create
// (rowadmission) at rowadmission.Path.
func webhookHandler(mgr manager.Manager, c *components, resolver *delivery.Resolver, log logr.Logger) (*http.ServeMux, error) {
	lc := c.Secrets
	injector := &delivery.Injector{
		Resolver: resolver,
		Client:   mgr.GetClient(),
		RunsOf:   index.RunsOf,
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
		return nil, err
	}
	rows, err := admission.StandaloneWebhook(&admission.Webhook{Handler: &rowadmission.Handler{Boards: mgr.GetClient(), Live: mgr.GetAPIReader(),
		// The operator's reviewer: SubjectAccessReviews cached reviewTTL by everything
		// asked (user, groups, extra, namespace, verb).
		Restorer: func(ctx context.Context, u authenticationv1.UserInfo, namespace string) (bool, error) {
			if c.Reviewer == nil {
				return false, errors.New("no access reviewer") // treated as unsure: no new id
			}
			return c.Reviewer.Allowed(ctx, authn.NewCaller(u.Username, u.UID, u.Groups, u.Extra),
				authn.Attributes{Namespace: namespace, Verb: hubv1alpha1.VerbRestore, Resource: "leaderboardrows"})
		}}}, admission.StandaloneOptions{
		Logger: log.WithName("rows"), MetricsPath: rowadmission.Path,
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(delivery.WebhookPath, hook)
	mux.Handle(rowadmission.Path, rows)
	return mux, nil
}

// webhookCertificate is where the webhook's serving certificate comes from: files in
// CertDir (cert-manager's, watched), else a certificate the operator issues and rotates
// in CertSecret (servingcert.Rotator, which also writes the caBundle; the server is not
// ready until it has one).
func webhookCertificate(mgr manager.Manager, d DeliveryOptions, c *components) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), error) {
	if d.CertDir != "" {
		w, err := certwatcher.New(filepath.Join(d.CertDir, "tls.crt"), filepath.Join(d.CertDir, "tls.key"))
		if err != nil {
			return nil, fmt.Errorf("reading the webhook certificate from %s: %w", d.CertDir, err)
		}
		return w.GetCertificate, mgr.Add(w)
	}
	if d.CertSecret.Name == "" || d.CertSecret.Namespace == "" {
		return nil, errors.New("the webhook certificate Secret needs a namespace and a name")
	}
	if d.WebhookConfiguration == "" {
		d.WebhookConfiguration = DefaultWebhookConfiguration
	}
	rot := &servingcert.Rotator{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Secret: d.CertSecret, DNSNames: d.DNSNames, WebhookConfiguration: d.WebhookConfiguration,
		Log: mgr.GetLogger().WithName("servingcert"),
	}
	c.Ready = append(c.Ready, func() bool {
		_, err := rot.GetCertificate(nil)
		return err == nil
	})
	return rot.GetCertificate, mgr.Add(rot)
}
