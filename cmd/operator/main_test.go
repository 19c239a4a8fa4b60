package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// The issue asks for one log line per request: the request logger must not sample a
// message repeated many times a second, as controller-runtime's production logger does.
func TestRequestLoggerKeepsEveryLine(t *testing.T) {
	var buf bytes.Buffer
	log := requestLogger(zap.Options{}, &buf)
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
	requestLogger(lvl, &buf).Info("Request")
	if buf.Len() != 0 {
		t.Fatalf("an info line was written at error level: %q", buf.String())
	}
}
