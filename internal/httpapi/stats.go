package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// What every request records, made cheap: the metrics of each route and status code
// are looked up in the vectors once and kept (WithLabelValues hashes its labels and
// takes the vector's lock on every call), and the log line's values are boxed once
// where they repeat (a string or a number made into an interface value costs an
// allocation, and the line is written for every request).

// routeStats holds one route's metrics by status code, and its path boxed for the log.
type routeStats struct {
	route string
	path  string                         // the pattern's path when it has no wildcard, else ""
	boxed any                            // path as an interface value
	codes [500]atomic.Pointer[codeStats] // status codes 100-599
}

// codeStats are the metrics of one route and status code.
type codeStats struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

func newRouteStats(route string) *routeStats {
	rs := &routeStats{route: route}
	path := route
	if i := strings.IndexByte(path, ' '); i >= 0 {
		path = path[i+1:]
	}
	if strings.HasPrefix(path, "/") && !strings.ContainsAny(path, "{}") {
		rs.path, rs.boxed = path, path
	}
	return rs
}

func (rs *routeStats) code(code int) *codeStats {
	if code < 100 || code > 599 {
		return newCodeStats(rs.route, code)
	}
	p := &rs.codes[code-100]
	if c := p.Load(); c != nil {
		return c
	}
	p.CompareAndSwap(nil, newCodeStats(rs.route, code))
	return p.Load()
}

func newCodeStats(route string, code int) *codeStats {
	label := strconv.Itoa(code)
	return &codeStats{count: requestsTotal.WithLabelValues(route, label), duration: requestDuration.WithLabelValues(route, label)}
}

// boxPath is path as an interface value, without an allocation for the route's own path.
func (rs *routeStats) boxPath(path string) any {
	if rs.boxed != nil && path == rs.path {
		return rs.boxed
	}
	return path
}

// routeStats returns the stats of a ServeMux pattern.
func (s *Server) routeStats(pattern string) *routeStats {
	if rs := (*s.routes.Load())[pattern]; rs != nil {
		return rs
	}
	return newRouteStats(pattern) // not mounted through Handle: counted all the same
}

// addRoute makes the stats of a pattern (copy on write: requests read the map unlocked).
func (s *Server) addRoute(pattern string) {
	s.routesMu.Lock()
	defer s.routesMu.Unlock()
	old := *s.routes.Load()
	m := make(map[string]*routeStats, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[pattern] = newRouteStats(pattern)
	s.routes.Store(&m)
}

const anonymousUser = "system:anonymous"

var (
	boxedAnonymous any = anonymousUser
	boxedMethods       = map[string]any{}
	boxedCodes     [600]any
)

func init() {
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions} {
		boxedMethods[m] = m
	}
	for i := range boxedCodes {
		boxedCodes[i] = i
	}
}

func boxMethod(m string) any {
	if b, ok := boxedMethods[m]; ok {
		return b
	}
	return m
}

func boxCode(code int) any {
	if code >= 0 && code < len(boxedCodes) {
		return boxedCodes[code]
	}
	return code
}

func boxUser(user string) any {
	if user == anonymousUser {
		return boxedAnonymous
	}
	return user
}
