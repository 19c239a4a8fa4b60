package operator

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/scheme"
)

// newReadManager builds the read tier's manager (RoleRead): no controllers and no leader
// election (every replica serves), and a cache of Podium's records only. Its informers
// are those of the record indexes (Datasets, Leaderboards, HostedSecrets,
// LeaderboardRows); a read of any other kind through the cache fails instead of starting
// a watch (ReaderFailOnMissingInformer), so no Secret is ever listed or watched, and the
// read tier's ServiceAccount may not read one anyway (config/read).
func newReadManager(cfg *rest.Config, o Options) (manager.Manager, error) {
	hc, newInformer, err := rowInformers(cfg, newListingInformer)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsOptions(o),
		HealthProbeBindAddress: o.ProbeAddr,
		LeaderElection:         false,
		Controller:             config.Controller{SkipNameValidation: ptr.To(o.Restartable)},
		Cache: cache.Options{
			DefaultTransform:            CacheTransform(),
			ReaderFailOnMissingInformer: true,
			HTTPClient:                  hc,
			NewInformer:                 newInformer,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the read manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := SetupRead(mgr, o); err != nil {
		return nil, err
	}
	return mgr, nil
}

// newListingInformer is the informer of the read tier's cache: it fills with one LIST,
// which the apiserver answers from its watch cache, instead of client-go's streaming
// watch-list (the WatchListClient default since client-go 1.35). At 100,000 rows the
// watch-list took this process about twice as long (17-19 s against 8-10 s, same run,
// same load), decoding every row through an event envelope, once per event
// (docs/design/performance-log.md, "Scale-out"): a new replica is Ready sooner. Watches
// after the list are the same.
func newListingInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	if full, ok := lw.(listerWatcher); ok {
		lw = listingOnly{full}
	}
	return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
}

// listerWatcher is what controller-runtime's informers are given (a *ListWatch): the
// context-aware methods too, which the reflector uses when they are there.
type listerWatcher interface {
	toolscache.ListerWatcher
	toolscache.ListerWatcherWithContext
}

// listingOnly tells the reflector not to use the watch-list for this ListerWatcher
// (client-go's watchlist.DoesClientNotSupportWatchListSemantics).
type listingOnly struct{ listerWatcher }

func (listingOnly) IsWatchListSemanticsUnSupported() bool { return true }

// SetupRead registers the record indexes (which start the only informers the read tier
// has), the rank index, the read tier's authentication, the public read, the web pages,
// the secrets preflight and the HTTP server with mgr.
func SetupRead(mgr manager.Manager, o Options) error {
	o.Role = RoleRead
	c := &components{Routes: map[string]http.Handler{}}
	if err := index.RegisterOn(context.Background(), mgr.GetFieldIndexer(), index.RecordFields()); err != nil {
		return fmt.Errorf("registering field indexes: %w", err)
	}
	steps := []struct {
		name string
		fn   func(manager.Manager, Options, *components) error
	}{
		{"authentication", setupReadAuthn},
		{"rank index", setupRanking},
		{"secrets preflight", setupReadPreflight},
		{"web pages", setupWeb},
		{"HTTP server", setupHTTP},
	}
	for _, s := range steps {
		if err := s.fn(mgr, o, c); err != nil {
			return fmt.Errorf("setting up %s: %w", s.name, err)
		}
	}
	return nil
}
