// Command podium-operator runs one of Podium's two workloads, chosen by --role
// (docs/deploy.md, "Components"): the operator (controllers, delivery webhook, secrets
// and API-key APIs) or the read tier (the public read, web pages and secrets preflight).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/types"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"podium.dev/podium/internal/operator"
)

// usageHeader opens --help: the two roles first, then the flags.
const usageHeader = `Usage: podium-operator [--role=operator|read] [flags]

One binary, two workloads (docs/deploy.md, "Components"):

  --role=operator (default)  controllers (leader-elected), the delivery webhook, the
                             secrets, registry-credentials and API-key APIs, the API-key
                             lookup of the read tier, metrics. Needs Secret rights.
  --role=read                the public read (JSON, GET, CSV, badge, history, row read,
                             /functions/v1/ aliases), the web pages and the secrets
                             preflight, from a cache of Podium's records only: no
                             Secret, no controller, no leader election; scale it out.

Flags marked [operator] or [read] apply to that role only.

`

func main() {
	var o operator.Options
	var role string
	flag.StringVar(&role, "role", string(operator.RoleOperator), "Which workload this process is: operator or read (see above).")
	flag.BoolVar(&o.PublicRead, "public-read", false, "[operator] Serve the public read and the web pages too (one process for everything); installs leave them to --role=read.")
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", "Address of the metrics endpoint; \"0\" disables it.")
	flag.BoolVar(&o.MetricsSecure, "metrics-secure", true, "Serve the metrics over HTTPS to callers authenticated and authorized (get /metrics) by the apiserver; false serves plain HTTP to anyone.")
	flag.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "Directory with tls.crt and tls.key for the metrics endpoint; empty makes a self-signed certificate.")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address of the manager's health probes.")
	flag.BoolVar(&o.LeaderElection, "leader-elect", false, "[operator] Elect one replica to run the controllers; the HTTP API runs on every replica.")
	flag.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election lease (in cluster: the operator's own).")
	flag.StringVar(&o.HTTPAddr, "http-addr", envOr("PODIUM_HTTP_ADDR", ":8080"), "Address of Podium's HTTP API (env PODIUM_HTTP_ADDR).")
	flag.StringVar(&o.PreflightConfig, "preflight-config", "", "YAML file with the preflight provider table and reserved names (defaults built in).")
	var certSecret, dnsNames string
	ns := operatorNamespace()
	flag.StringVar(&o.SecretValueNamespace, "secret-value-namespace", ns, "Namespace where the values of hosted secrets stored over HTTP live; only the operator may read it (default: the operator's own namespace).")
	flag.StringVar(&o.Delivery.WebhookAddr, "webhook-addr", "", "[operator] Address of the admission webhook that delivers hosted secrets to Jobs and Pods (HTTPS), e.g. :9443 (the Deployment's); \"\" (default) serves none.")
	flag.StringVar(&o.Delivery.CertDir, "webhook-cert-dir", "", "Directory with tls.crt and tls.key of the webhook (cert-manager); unset, the operator issues and rotates its own.")
	flag.StringVar(&certSecret, "webhook-cert-secret", ns+"/"+operator.DefaultCertSecretName, "namespace/name of the Secret holding the certificate the operator issues.")
	flag.StringVar(&dnsNames, "webhook-dns-names", "podium-webhook."+ns+".svc", "Comma-separated DNS names of the issued webhook certificate.")
	flag.StringVar(&o.Delivery.WebhookConfiguration, "webhook-configuration", operator.DefaultWebhookConfiguration, "MutatingWebhookConfiguration whose caBundle the operator keeps.")
	flag.DurationVar(&o.Delivery.RunSecretMaxAge, "run-secret-max-age", operator.DefaultRunSecretMaxAge, "A run Secret is deleted at this age even if its Job or Pod has not finished.")
	flag.DurationVar(&o.Delivery.RunSecretOrphanGrace, "run-secret-orphan-grace", operator.DefaultRunSecretOrphanGrace, "A run Secret no Job or Pod was created with is deleted after this long.")
	flag.StringVar(&o.AdmissionProbeNamespace, "admission-probe-namespace", ns, "Namespace of the server-side dry-run row create that readiness waits for (the apiserver admits rows through Podium's admission policies); \"\" skips the check.")
	flag.StringVar(&o.ReadTierUser, "read-service-account", "system:serviceaccount:"+ns+":podium-read", "[operator] User name of the read tier's ServiceAccount, the only caller answered API-key lookups; \"\" serves none.")
	flag.StringVar(&o.OperatorURL, "operator-url", "http://podium."+ns+".svc", "[read] The operator's HTTP API, where API keys and access tokens are looked up (the read tier cannot read their Secrets).")
	var fpSecret string
	flag.StringVar(&fpSecret, "fingerprint-key-secret", ns+"/podium-fingerprint-key", "namespace/name of the operator-only Secret holding the key of registry credential fingerprints (made on first use); \"\" turns /v1/registry-credentials off.")
	zopts := zap.Options{}
	zopts.BindFlags(flag.CommandLine)
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usageHeader)
		flag.PrintDefaults()
	}
	flag.Parse() // --kubeconfig is registered by controller-runtime's config package
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
	log := ctrl.Log.WithName("setup")
	o.Role = operator.Role(role)
	if err := complete(&o, certSecret, fpSecret, dnsNames); err != nil {
		log.Error(nil, err.Error())
		os.Exit(2)
	}
	reqLog, flushReqLog := bufferedRequestLogger(zopts, os.Stderr)
	o.RequestLog = &reqLog
	exit := func(code int) {
		flushReqLog() // writes out the request lines still buffered
		os.Exit(code)
	}

	mgr, err := operator.NewManager(ctrl.GetConfigOrDie(), o)
	if err != nil {
		log.Error(err, "Unable to set up the operator")
		exit(1)
	}
	log.Info("Starting podium-operator", "role", o.Role, "httpAddr", o.HTTPAddr)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "Operator stopped with an error")
		exit(1)
	}
	exit(0)
}

