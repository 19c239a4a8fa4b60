package httpapi

import (
	"errors"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
)

// Request metrics, on controller-runtime's registry so the manager's metrics endpoint
// serves them. The route label is the ServeMux pattern ("POST /v1/leaderboard-read"),
// never the raw path, so that its cardinality stays bounded.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podium_http_requests_total",
		Help: "HTTP requests served by Podium's API, by route and status code.",
	}, []string{"route", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "podium_http_request_duration_seconds",
		Help:    "Latency of HTTP requests served by Podium's API, by route and status code.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"route", "code"})
)

func init() {
	metrics.Registry.MustRegister(requestsTotal, requestDuration)
}

// anonymous is the caller of every request without an Authorization header; shared,
// like every Caller in a request context, it is read-only.
var anonymous = &authn.Caller{Anonymous: true}

// routeUnmatched labels requests that matched no pattern (404/405).
const routeUnmatched = "unmatched"

// frame wraps the mux with what every request needs, in one handler so that each
// request derives its context once: panic recovery, the body limit, authentication,
// the envelope for unknown routes and wrong methods, metrics and the log line.
func (s *Server) frame(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		user := ""
		var req *http.Request
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler { //nolint:errorlint // sentinel compared as net/http does
					panic(p)
				}
				s.o.Log.Error(errors.New("panic"), "Handler panicked", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				if !sw.wroteHeader {
					apierr.Write(sw, apierr.Internal())
				}
			}
			stats := s.unmatched
			if req != nil && req.Pattern != "" {
				stats = s.routeStats(req.Pattern)
			}
			code := sw.status()
			elapsed := time.Since(start)
			cs := stats.code(code)
			cs.count.Inc()
			cs.duration.Observe(elapsed.Seconds())
			s.o.Log.Info("Request", "method", boxMethod(r.Method), "path", stats.boxPath(r.URL.Path),
				"status", boxCode(code), "duration", elapsed, "user", boxUser(user))
		}()

		// Without a Content-Length the body could be of any size; with one over the
		// limit it is; with one under it net/http reads no more than it says, and the
		// limit needs no reader of its own.
		if r.Body != nil && (r.ContentLength < 0 || r.ContentLength > s.o.MaxBodyBytes) {
			r.Body = http.MaxBytesReader(sw, r.Body, s.o.MaxBodyBytes)
		}
		caller := anonymous
		if r.Header.Get("Authorization") != "" {
			// Any Authorization header must be a valid bearer token: a client that
			// believes it signed in is never silently served as anonymous.
			token := authn.BearerToken(r)
			if token == "" || s.o.Reviewer == nil {
				apierr.Write(sw, apierr.Unauthenticated())
				return
			}
			c, err := s.o.Reviewer.Authenticate(r.Context(), token)
			switch {
			case errors.Is(err, authn.ErrInvalidToken):
				apierr.Write(sw, apierr.Unauthenticated())
				return
			case err != nil:
				s.o.Log.Error(err, "Authenticating a request failed", "method", r.Method, "path", r.URL.Path)
				apierr.Write(sw, apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the caller could not be authenticated now; try again"))
				return
			}
			caller = c
			user = c.User
		} else {
			user = anonymousUser
		}
		if caller == anonymous && s.bareBase.Load() {
			// authn.CallerFrom answers anonymous for a context without a caller, and
			// Start saw that the server's base context holds none: no copy of the
			// request for a context that would say the same.
			req = r
		} else {
			req = r.WithContext(authn.WithCaller(r.Context(), caller))
		}
		sw.req = req
		mux.ServeHTTP(sw, req)
	})
}

// statusWriter records the status code, and turns the ServeMux's plain-text 404 and
// 405 (no pattern matched) into the error envelope.
type statusWriter struct {
	http.ResponseWriter
	req         *http.Request
	code        int
	wroteHeader bool
	discard     bool // the mux's own text body is dropped after the envelope
}

func (w *statusWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	if w.req != nil && w.req.Pattern == "" && (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) {
		w.wroteHeader, w.code, w.discard = true, code, true
		h := w.Header()
		h.Del("X-Content-Type-Options")
		e := apierr.NotFound("no route for %s %s", w.req.Method, w.req.URL.Path)
		if code == http.StatusMethodNotAllowed {
			e = apierr.New(code, apierr.CodeMethodNotAllowed, "method %s is not allowed here; allowed: %s", w.req.Method, h.Get("Allow"))
		}
		apierr.Write(w.ResponseWriter, e)
		return
	}
	w.wroteHeader, w.code = true, code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.discard {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) status() int {
	if !w.wroteHeader {
		return http.StatusOK
	}
	return w.code
}

// Unwrap lets http.ResponseController reach the connection (flush, deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
