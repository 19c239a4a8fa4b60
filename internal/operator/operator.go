// Package operator wires Podium's controllers, caches and HTTP server into a
// controller-runtime manager. cmd/operator and the tests build the same manager here.
package operator

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/providers"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/rowwatch"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/secrets"
)

// Role is what a podium-operator process does (docs/deploy.md, "Components").
type Role string

const (
	// RoleOperator runs the controllers (leader-elected), the delivery webhook, the
	// secrets, registry-credentials and API-key APIs and the domain metrics. It serves the
	// public read only when Options.PublicRead is set.
	RoleOperator Role = "operator"
	// RoleRead serves the public read, the web pages and the secrets preflight from a
	// cache of Leaderboards, LeaderboardRows, Datasets and HostedSecrets only (never a
	// Secret): no controllers, no leader election, every replica serves (read.go).
	RoleRead Role = "read"
)

// Options configure the operator process.
type Options struct {
	// Role is RoleOperator ("" too) or RoleRead.
	Role Role
	// PublicRead makes the operator role serve the public read and the web pages too (one
	// process for everything, as the tests that read through the operator run it); the
	// installed operator leaves them to the read tier.
	PublicRead bool
	// ReadTierUser is the user name of the read tier's ServiceAccount
	// (system:serviceaccount:<ns>:podium-read), the only caller the operator answers API
	// key lookups for (keylookup.Path); "" serves no lookups.
	ReadTierUser string
	// OperatorURL is, in the read role, the operator's HTTP API, where API keys and
	// access tokens are looked up (keylookup); "" refuses them.
	OperatorURL string
	// MetricsAddr serves Prometheus metrics ("0" disables).
	MetricsAddr string
	// MetricsSecure serves the metrics over HTTPS, to callers whose bearer token
	// authenticates (TokenReview) and who may `get` the non-resource URL /metrics
	// (SubjectAccessReview; config/rbac/metrics_reader_role.yaml grants it).
	MetricsSecure bool
	// MetricsCertDir holds tls.crt and tls.key for the metrics endpoint (cert-manager's
	// Secret, mounted); empty means a self-signed certificate made at start.
	MetricsCertDir string
	// ProbeAddr serves the manager's /healthz and /readyz.
	ProbeAddr string
	// LeaderElection makes one replica run the controllers; the HTTP server runs on all.
	LeaderElection bool
	// LeaderElectionNamespace is where the lease lives (defaults in cluster).
	LeaderElectionNamespace string
	// HTTPAddr is the address of Podium's HTTP API ("" disables it).
	HTTPAddr string
	// HTTPListener, when set, is served instead of HTTPAddr: tests bind 127.0.0.1:0
	// themselves and so know the address of the manager's HTTP API.
	HTTPListener net.Listener
	// SecretValueNamespace is the namespace where values stored over HTTP live, which
	// only the operator can read (docs/design/secrets.md, "Where values live"); ""
	// means DefaultSecretValueNamespace. It must exist.
	SecretValueNamespace string
	// PreflightConfig is an optional file with the provider table and reserved names.
	PreflightConfig string
	// Delivery configures the admission webhook that hands hosted secrets to Jobs and
	// Pods, and the clean-up of their run Secrets (delivery.go).
	Delivery DeliveryOptions
	// FingerprintKeySecret is the operator-only Secret holding the key of registry
	// credential fingerprints (made on first use). Unset, /v1/registry-credentials is
	// not served.
	FingerprintKeySecret types.NamespacedName
	// Restartable lets one process build more than one manager (tests that stop an
	// operator and start another: controller-runtime refuses a controller name used
	// twice in a process, for its metrics, unless told to skip that check).
	Restartable bool
	// AdmissionProbeNamespace, when set, makes readiness wait until the apiserver admits
	// a leaderboard row through Podium's admission policies (a server-side dry-run
	// create there, admission_probe.go); cmd/operator sets the operator's own namespace.
	AdmissionProbeNamespace string
	// RequestLog, when set, receives the HTTP server's one line per request and its own
	// messages instead of the manager's logger (which may sample repeated messages).
	RequestLog *logr.Logger
}

// DefaultSecretValueNamespace is the value namespace when Options name none: the
// namespace config/manager deploys the operator into.
const DefaultSecretValueNamespace = "podium-system"