// complete fills the options that flags give as text: the webhook certificate Secret
// and the fingerprint key Secret (namespace/name; the latter may be "") and the DNS
// names (comma-separated). A malformed value is an error naming its flag.
func complete(o *operator.Options, certSecret, fpSecret, dnsNames string) error {
	switch o.Role {
	case operator.RoleOperator:
	case operator.RoleRead:
		// No leader election (every replica serves) and none of the operator's servers.
		o.LeaderElection, o.Delivery.WebhookAddr, o.AdmissionProbeNamespace = false, "", ""
	default:
		return fmt.Errorf("--role must be operator or read, not %q", o.Role)
	}
	sns, sname, ok := strings.Cut(certSecret, "/")
	if !ok || sns == "" || sname == "" {
		return fmt.Errorf("--webhook-cert-secret must be namespace/name, not %q", certSecret)
	}
	o.Delivery.CertSecret = types.NamespacedName{Namespace: sns, Name: sname}
	if fpSecret != "" {
		fns, fname, ok := strings.Cut(fpSecret, "/")
		if !ok || fns == "" || fname == "" {
			return fmt.Errorf("--fingerprint-key-secret must be namespace/name, not %q", fpSecret)
		}
		o.FingerprintKeySecret = types.NamespacedName{Namespace: fns, Name: fname}
	}
	for _, n := range strings.Split(dnsNames, ",") {
		if n = strings.TrimSpace(n); n != "" {
			o.Delivery.DNSNames = append(o.Delivery.DNSNames, n)
		}
	}
	return nil
}

// The request log is buffered: a write(2) a line, under the logger's lock, cost 10-13 µs
// a line from 32 goroutines, 6.5-7 µs buffered, against about 3 µs for the rest of a
// cached read (BenchmarkRequestLog; docs/design/performance-log.md, "Where the tail comes from"). Lines go out when the buffer fills, at least every requestLogFlush, and
// at exit; a process killed with SIGKILL loses at most the last second's lines.
const (
	requestLogBuffer = 256 << 10
	requestLogFlush  = time.Second
)

// bufferedRequestLogger is requestLogger writing to w through a buffer; stop writes out
// what is buffered and must run before the process exits.
func bufferedRequestLogger(zopts zap.Options, w io.Writer) (log logr.Logger, stop func()) {
	ws := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(w), Size: requestLogBuffer, FlushInterval: requestLogFlush}
	return requestLogger(zopts, ws), func() { _ = ws.Stop() }
}

// requestLogger is the HTTP server's logger. The issue asks for one line per request, and
// controller-runtime's production logger samples a message repeated over 100 times a
// second, so the request log is a JSON logger of its own without sampling, at the level
// the --zap-log-level flag gives (info by default).
func requestLogger(zopts zap.Options, w zapcore.WriteSyncer) logr.Logger {
	enc := uberzap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.RFC3339TimeEncoder
	var level zapcore.LevelEnabler = zapcore.InfoLevel
	if zopts.Level != nil {
		level = zopts.Level
	}
	encoder := zapcore.NewJSONEncoder(enc)
	if zopts.Development {
		encoder = zapcore.NewConsoleEncoder(uberzap.NewDevelopmentEncoderConfig())
	}
	return zapr.NewLogger(uberzap.New(zapcore.NewCore(encoder, zapcore.Lock(w), level)))
}

// operatorNamespace is the namespace the operator runs in: POD_NAMESPACE (the Deployment
// sets it), else its ServiceAccount's, else podium-system.
func operatorNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(b) > 0 {
		return strings.TrimSpace(string(b))
	}
	return "podium-system"
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
