package operator

import (
	"context"
	"crypto/tls"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"podium.dev/podium/internal/metrics"
)

// setupMetrics makes the domain gauges read from this manager's cache (and the webhook
// certificate setupDelivery found) on every replica, leader or not: the cache runs on
// each, and Prometheus scrapes each.
func setupMetrics(mgr manager.Manager, _ Options, c *components) error {
	src := &metrics.Source{Cache: mgr.GetCache(), Certificate: c.Certificate}
	return mgr.Add(metricsSource{src})
}

type metricsSource struct{ src *metrics.Source }

func (m metricsSource) Start(ctx context.Context) error {
	metrics.Serve(ctx, m.src)
	return nil
}

func (metricsSource) NeedLeaderElection() bool { return false }

// certificateOf adapts a tls.Config certificate getter to metrics.Source.Certificate.
func certificateOf(get func(*tls.ClientHelloInfo) (*tls.Certificate, error)) func() (*tls.Certificate, error) {
	return func() (*tls.Certificate, error) { return get(nil) }
}