// NewManager builds a manager whose cache holds only the Secrets Podium owns: a cached
// read of one Secret must not start a cluster-wide watch of every Secret.
func NewManager(cfg *rest.Config, o Options) (manager.Manager, error) {
	switch o.Role {
	case RoleRead:
		return newReadManager(cfg, o)
	case "", RoleOperator:
	default:
		return nil, fmt.Errorf("unknown role %q (operator or read)", o.Role)
	}
	podiumSecrets := labels.SelectorFromSet(labels.Set{hubv1alpha1.LabelManagedBy: hubv1alpha1.ManagedByPodium})
	// Jobs and Pods only when admission gave them a run Secret: never every Pod.
	runRequirement, err := labels.NewRequirement(hubv1alpha1.LabelRunSecret, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	runs := labels.NewSelector().Add(*runRequirement)
	hc, newInformer, err := rowInformers(cfg, nil)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.Scheme,
		Metrics:                 metricsOptions(o),
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        "podium-operator.hub.podium.dev",
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		Controller:              config.Controller{SkipNameValidation: ptr.To(o.Restartable)},
		// A stopping leader gives the lease up at once instead of letting it expire
		// (15 s): podium-operator exits as soon as the manager stops, which is what makes
		// this safe (docs/deploy.md, "Upgrade").
		LeaderElectionReleaseOnCancel: true,
		Cache: cache.Options{
			// Managed fields are never read and would double each cached row's size;
			// strings every row repeats are shared (cachemem.go).
			DefaultTransform: CacheTransform(),
			HTTPClient:       hc,
			NewInformer:      newInformer,
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}: {Label: podiumSecrets},
				&batchv1.Job{}:   {Label: runs},
				&corev1.Pod{}:    {Label: runs},
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := Setup(mgr, o); err != nil {
		return nil, err
	}
	return mgr, nil
}

// rowInformers returns the HTTP client of a manager's cache, and the cache's
// NewInformer, which watches with it: rows are watched through rowwatch (one JSON pass
// a watch event instead of client-go's several; docs/performance.md, "Rows in"), every
// other kind as next (nil: client-go's) makes it. Both caches that use it are
// cluster-wide with no selector on rows, which rowwatch's watch needs.
func rowInformers(cfg *rest.Config, next rowwatch.NewInformerFunc) (*http.Client, rowwatch.NewInformerFunc, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	newInformer, err := rowwatch.Wrap(cfg, hc, next)
	return hc, newInformer, err
}

// metricsOptions serves the metrics as the kubebuilder v4 scaffold does: over TLS (HTTP/1.1
// only, as HTTP/2's rapid-reset and stream-cancellation attacks advise) with
// controller-runtime's authentication and authorization filter when MetricsSecure is set.
func metricsOptions(o Options) metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.MetricsAddr}
	if !o.MetricsSecure {
		return m
	}
	m.SecureServing = true
	m.FilterProvider = filters.WithAuthenticationAndAuthorization
	m.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	if o.MetricsCertDir != "" {
		m.CertDir, m.CertName, m.KeyName = o.MetricsCertDir, "tls.crt", "tls.key"
	}
	return m
}

// components are what the capabilities share inside one operator process.
type components struct {
	// Ranking is the in-memory rank index of every leaderboard (leaderboards.go).
	Ranking *ranking.Registry
	// Reviewer authenticates bearer tokens and authorizes callers (http.go).
	Reviewer authn.Reviewer
	// Routes are the HTTP handlers by ServeMux pattern ("POST /v1/secrets"), mounted
	// by the HTTP server (http.go).
	Routes map[string]http.Handler
	// Preflight is the provider table and the reserved names (secrets.go).
	Preflight *providers.Config
	// Secrets moves hosted secrets between states (secrets.go).
	Secrets *secrets.Lifecycle
	// Ready are extra readiness checks of the HTTP server's /readyz.
	Ready []func() bool
	// Certificate is the delivery webhook's serving certificate, for its expiry metric
	// (nil when no webhook is served).
	Certificate func() (*tls.Certificate, error)
}

// Setup registers field indexes, controllers and the HTTP server with mgr, in this
// order: each step may use what the steps before it made.
func Setup(mgr manager.Manager, o Options) error {
	c := &components{Routes: map[string]http.Handler{}}
	if err := index.Register(context.Background(), mgr); err != nil {
		return fmt.Errorf("registering field indexes: %w", err)
	}
	steps := []struct {
		name string
		fn   func(manager.Manager, Options, *components) error
	}{
		{"authentication", setupAuthn},
		{"leaderboards", setupLeaderboards},
		{"hosted secrets", setupSecrets},
		{"secret delivery", setupDelivery},
		{"web pages", setupWeb},
		{"admission probe", setupAdmissionProbe},
		{"HTTP server", setupHTTP},
		{"metrics", setupMetrics},
	}
	for _, s := range steps {
		if err := s.fn(mgr, o, c); err != nil {
			return fmt.Errorf("setting up %s: %w", s.name, err)
		}
	}
	return nil
}
