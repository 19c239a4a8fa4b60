package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"

	"podium.dev/podium/internal/operator"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// The issue asks for one log line per request: the request logger must not sample a
// message repeated many times a second, as controller-runtime's production logger does.
func TestRequestLoggerKeepsEveryLine(t *testing.T) {
	var buf bytes.Buffer
	log := requestLogger(zap.Options{}, zapcore.AddSync(&buf))
	const n = 1000
	for i := range n {
		log.Info("Request", "method", "POST", "path", "/v1/leaderboard-read", "status", 200, "i", i)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != n {
		t.Fatalf("got %d log lines for %d requests", len(lines), n)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatalf("a request line is not JSON: %v", err)
	}
	if first["msg"] != "Request" || first["path"] != "/v1/leaderboard-read" {
		t.Errorf("unexpected line %v", first)
	}
}

func TestRequestLoggerHonoursTheLevel(t *testing.T) {
	var buf bytes.Buffer
	lvl := zap.Options{}
	zap.Level(zapcore.ErrorLevel)(&lvl)
	requestLogger(lvl, zapcore.AddSync(&buf)).Info("Request")
	if buf.Len() != 0 {
		t.Fatalf("an info line was written at error level: %q", buf.String())
	}
}

// The request log is buffered (a write per line halved the read's throughput): every
// line still reaches the output once the logger is stopped, as main does before it exits.
func TestBufferedRequestLoggerWritesEveryLineAtStop(t *testing.T) {
	var buf bytes.Buffer
	log, stop := bufferedRequestLogger(zap.Options{}, &buf)
	const n = 1000
	for i := range n {
		log.Info("Request", "method", "GET", "path", "/healthz", "status", 200, "i", i)
	}
	if got := strings.Count(buf.String(), "\n"); got == n {
		t.Fatalf("all %d lines were written before stop: the log is not buffered", n)
	}
	stop()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != n {
		t.Fatalf("got %d log lines for %d requests after stop", len(lines), n)
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[n-1]), &last); err != nil || last["i"] != float64(n-1) {
		t.Fatalf("the last line is %q (%v)", lines[n-1], err)
	}
}

// BenchmarkRequestLog is the request log's cost a line, from 32 goroutines, written to
// a file as the bench's stderr is: a write(2) a line (unbuffered, as before) against the
// buffered log main uses.
func BenchmarkRequestLog(b *testing.B) {
	for _, buffered := range []bool{false, true} {
		name := "unbuffered"
		if buffered {
			name = "buffered"
		}
		b.Run(name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "stderr"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			log, stop := requestLogger(zap.Options{}, zapcore.AddSync(f)), func() {}
			if buffered {
				log, stop = bufferedRequestLogger(zap.Options{}, f)
			}
			defer stop()
			b.SetParallelism(16) // 32 goroutines on 2 CPUs, as wrk's 32 connections
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					log.Info("Request", "method", "POST", "path", "/v1/leaderboard-read", "status", 200, "duration", 150*time.Microsecond, "user", "system:anonymous")
				}
			})
		})
	}
}

// The role is chosen by --role: the read role never leader-elects and serves neither
// the webhook nor the admission probe, whatever other flags say; an unknown role stops
// the process before it starts.
func TestCompleteRole(t *testing.T) {
	o := operator.Options{Role: operator.RoleRead, LeaderElection: true, AdmissionProbeNamespace: "podium-system"}
	o.Delivery.WebhookAddr = ":9443"
	if err := complete(&o, "ns/cert", "", "a"); err != nil {
		t.Fatal(err)
	}
	if o.LeaderElection || o.Delivery.WebhookAddr != "" || o.AdmissionProbeNamespace != "" {
		t.Fatalf("the read role kept operator settings: %+v", o)
	}
	o = operator.Options{Role: operator.RoleOperator, LeaderElection: true}
	if err := complete(&o, "ns/cert", "", "a"); err != nil || !o.LeaderElection {
		t.Fatalf("the operator role: %v, leader election %v", err, o.LeaderElection)
	}
	o = operator.Options{Role: "reader"}
	if err := complete(&o, "ns/cert", "", "a"); err == nil || !strings.Contains(err.Error(), "--role must be operator or read") {
		t.Fatalf("an unknown role: %v", err)
	}
}

// --help names both roles before the flags.
func TestHelpNamesTheRoles(t *testing.T) {
	for _, want := range []string{"--role=operator (default)", "--role=read", "no\n                             Secret"} {
		if !strings.Contains(usageHeader, want) {
			t.Errorf("--help does not say %q", want)
		}
	}
}
