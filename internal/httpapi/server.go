package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
)

// Defaults of Options.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultShutdownTimeout   = 10 * time.Second
	// DefaultMaxBodyBytes is far above any legitimate request (a hosted secret value is
	// at most 64 KiB) and small enough that a client cannot make the server buffer much.
	DefaultMaxBodyBytes int64 = 1 << 20
)

// Options configure a Server. Zero durations and sizes take the defaults above.
type Options struct {
	// Addr is the TCP address to listen on, e.g. ":8080". Ignored when Listener is set.
	Addr string
	// Listener, when set, is served instead of listening on Addr. Tests pass a listener
	// bound to 127.0.0.1:0 so they know the address before the server starts.
	Listener net.Listener

	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	ShutdownTimeout   time.Duration
	MaxBodyBytes      int64

	// Reviewer authenticates bearer tokens. Without one every request carrying an
	// Authorization header is refused with 401.
	Reviewer authn.Reviewer
	// WaitForSync blocks until the caches the handlers read have synced and reports
	// whether they did (the manager cache's WaitForCacheSync); nil means nothing to wait for.
	WaitForSync func(ctx context.Context) bool
	// Ready are further readiness checks, all of which must pass for /readyz to be 200
	// (e.g. the ranking index has applied its initial lists).
	Ready []func() bool
	// Log receives one line per request and the server's own messages.
	Log logr.Logger
}

// Server is Podium's HTTP server, a controller-runtime manager.Runnable that runs on
// every replica: it reads only informer caches, so read capacity grows with replicas.
type Server struct {
	o        Options
	mux      *http.ServeMux
	handler  http.Handler
	synced   atomic.Bool
	mu       sync.Mutex
	addr     net.Addr
	bound    chan struct{}
	boundSet sync.Once

	// routes holds the metrics of each mounted pattern; unmatched those of requests
	// no pattern matched.
	routes    atomic.Pointer[map[string]*routeStats]
	routesMu  sync.Mutex
	unmatched *routeStats
	// bareBase: Start's context holds no caller, so neither does a request's until
	// the server puts one there.
	bareBase atomic.Bool
}

// orDefault sets an option that is not positive (unset) to its default.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// New returns a server with /healthz and /readyz mounted; mount the API with Handle
// before Start.
func New(o Options) *Server {
	orDefault(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	orDefault(&o.ReadTimeout, DefaultReadTimeout)
	orDefault(&o.WriteTimeout, DefaultWriteTimeout)
	orDefault(&o.IdleTimeout, DefaultIdleTimeout)
	orDefault(&o.ShutdownTimeout, DefaultShutdownTimeout)
	orDefault(&o.MaxBodyBytes, DefaultMaxBodyBytes)
	s := &Server{o: o, mux: http.NewServeMux(), bound: make(chan struct{}), unmatched: newRouteStats(routeUnmatched)}
	s.routes.Store(&map[string]*routeStats{})
	s.handler = s.frame(s.mux)
	s.Handle("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeText(w, http.StatusOK, "ok") }))
	s.Handle("GET /readyz", http.HandlerFunc(s.readyz))
	return s
}

// Handle mounts h at a ServeMux pattern such as "POST /v1/secrets". Handlers get the
// caller with authn.CallerFrom(r.Context()) and write errors with apierr.Write. A
// pattern under /v1/ is served under /functions/v1/ too (FunctionsPattern), by the
// same handler: Harbor's clients build "<base>/functions/v1/<name>".
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	s.addRoute(pattern)
	if alias, ok := FunctionsPattern(pattern); ok {
		s.mux.Handle(alias, h)
		s.addRoute(alias)
	}
}

// FunctionsPrefix is where Harbor's clients look for the service's functions
// (docs/http-api.md, "Harbor compatibility").
const FunctionsPrefix = "/functions"

// FunctionsPattern returns the /functions/v1/ twin of a ServeMux pattern whose path is
// under /v1/ ("POST /v1/secrets" -> "POST /functions/v1/secrets"); ok is false for
// any other pattern.
func FunctionsPattern(pattern string) (string, bool) {
	method, path, hasMethod := strings.Cut(pattern, " ")
	if !hasMethod {
		method, path = "", pattern
	}
	if !strings.HasPrefix(path, "/v1/") {
		return "", false
	}
	if hasMethod {
		return method + " " + FunctionsPrefix + path, true
	}
	return FunctionsPrefix + path, true
}

// Handler is the whole server stack (authentication, logging, metrics, envelope for
// unknown routes) as an http.Handler, for tests that bring their own listener.
func (s *Server) Handler() http.Handler { return s.handler }

// NeedLeaderElection is false: every replica serves reads.
func (s *Server) NeedLeaderElection() bool { return false }

// Addr returns the address the server listens on, waiting until it is bound or ctx ends.
func (s *Server) Addr(ctx context.Context) (net.Addr, error) {
	select {
	case <-s.bound:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.addr, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Start serves until ctx ends, then shuts down gracefully: in-flight requests get up to
// ShutdownTimeout to finish.
func (s *Server) Start(ctx context.Context) error {
	ln := s.o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.o.Addr); err != nil {
			return fmt.Errorf("listening on %s: %w", s.o.Addr, err)
		}
	}
	s.mu.Lock()
	s.addr = ln.Addr()
	s.mu.Unlock()
	s.bareBase.Store(reflect.DeepEqual(*authn.CallerFrom(ctx), *anonymous))
	s.boundSet.Do(func() { close(s.bound) })

	go func() {
		if s.o.WaitForSync == nil || s.o.WaitForSync(ctx) {
			s.synced.Store(true)
		}
	}()

	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.o.ReadHeaderTimeout,
		ReadTimeout:       s.o.ReadTimeout,
		WriteTimeout:      s.o.WriteTimeout,
		IdleTimeout:       s.o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.o.Log.Info("Serving the HTTP API", "addr", ln.Addr().String())

	select {
	case err := <-errc:
		return fmt.Errorf("serving the HTTP API: %w", err)
	case <-ctx.Done():
	}
	// The manager's context is already cancelled: shut down on a fresh one.
	sctx, cancel := context.WithTimeout(context.Background(), s.o.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("shutting down the HTTP API: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s.o.Log.Info("Stopped the HTTP API")
	return nil
}

// IsReady reports whether the caches have synced and every readiness check passes.
func (s *Server) IsReady() bool {
	if !s.synced.Load() {
		return false
	}
	for _, f := range s.o.Ready {
		if !f() {
			return false
		}
	}
	return true
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if !s.IsReady() {
		apierr.Write(w, apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "not ready yet: the caches, the rank index or the admission probe (docs/http-api.md)"))
		return
	}
	writeText(w, http.StatusOK, "ok")
}

func writeText(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
