package admissiongen

import (
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/delivery"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/secrets"
)

// Names the fragments spell, taken from their Go homes.
var (
	group        = hubv1alpha1.GroupVersion.Group
	runPrefix    = delivery.RunSecretPrefix
	grantPrefix  = secrets.GrantedPrefix
	runLabel     = hubv1alpha1.LabelRunSecret
	requesterKey = hubv1alpha1.AnnotationRequester
	// recordedKeys are the annotations admission records on a run; with runLabel they
	// mark it as delivered.
	recordedKeys = append([]string{hubv1alpha1.AnnotationRequester}, secretkind.DeliveredAnnotations()...)
	// askKeys are the annotations that ask for delivery, one per kind of hosted secret.
	askKeys = secretkind.AskAnnotations()
)

// envName is what an environment variable name is, as the run policies test a
// secretKeyRef's key.
const envName = "^[A-Za-z_][A-Za-z0-9_]*$"

// guards are the has() tests of path on o beyond the part every valid object has.
func guards(o, path, required string) []string {
	segs := strings.Split(path, ".")
	req := strings.Split(required, ".")
	n := 0
	for required != "" && n < len(segs) && n < len(req) && segs[n] == req[n] {
		n++
	}
	var g []string
	for i := n; i < len(segs); i++ {
		g = append(g, "has("+o+"."+strings.Join(segs[:i+1], ".")+")")
	}
	return g
}

// valueOr is o.path, or fallback when it is absent.
func valueOr(o, path, required, fallback string) string {
	g := guards(o, path, required)
	if len(g) == 0 {
		return o + "." + path
	}
	return "(" + strings.Join(g, " && ") + " ? " + o + "." + path + " : " + fallback + ")"
}

// listOf is [o.path], or [] when it is absent.
func listOf(o, path, required string) string {
	g := guards(o, path, required)
	if len(g) == 0 {
		return "[" + o + "." + path + "]"
	}
	return "(" + strings.Join(g, " && ") + " ? [" + o + "." + path + "] : [])"
}

// podSpecs is the pod spec of o in a list of at most one.
func podSpecs(kinds []Kind, res, o string) string {
	return byResource(kinds, res, func(k Kind) string { return listOf(o, k.Spec, k.Required) })
}

// podSpec is the pod spec of o, or fallback.
func podSpec(kinds []Kind, res, o, fallback string) string {
	return byResource(kinds, res, func(k Kind) string { return valueOr(o, k.Spec, k.Required, fallback) })
}

// templateMetas are the template metadata of o that can carry delivery marks, the pod
// template's first.
func templateMetas(kinds []Kind, res, o string) string {
	return byResource(kinds, res, func(k Kind) string {
		if len(k.Metas) == 0 {
			return "[]"
		}
		parts := make([]string, len(k.Metas))
		for i, m := range k.Metas {
			parts[i] = listOf(o, m, k.Required)
		}
		return strings.Join(parts, " + ")
	})
}

// unchanged is whether an update keeps what runs.
func unchanged(kinds []Kind, res string) string {
	return "request.operation == 'UPDATE' &&\n " + byResource(kinds, res, func(k Kind) string {
		return valueOr("object", k.Runs, k.Required, "null") + " == " + valueOr("oldObject", k.Runs, k.Required, "null")
	})
}

// marked is whether metadata m carries one of keys or the run Secret label.
func marked(m string, keys []string) string {
	return "(has(" + m + ".annotations) && " + quoted(keys) + ".exists(k, k in " + m + ".annotations)) ||\n (has(" +
		m + ".labels) && '" + runLabel + "' in " + m + ".labels)"
}

// containers are the containers of every sort of pod spec s.
func containers(s string) string {
	return "((has(" + s + ".containers) ? " + s + ".containers : []) + (has(" + s + ".initContainers) ? " + s +
		".initContainers : []) +\n (has(" + s + ".ephemeralContainers) ? " + s + ".ephemeralContainers : []))"
}

// serviceAccount is the ServiceAccount pod spec s runs as.
func serviceAccount(s string) string {
	return "has(" + s + ".serviceAccountName) && " + s + ".serviceAccountName != '' ? " + s + ".serviceAccountName :\n" +
		"has(" + s + ".serviceAccount) && " + s + ".serviceAccount != '' ? " + s + ".serviceAccount : 'default'"
}

// identity is the rule podium-run-identity's condition: the object runs as a
// ServiceAccount that stands for a Podium user (may create hostedsecrets or
// leaderboardrows in its namespace) other than the requester, and the update changes
// what runs.
func identity(kinds []Kind) string {
	user := func(resource string) string {
		return "authorizer.serviceAccount(request.namespace, sa).group('" + group + "')\n  .resource('" + resource +
			"').namespace(request.namespace).check('create').allowed()"
	}
	return "!(" + unchanged(kinds, "request.resource.resource") + ") &&\n[" +
		podSpec(kinds, "request.resource.resource", "object", "null") + "].exists(s, s != null && [\n  " +
		indent(2, serviceAccount("s")) + "\n].exists(sa, request.userInfo.username != 'system:serviceaccount:' + " +
		"request.namespace + ':' + sa && (\n  " + user("hostedsecrets") + " ||\n  " + user("leaderboardrows") + ")))"
}

// notController is the match condition that lets users other than controllers through.
func notController(users []string) string {
	return "!(request.userInfo.username in [\n  '" + strings.Join(users, "',\n  '") + "'])"
}

// indent indents every line of s but the first by n spaces.
func indent(n int, s string) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}
