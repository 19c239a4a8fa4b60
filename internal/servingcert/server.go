package servingcert

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
)

// Server is the admission webhook's HTTPS server, a manager runnable on every replica.
// The admission handler limits request bodies itself (controller-runtime: 7 MiB).
type Server struct {
	// Addr is where to listen unless Listener is set (tests bind 127.0.0.1:0 themselves).
	Addr     string
	Listener net.Listener
	Handler  http.Handler
	// GetCertificate serves the certificate: the Rotator's or a file watcher's.
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	Log            logr.Logger
}

// NeedLeaderElection is false: every replica serves admission requests.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends, then shuts down gracefully.
func (s *Server) Start(ctx context.Context) error {
	ln := s.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.Addr); err != nil {
			return err
		}
	}
	srv := &http.Server{
		Handler:           s.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	tlsLn := tls.NewListener(ln, &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: s.GetCertificate,
		NextProtos:     []string{"http/1.1"},
	})
	s.Log.Info("Serving the admission webhook", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(tlsLn) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
