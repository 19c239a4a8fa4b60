package metrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Source is what the state gauges are read from at scrape time.
type Source struct {
	// Cache is the manager's cache (HostedSecrets, Leaderboards, LeaderboardRows and
	// Podium's own Secrets). Nil: the object gauges are not exported.
	Cache client.Reader
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

func collectObjects(ctx context.Context, c client.Reader, ch chan<- prometheus.Metric) {
	// The lists are read-only: the cache's objects are not copied.
	ro := client.UnsafeDisableDeepCopy

	hs := &hubv1alpha1.HostedSecretList{}
	if err := c.List(ctx, hs, ro); err != nil {
		scrapeErrors.WithLabelValues(HostedSecretsName).Inc()
	} else {
		counts := map[key]int{}
		for i := range hs.Items {
			o := &hs.Items[i]
			state := string(o.Status.State)
			if state == "" {
				state = "pending"
			}
			ready, reason := condition(o.Status.Conditions, hubv1alpha1.ConditionReady)
			counts[key{o.Namespace, state, ready, reason}]++
		}
		emit(ch, hostedSecretsDesc, counts, 4)
	}

	lbs := &hubv1alpha1.LeaderboardList{}
	if err := c.List(ctx, lbs, ro); err != nil {
		scrapeErrors.WithLabelValues(LeaderboardsName).Inc()
	} else {
		counts := map[key]int{}
		for i := range lbs.Items {
			o := &lbs.Items[i]
			ready, reason := condition(o.Status.Conditions, hubv1alpha1.ConditionReady)
			counts[key{o.Namespace, ready, reason}]++
		}
		emit(ch, leaderboardsDesc, counts, 3)
	}

	rows := &hubv1alpha1.LeaderboardRowList{}
	if err := c.List(ctx, rows, ro); err != nil {
		scrapeErrors.WithLabelValues(LeaderboardRowsName).Inc()
	} else {
		counts := map[key]int{}
		for i := range rows.Items {
			o := &rows.Items[i]
			valid, reason := condition(o.Status.Conditions, hubv1alpha1.ConditionValid)
			counts[key{o.Namespace, valid, reason}]++
		}
		emit(ch, rowsDesc, counts, 3)
	}

	runSecrets := &corev1.SecretList{}
	if err := c.List(ctx, runSecrets, ro, client.MatchingLabelsSelector{Selector: runSecretSelector}); err != nil {
		scrapeErrors.WithLabelValues(RunSecretsName).Inc()
	} else {
		counts := map[key]int{}
		for i := range runSecrets.Items {
			o := &runSecrets.Items[i]
			counts[key{o.Namespace, o.Labels[hubv1alpha1.LabelRunFor]}]++
		}
		emit(ch, runSecretsDesc, counts, 2)
	}
}

// runSecretSelector selects run Secrets among Podium's Secrets.
var runSecretSelector = func() labels.Selector {
	r, err := labels.NewRequirement(hubv1alpha1.LabelRunFor, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*r)
}()

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
