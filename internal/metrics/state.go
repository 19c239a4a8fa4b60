package metrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Source is what the state gauges are read from at scrape time.
type Source struct {
	// Cache is the manager's cache (HostedSecrets, Leaderboards, LeaderboardRows and
	// Podium's own Secrets). Nil: the object gauges are not exported.
	Cache Informers
	// Certificate returns the delivery webhook's serving certificate. Nil: the
	// certificate gauge is not exported (no webhook is served).
	Certificate func() (*tls.Certificate, error)
}

// ScrapeTimeout bounds the cache reads of one scrape: a cache that has not synced yet
// makes a List wait, and a scrape must answer.
const ScrapeTimeout = 5 * time.Second

// source is the Source of the running operator. One process runs one operator; tests
// that start several one after the other replace it (Serve).
var source atomic.Pointer[Source]

// Serve makes the state gauges read from s until ctx ends (the manager stops).
func Serve(ctx context.Context, s *Source) {
	source.Store(s)
	<-ctx.Done()
	source.CompareAndSwap(s, nil)
}

var (
	hostedSecretsDesc = prometheus.NewDesc(HostedSecretsName,
		"HostedSecrets by namespace, state (active, revoked, or pending before the controller set one) and their Ready condition's status and reason.",
		[]string{"namespace", "state", "ready", "reason"}, nil)
	leaderboardsDesc = prometheus.NewDesc(LeaderboardsName,
		"Leaderboards by namespace and their Ready condition's status and reason.",
		[]string{"namespace", "ready", "reason"}, nil)
	rowsDesc = prometheus.NewDesc(LeaderboardRowsName,
		"LeaderboardRows by namespace and their Valid condition's status and reason (per namespace, not per board, so that the series stay bounded).",
		[]string{"namespace", "valid", "reason"}, nil)
	runSecretsDesc = prometheus.NewDesc(RunSecretsName,
		"Run Secrets that exist (made by the delivery webhook for a Job or Pod, deleted when it ends), by namespace and the kind they were made for.",
		[]string{"namespace", "kind"}, nil)
	certExpiryDesc = prometheus.NewDesc(CertificateExpiryName,
		"When the delivery webhook's serving certificate expires (Unix seconds).",
		nil, nil)
	scrapeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: StateScrapeErrorsName,
		Help: "Scrapes in which a state gauge could not be read (its series are then missing from that scrape), by gauge.",
	}, []string{"metric"})
)

// stateCollector reads the gauges of how things are from the Source at scrape time.
var stateCollector prometheus.Collector = collector{}

type collector struct{}

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{hostedSecretsDesc, leaderboardsDesc, rowsDesc, runSecretsDesc, certExpiryDesc} {
		ch <- d
	}
	scrapeErrors.Describe(ch)
}

func (collector) Collect(ch chan<- prometheus.Metric) {
	defer scrapeErrors.Collect(ch)
	s := source.Load()
	if s == nil {
		return
	}
	if s.Cache != nil {
		ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
		defer cancel()
		collectObjects(ctx, s.Cache, ch)
	}
	if s.Certificate != nil {
		collectCertificate(s.Certificate, ch)
	}
}

// key is one series of a gauge: its label values.
type key [4]string

func emit(ch chan<- prometheus.Metric, d *prometheus.Desc, counts map[key]int, n int) {
	for k, v := range counts {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), k[:n]...)
	}
}

// Informers is the part of the manager's cache the gauges read.
type Informers interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// each calls fn with every object of obj's kind in the cache. It reads the informer's
// store, which hands out the cached objects themselves: a List, even without deep
// copies, copies each object's struct into the list (about 500 bytes a row, 50 MB a
// scrape at 100,000 rows). fn must not change them.
func each(ctx context.Context, inf Informers, obj client.Object, fn func(client.Object)) error {
	i, err := inf.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	s, ok := i.(interface{ GetStore() toolscache.Store })
	if !ok {
		return fmt.Errorf("the informer of %T has no store", obj)
	}
	for _, o := range s.GetStore().List() {
		if co, ok := o.(client.Object); ok {
			fn(co)
		}
	}
	return nil
}

// gauge counts the objects of one kind by label values and emits the counts.
type gauge struct {
	desc   *prometheus.Desc
	name   string
	obj    client.Object
	labels func(client.Object) (key, bool)
	n      int
}

// keyOf is a gauge's key of an object of type T (any other object has none).
func keyOf[T client.Object](f func(T) key) func(client.Object) (key, bool) {
	return func(o client.Object) (key, bool) {
		t, ok := o.(T)
		if !ok {
			return key{}, false
		}
		return f(t), true
	}
}

var gauges = []gauge{
	{hostedSecretsDesc, HostedSecretsName, &hubv1alpha1.HostedSecret{}, keyOf(func(hs *hubv1alpha1.HostedSecret) key {
		state := string(hs.Status.State)
		if state == "" {
			state = "pending"
		}
		ready, reason := condition(hs.Status.Conditions, hubv1alpha1.ConditionReady)
		return key{hs.Namespace, state, ready, reason}
	}), 4},
	{leaderboardsDesc, LeaderboardsName, &hubv1alpha1.Leaderboard{}, keyOf(func(lb *hubv1alpha1.Leaderboard) key {
		ready, reason := condition(lb.Status.Conditions, hubv1alpha1.ConditionReady)
		return key{lb.Namespace, ready, reason}
	}), 3},
	{rowsDesc, LeaderboardRowsName, &hubv1alpha1.LeaderboardRow{}, keyOf(func(r *hubv1alpha1.LeaderboardRow) key {
		valid, reason := condition(r.Status.Conditions, hubv1alpha1.ConditionValid)
		return key{r.Namespace, valid, reason}
	}), 3},
	// The cache holds Podium's own Secrets only (values and run Secrets); run Secrets
	// carry the kind they were made for.
	{runSecretsDesc, RunSecretsName, &corev1.Secret{}, func(o client.Object) (key, bool) {
		kind, ok := o.GetLabels()[hubv1alpha1.LabelRunFor]
		return key{o.GetNamespace(), kind}, ok
	}, 2},
}

func collectObjects(ctx context.Context, inf Informers, ch chan<- prometheus.Metric) {
	for _, g := range gauges {
		counts := map[key]int{}
		err := each(ctx, inf, g.obj, func(o client.Object) {
			if k, ok := g.labels(o); ok {
				counts[k]++
			}
		})
		if err != nil {
			scrapeErrors.WithLabelValues(g.name).Inc()
			continue
		}
		emit(ch, g.desc, counts, g.n)
	}
}

// condition returns a condition's status and reason; "Unknown" and "" when the
// controller has not set it yet. Reasons are the controllers' constants: a bounded set.
func condition(conds []metav1.Condition, typ string) (status, reason string) {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return string(metav1.ConditionUnknown), ""
	}
	return string(c.Status), c.Reason
}

func collectCertificate(get func() (*tls.Certificate, error), ch chan<- prometheus.Metric) {
	cert, err := get()
	if err != nil || cert == nil || len(cert.Certificate) == 0 {
		// No certificate yet (the operator is issuing it): no series, as for an unknown
		// expiry; the alert on it fires on absence too.
		return
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			scrapeErrors.WithLabelValues(CertificateExpiryName).Inc()
			return
		}
	}
	ch <- prometheus.MustNewConstMetric(certExpiryDesc, prometheus.GaugeValue, float64(leaf.NotAfter.Unix()))
}
