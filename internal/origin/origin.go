// Package origin is Podium's one origin in front of its two workloads
// (docs/deploy.md, "Components"): which paths the operator serves and which the read
// tier does, and a reverse proxy that sends each request to its own. make dev serves it
// on its one local address; the chart's Ingress and HTTPRoute route the same table.
package origin

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"

	"podium.dev/podium/internal/accesstoken"
)

// OperatorPaths are the paths, under /v1/ and /functions/v1/, that the operator serves:
// the secrets, registry-credentials and API-key APIs. Every other path (the public read,
// its CSV, badges and history, the row read, the web pages and their assets, the secrets
// preflight, /healthz and /readyz) is the read tier's; /internal/ is served to neither.
var OperatorPaths = []string{"secrets", "registry-credentials", "api-keys", "api-key-exchange"}

// JWKSPath is where the operator publishes the public keys that verify its access tokens
// (docs/api-keys.md); the read tier fetches them from the operator, and clients of the one
// origin are sent there too.
const JWKSPath = accesstoken.JWKSPath

// ToOperator says whether a request for path goes to the operator.
func ToOperator(path string) bool {
	if path == JWKSPath {
		return true
	}
	for _, prefix := range []string{"/v1/", "/functions/v1/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok && slices.Contains(OperatorPaths, rest) {
			return true
		}
	}
	return false
}

// NewRouter is a reverse proxy sending each request to the operator or to the read tier
// by its path. /internal/ (the operator's key lookup for the read tier) is answered 404
// here, never forwarded.
func NewRouter(operator, read *url.URL) http.Handler {
	op, rd := httputil.NewSingleHostReverseProxy(operator), httputil.NewSingleHostReverseProxy(read)
	for name, p := range map[string]*httputil.ReverseProxy{"the operator": op, "the read tier": rd} {
		p.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, `{"error":{"code":"unavailable","message":%q}}`+"\n", name+" is not answering ("+err.Error()+")")
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/internal/"):
			http.NotFound(w, r)
		case ToOperator(r.URL.Path):
			op.ServeHTTP(w, r)
		default:
			rd.ServeHTTP(w, r)
		}
	})
}
