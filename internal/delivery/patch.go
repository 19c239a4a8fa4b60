package delivery

import (
	"encoding/json"
	"maps"
	"net/http"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// decoded is what a run held when it was decoded: what its answer's patch is made
// against.
type decoded struct {
	labels, annotations []map[string]string // the object's, then each template's
	spec                *corev1.PodSpec
}

// snapshot records what r holds now: create and update call it on the run they answer
// with a patch, before changing it.
func (r *run) snapshot() {
	r.before.labels = []map[string]string{maps.Clone(r.meta.Labels)}
	r.before.annotations = []map[string]string{maps.Clone(r.meta.Annotations)}
	for _, t := range r.templates {
		r.before.labels = append(r.before.labels, maps.Clone(t.Labels))
		r.before.annotations = append(r.before.annotations, maps.Clone(t.Annotations))
	}
	if r.spec != nil {
		r.before.spec = r.spec.DeepCopy()
	}
}

// patchOps is the JSON patch of what admission changed on r since it was decoded, made
// of whole members added at their place (RFC 6902: an add replaces a member that is
// there): the object's labels and annotations, a template's metadata, and in the pod
// spec the containers, init containers (env) and imagePullSecrets. That is all admission
// changes (forget, record, InjectEnv, InjectPullSecret). ok is false when anything else
// of the pod spec differs, or r was never snapshot: the caller then diffs the whole
// object instead.
func (r *run) patchOps() (ops []jsonpatch.JsonPatchOperation, ok bool) {
	if r.before.labels == nil {
		return nil, false // never snapshot: nothing to compare with, so the diff
	}
	if !maps.Equal(r.before.labels[0], r.meta.Labels) {
		ops = append(ops, jsonpatch.NewOperation("add", "/metadata/labels", r.meta.Labels))
	}
	if !maps.Equal(r.before.annotations[0], r.meta.Annotations) {
		ops = append(ops, jsonpatch.NewOperation("add", "/metadata/annotations", r.meta.Annotations))
	}
	for i, t := range r.templates {
		if !maps.Equal(r.before.labels[i+1], t.Labels) || !maps.Equal(r.before.annotations[i+1], t.Annotations) {
			ops = append(ops, jsonpatch.NewOperation("add", r.paths.templatePaths[i], t))
		}
	}
	if r.spec == nil {
		return ops, true
	}
	was, is := r.before.spec, r.spec
	rest := is.DeepCopy()
	rest.Containers, rest.InitContainers, rest.ImagePullSecrets = was.Containers, was.InitContainers, was.ImagePullSecrets
	if !equality.Semantic.DeepEqual(rest, was) {
		return nil, false
	}
	if !equality.Semantic.DeepEqual(was.Containers, is.Containers) {
		ops = append(ops, jsonpatch.NewOperation("add", r.paths.specPath+"/containers", is.Containers))
	}
	if !equality.Semantic.DeepEqual(was.InitContainers, is.InitContainers) {
		ops = append(ops, jsonpatch.NewOperation("add", r.paths.specPath+"/initContainers", is.InitContainers))
	}
	if !equality.Semantic.DeepEqual(was.ImagePullSecrets, is.ImagePullSecrets) {
		ops = append(ops, jsonpatch.NewOperation("add", r.paths.specPath+"/imagePullSecrets", is.ImagePullSecrets))
	}
	return ops, true
}

// patched answers req with r as admission left it, and warnings. The patch is patchOps
// (about half the handler's time went into diffing two encodings of the whole object:
// docs/performance.md), or that diff when the spec changed elsewhere.
func patched(req admission.Request, r *run, warnings []string) admission.Response {
	ops, ok := r.patchOps()
	if !ok {
		out, err := json.Marshal(r.obj)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		return admission.PatchResponseFromRaw(req.Object.Raw, out).WithWarnings(warnings...)
	}
	resp := admission.Response{Patches: ops, AdmissionResponse: admissionv1.AdmissionResponse{Allowed: true}}
	if len(ops) > 0 {
		pt := admissionv1.PatchTypeJSONPatch
		resp.PatchType = &pt
	}
	return resp.WithWarnings(warnings...)
}
