// Package admissiongen writes the CEL of Podium's run admission policies
// (config/admission/run_isolation.yaml, run_integrity.yaml) and the delivery webhook's
// match conditions (config/webhook/manifests.yaml) from one source: each fragment
// (where a resource keeps its pod spec and template metadata, the Secrets a pod spec
// names, the delivery marks, the exempt controllers, the run and granted Secret
// prefixes, the identity condition) is a Go function here, with its names taken from
// api/v1alpha1, internal/delivery and internal/secrets, and every policy is expanded
// from the table Kinds. `make manifests` runs it (hack/admissiongen); `make verify-gen`
// fails on a stale or hand-edited copy.
package admissiongen

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is a resource that runs Pods or holds a pod template, with where its parts lie,
// as dotted paths from the object.
type Kind struct {
	// Group is the API group ("" for core), Resource the plural resource name, Kind the
	// name the policies' messages use.
	Group, Resource, Kind string
	// Subresources are the subresources the run policies match as well
	// (pods/ephemeralcontainers).
	Subresources []string
	// Runs is the part that says what runs: podium-run-integrity lets only the
	// requester change it, and an update that keeps it is not checked for identity again.
	Runs string
	// Spec is the pod spec.
	Spec string
	// Metas are the template metadata that can carry delivery marks, the pod template's
	// first (its requester wins).
	Metas []string
	// Required is the part of the paths above every valid object has, so it needs no
	// has() guard.
	Required string
	// Run says the object is itself a run (a Pod, a Job): it gets its own run Secret and
	// the recorded keys on its own metadata are guarded.
	Run bool
}

// Kinds are the resources admission sees. Adding a workload kind is one line here and
// `make manifests`: every run policy and the webhook's match conditions follow.
var Kinds = []Kind{
	{Group: "", Resource: "pods", Kind: "Pod", Subresources: []string{"ephemeralcontainers"}, Runs: "spec", Spec: "spec", Run: true},
	{Group: "", Resource: "podtemplates", Kind: "PodTemplate", Runs: "template", Spec: "template.spec", Metas: []string{"template.metadata"}},
	podTemplate("", "replicationcontrollers", "ReplicationController"),
	podTemplate("apps", "deployments", "Deployment"),
	podTemplate("apps", "replicasets", "ReplicaSet"),
	podTemplate("apps", "statefulsets", "StatefulSet"),
	podTemplate("apps", "daemonsets", "DaemonSet"),
	{Group: "batch", Resource: "jobs", Kind: "Job", Runs: "spec.template", Spec: "spec.template.spec", Metas: []string{"spec.template.metadata"}, Required: "spec", Run: true},
	{
		Group: "batch", Resource: "cronjobs", Kind: "CronJob", Runs: "spec.jobTemplate", Spec: "spec.jobTemplate.spec.template.spec",
		Metas: []string{"spec.jobTemplate.spec.template.metadata", "spec.jobTemplate.metadata"}, Required: "spec",
	},
}

// podTemplate is a kind whose pod template is spec.template.
func podTemplate(group, resource, kind string) Kind {
	return Kind{
		Group: group, Resource: resource, Kind: kind,
		Runs: "spec.template", Spec: "spec.template.spec", Metas: []string{"spec.template.metadata"}, Required: "spec",
	}
}

// shape is what a CEL branch on the resource depends on: kinds of one shape share it.
func (k Kind) shape() string {
	return strings.Join([]string{k.Runs, k.Spec, strings.Join(k.Metas, ","), k.Required}, "|")
}

// branch is the kinds of one shape, in table order.
type branch struct {
	kind      Kind
	resources []string
}

// branches groups kinds by shape in table order; the most common shape comes last,
// as the fallback (with no test on the resource).
func branches(kinds []Kind) []branch {
	var bs []branch
	for _, k := range kinds {
		i := slices.IndexFunc(bs, func(b branch) bool { return b.kind.shape() == k.shape() })
		if i < 0 {
			bs = append(bs, branch{kind: k})
			i = len(bs) - 1
		}
		bs[i].resources = append(bs[i].resources, k.Resource)
	}
	most := 0
	for i, b := range bs {
		if len(b.resources) > len(bs[most].resources) {
			most = i
		}
	}
	fallback := bs[most]
	return append(slices.Delete(bs, most, most+1), fallback)
}

// byResource is a CEL conditional on res (request.resource.resource or
// variables.res) with part(kind) for each shape of kinds, the most common last.
func byResource(kinds []Kind, res string, part func(Kind) string) string {
	bs := branches(kinds)
	var b strings.Builder
	b.WriteString("(")
	for _, br := range bs[:len(bs)-1] {
		test, p := resourceTest(res, br.resources), part(br.kind)
		if len(test)+len(p) > 100 {
			fmt.Fprintf(&b, "%s\n   ? %s :\n ", test, indent(3, p))
			continue
		}
		fmt.Fprintf(&b, "%s ? %s :\n ", test, p)
	}
	b.WriteString(part(bs[len(bs)-1].kind) + ")")
	return b.String()
}

// resourceTest is the CEL that res is one of resources.
func resourceTest(res string, resources []string) string {
	if len(resources) == 1 {
		return res + " == '" + resources[0] + "'"
	}
	return res + " in " + quoted(resources)
}

// quoted is a CEL list of strings.
func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "'" + s + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// runs are the resources that are runs (Pods, Jobs).
func runs(kinds []Kind) []string {
	var rs []string
	for _, k := range kinds {
		if k.Run {
			rs = append(rs, k.Resource)
		}
	}
	return rs
}
