// Package metrics defines Podium's domain metrics, registered with controller-runtime's
// registry so that the manager's /metrics endpoint serves them beside controller-runtime's
// own. docs/operations.md lists every metric, its labels and the alerts built on it.
//
// Every label is bounded: namespaces (organizations), condition statuses and reasons the
// controllers set (constants of api/v1alpha1), and the fixed sets below. No metric is
// labelled by an object name, a user, a board or a secret's name.
//
// Two kinds of metric live here. Counters and histograms of what happens (deliveries,
// admissions) are incremented where it happens. Gauges of how things are (hosted secrets
// by state, rows by validity, run Secrets, the webhook certificate) are read from the
// manager's cache at scrape time by one collector (state.go), so that they are always
// right and nothing has to keep them up to date.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
)

// Names of the metrics this package exports. The rule and dashboard tests check every
// name their queries use against the metrics the operator serves.
const (
	HostedSecretsName       = "podium_hostedsecrets"
	LeaderboardsName        = "podium_leaderboards"
	LeaderboardRowsName     = "podium_leaderboard_rows"
	RunSecretsName          = "podium_run_secrets"
	CertificateExpiryName   = "podium_webhook_certificate_expiration_timestamp_seconds"
	StateScrapeErrorsName   = "podium_state_scrape_errors_total"
	SecretsDeliveredName    = "podium_secrets_delivered_total"
	SecretsNotDeliveredName = "podium_secrets_not_delivered_total"
	AdmissionDurationName   = "podium_delivery_admission_duration_seconds"
)

// Kinds of delivered secrets (label kind of podium_secrets_delivered_total): spec.type
// of every kind of secretkind.Kinds.
const (
	KindEnv      = string(hubv1alpha1.TypeEnv)
	KindRegistry = string(hubv1alpha1.TypeRegistry)
)

// NotDeliveredReason says why a name a run asked for was not delivered (label reason of
// podium_secrets_not_delivered_total). The set is fixed: these constants.
type NotDeliveredReason string

// The reasons a run does not get a secret it asked for (docs/secrets.md, "Delivery").
const (
	// NotDeliveredReserved: the name is reserved and never delivered.
	NotDeliveredReserved NotDeliveredReason = "reserved"
	// NotDeliveredOtherUsersJob: the job's secret of that name was stored by another user.
	NotDeliveredOtherUsersJob NotDeliveredReason = "job_secret_of_other_user"
	// NotDeliveredNoActiveSecret: the requester (and the job) have no active, usable
	// secret of that name: none stored, revoked, not granted, or its value missing.
	NotDeliveredNoActiveSecret NotDeliveredReason = "no_active_secret"
	// NotDeliveredNoRegistryCredential: the org has no active registry credential of
	// that name.
	NotDeliveredNoRegistryCredential NotDeliveredReason = "no_registry_credential"
	// NotDeliveredRegistryServerTaken: another credential of the run signs in to the
	// same registry server.
	NotDeliveredRegistryServerTaken NotDeliveredReason = "registry_server_taken"
)

// NotDeliveredReasons are every NotDeliveredReason, in a fixed order.
var NotDeliveredReasons = []NotDeliveredReason{
	NotDeliveredReserved, NotDeliveredOtherUsersJob, NotDeliveredNoActiveSecret,
	NotDeliveredNoRegistryCredential, NotDeliveredRegistryServerTaken,
}

// Results of an admission request of the delivery webhook (label result of
// podium_delivery_admission_duration_seconds).
const (
	// ResultAllowed: the Job or Pod was admitted (with or without secrets).
	ResultAllowed = "allowed"
	// ResultDenied: admission refused it (a 4xx, e.g. an object that does not decode).
	ResultDenied = "denied"
	// ResultErrored: the operator could not answer (a 5xx: the apiserver could not be
	// read, the run Secret could not be created). The webhook fails closed, so the Job
	// or Pod was not created.
	ResultErrored = "errored"
)

var (
	secretsDelivered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: SecretsDeliveredName,
		Help: "Hosted secrets delivered to runs (Jobs and Pods admitted, dry runs not counted), by kind: env (an environment variable) or registry (an image pull credential).",
	}, []string{"kind"})
	secretsNotDelivered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: SecretsNotDeliveredName,
		Help: "Names a run asked for and did not get (dry runs not counted), by reason.",
	}, []string{"reason"})
	admissionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    AdmissionDurationName,
		Help:    "Latency of the delivery webhook's admission of Jobs and Pods, by operation (CREATE, UPDATE) and result (allowed, denied, errored).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"operation", "result"})
)

func init() {
	for _, k := range secretkind.Kinds {
		secretsDelivered.WithLabelValues(string(k.Type))
	}
	for _, r := range NotDeliveredReasons {
		secretsNotDelivered.WithLabelValues(string(r))
	}
	metrics.Registry.MustRegister(secretsDelivered, secretsNotDelivered, admissionDuration, stateCollector)
}

// CountDelivery records what one admitted run got: the secrets delivered by kind
// (spec.type), and one reason per name it did not get.
func CountDelivery(delivered map[hubv1alpha1.SecretType]int, missed []NotDeliveredReason) {
	for t, n := range delivered {
		secretsDelivered.WithLabelValues(string(t)).Add(float64(n))
	}
	for _, r := range missed {
		secretsNotDelivered.WithLabelValues(string(r)).Inc()
	}
}
