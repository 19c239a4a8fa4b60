package apikeys

import "strings"

// Keys of TokenReview's user.extra that name the object a bound ServiceAccount token is
// bound to (Kubernetes sets them for tokens bound to a Pod, and a Pod's token names its
// Node too), and the one that names the credential itself, which binds nothing.
const (
	extraDomain       = "authentication.kubernetes.io/"
	extraCredentialID = extraDomain + "credential-id"
)

var boundExtra = []struct{ key, kind string }{
	{extraDomain + "pod-name", "a Pod"},
	{extraDomain + "pod-uid", "a Pod"},
	{extraDomain + "node-name", "a Node"},
	{extraDomain + "node-uid", "a Node"},
}

// boundTo names what a token of this identity is bound to ("a Pod", "a Node", "an
// object"), or "" when it is bound to nothing TokenReview names: any other key of
// Kubernetes' own extra domain than the credential id is taken as a binding too, so that
// a binding Kubernetes adds later is refused rather than outlived.
func boundTo(extra map[string][]string) string {
	for _, b := range boundExtra {
		if len(extra[b.key]) > 0 {
			return b.kind
		}
	}
	for k := range extra {
		if strings.HasPrefix(k, extraDomain) && k != extraCredentialID {
			return "an object"
		}
	}
	return ""
}
