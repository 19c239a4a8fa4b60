package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"podium.dev/podium/internal/origin"
)

// serveRouter serves origin.NewRouter (the secrets and API-key paths to the operator,
// every other path to the read tier, as the chart's Ingress does) on addr until ctx ends.
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
	srv := &http.Server{Handler: origin.NewRouter(ou, ru), ReadHeaderTimeout: 5 * time.Second}
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
