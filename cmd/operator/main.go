// Command podium-operator runs Podium's controllers and its HTTP API.
package main

import (
	"flag"
	"io"
	"os"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"podium.dev/podium/internal/operator"
)

func main() {
	var o operator.Options
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", "Address of the metrics endpoint; \"0\" disables it.")
	flag.BoolVar(&o.MetricsSecure, "metrics-secure", true, "Serve the metrics over HTTPS to callers authenticated and authorized (get /metrics) by the apiserver; false serves plain HTTP to anyone.")
	flag.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "Directory with tls.crt and tls.key for the metrics endpoint; empty makes a self-signed certificate.")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address of the manager's health probes.")
	flag.BoolVar(&o.LeaderElection, "leader-elect", false, "Elect one replica to run the controllers; the HTTP API runs on every replica.")
	flag.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election lease (in cluster: the operator's own).")
	flag.StringVar(&o.HTTPAddr, "http-addr", envOr("PODIUM_HTTP_ADDR", ":8080"), "Address of Podium's HTTP API (env PODIUM_HTTP_ADDR).")
	flag.StringVar(&o.PreflightConfig, "preflight-config", "", "YAML file with the preflight provider table and reserved names (defaults built in).")
	zopts := zap.Options{}
	zopts.BindFlags(flag.CommandLine)
	flag.Parse() // --kubeconfig is registered by controller-runtime's config package
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
	log := ctrl.Log.WithName("setup")
	reqLog := requestLogger(zopts, os.Stderr)
	o.RequestLog = &reqLog

	mgr, err := operator.NewManager(ctrl.GetConfigOrDie(), o)
	if err != nil {
		log.Error(err, "Unable to set up the operator")
		os.Exit(1)
	}
	log.Info("Starting podium-operator", "httpAddr", o.HTTPAddr)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "Operator stopped with an error")
		os.Exit(1)
	}
}

// requestLogger is the HTTP server's logger. The issue asks for one line per request, and
// controller-runtime's production logger samples a message repeated over 100 times a
// second, so the request log is a JSON logger of its own without sampling, at the level
// the --zap-log-level flag gives (info by default).
func requestLogger(zopts zap.Options, w io.Writer) logr.Logger {
	enc := uberzap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.RFC3339TimeEncoder
	var level zapcore.LevelEnabler = zapcore.InfoLevel
	if zopts.Level != nil {
		level = zopts.Level
	}
	var encoder zapcore.Encoder = zapcore.NewJSONEncoder(enc)
	if zopts.Development {
		encoder = zapcore.NewConsoleEncoder(uberzap.NewDevelopmentEncoderConfig())
	}
	return zapr.NewLogger(uberzap.New(zapcore.NewCore(encoder, zapcore.Lock(zapcore.AddSync(w)), level)))
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
