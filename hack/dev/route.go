package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// operatorPaths are the paths, under /v1/ and /functions/v1/, that the operator serves:
// the secrets, registry-credentials and API-key APIs. Every other path (the public read,
// its CSV, badges and history, the row read, the web pages and their assets, the secrets
// preflight, /healthz and /readyz) is the read tier's. An Ingress in front of the two
// Services routes the same way (docs/deploy.md, "One origin").
var operatorPaths = []string{"secrets", "registry-credentials", "api-keys", "api-key-exchange"}

// toOperator says whether a request for path goes to the operator.
func toOperator(path string) bool {
	for _, prefix := range []string{"/v1/", "/functions/v1/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok && slices.Contains(operatorPaths, rest) {
			return true
		}
	}
	return false
}

// newRouter is the one local address of make dev: a reverse proxy sending each request
// to the operator or to the read tier by its path, as the cluster's Ingress does.
func newRouter(operator, read *url.URL) http.Handler {
	op, rd := httputil.NewSingleHostReverseProxy(operator), httputil.NewSingleHostReverseProxy(read)
	for name, p := range map[string]*httputil.ReverseProxy{"the operator": op, "the read tier": rd} {
		p.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
			// Restarting (the supervisor starts it again): say so instead of a bare 502.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, `{"error":{"code":"unavailable","message":%q}}`+"\n", name+" is not answering ("+err.Error()+"); make dev restarts it")
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if toOperator(r.URL.Path) {
			op.ServeHTTP(w, r)
			return
		}
		rd.ServeHTTP(w, r)
	})
}

// serveRouter serves newRouter on addr until ctx ends.
func serveRouter(ctx context.Context, addr string, operator, read string) (<-chan error, error) {
	ou, err := url.Parse("http://" + operator)
	if err != nil {
		return nil, err
	}
	ru, err := url.Parse("http://" + read)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: newRouter(ou, ru), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(l)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			fmt.Fprintln(os.Stderr, "podium-dev: stopping the router:", err)
		}
	}()
	return done, nil
}
