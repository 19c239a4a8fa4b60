package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/metrics"
)

// WebhookPath is where the operator serves the mutating webhook of Jobs and Pods.
const WebhookPath = "/mutate-podium-runs"

// JobControllerUser is the user kube-controller-manager's Job controller creates Pods
// as. The webhook configuration does not send its requests (matchConditions): its Pods
// carry what admission of their Job recorded in the template.
const JobControllerUser = "system:serviceaccount:kube-system:job-controller"

// ControllerManagerUser is who the Job controller creates Pods as when
// kube-controller-manager runs without --use-service-account-credentials. Its requests
// are sent (matchConditions cannot tell its Job controller from its other controllers);
// a Pod it creates for a Job keeps what its template recorded.
const ControllerManagerUser = "system:kube-controller-manager"

var (
	jobResource = metav1.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	podResource = metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// Injector is the admission handler: on create it records the requester, resolves what
// the run asks for, creates the run Secret and points the pod spec at it; on update it
// keeps what admission recorded.
type Injector struct {
	Resolver *Resolver
	// Client creates run Secrets.
	Client client.Client
	// MarkUsed records that secrets were delivered (status.lastUsedAt).
	MarkUsed func(context.Context, []*hubv1alpha1.HostedSecret) error
	Decoder  admission.Decoder
	Log      logr.Logger
}

var _ admission.Handler = &Injector{}

// run is the part of a Job or Pod admission works on.
type run struct {
	kind string
	obj  runtime.Object
	meta *metav1.ObjectMeta
	// template is the Job's pod template metadata (nil for a Pod).
	template *metav1.ObjectMeta
	spec     *corev1.PodSpec
}

func (in *Injector) decode(req admission.Request, raw runtime.RawExtension) (*run, error) {
	switch req.Resource {
	case jobResource:
		j := &batchv1.Job{}
		if err := in.Decoder.DecodeRaw(raw, j); err != nil {
			return nil, err
		}
		return &run{kind: KindJob, obj: j, meta: &j.ObjectMeta, template: &j.Spec.Template.ObjectMeta, spec: &j.Spec.Template.Spec}, nil
	case podResource:
		p := &corev1.Pod{}
		if err := in.Decoder.DecodeRaw(raw, p); err != nil {
			return nil, err
		}
		return &run{kind: KindPod, obj: p, meta: &p.ObjectMeta, spec: &p.Spec}, nil
	}
	return nil, nil
}

// Handle answers one admission request.
func (in *Injector) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.SubResource != "" {
		return admission.Allowed("")
	}
	switch req.Operation {
	case admissionv1.Create:
		return in.create(ctx, req)
	case admissionv1.Update:
		return in.update(req)
	}
	return admission.Allowed("")
}

func (in *Injector) create(ctx context.Context, req admission.Request) admission.Response {
	r, err := in.decode(req, req.Object)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if r == nil {
		return admission.Allowed("")
	}
	requester := req.UserInfo.Username
	if r.kind == KindPod && (requester == JobControllerUser || requester == ControllerManagerUser) && controlledByJob(r.meta) {
		return admission.Allowed("") // a Job's Pod: its template carries what admission of the Job recorded
	}
	r.forget()
	r.record(hubv1alpha1.AnnotationRequester, requester)
	if !Asks(r.meta.Annotations) {
		return patched(req, r, nil)
	}
	plan, err := in.Resolver.Resolve(ctx, req.Namespace, requester, ParseRequest(r.meta.Annotations))
	if err != nil {
		in.Log.Error(err, "Resolving the secrets of a run failed", "kind", r.kind, "namespace", req.Namespace, "name", r.meta.Name)
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("podium could not look up the hosted secrets of this %s; try again", r.kind))
	}
	warnings := plan.Warnings
	if len(plan.Delivered)+len(plan.Pulls) > 0 {
		name := RunSecretName()
		if !dryRun(req) {
			if err := in.Client.Create(ctx, RunSecret(req.Namespace, name, r.kind, requester, plan)); err != nil {
				in.Log.Error(err, "Creating a run Secret failed", "kind", r.kind, "namespace", req.Namespace, "name", r.meta.Name)
				return admission.Errored(http.StatusInternalServerError, fmt.Errorf("podium could not create the run Secret of this %s; try again", r.kind))
			}
		}
		setMap(&r.meta.Labels, hubv1alpha1.LabelRunSecret, name)
		if len(plan.Delivered) > 0 {
			r.record(hubv1alpha1.AnnotationDelivered, strings.Join(plan.Names(), ","))
			warnings = append(warnings, InjectEnv(r.spec, name, plan.Names())...)
		}
		if len(plan.Pulls) > 0 {
			r.record(hubv1alpha1.AnnotationDeliveredRegistry, strings.Join(plan.RegistryNames(), ","))
			InjectPullSecret(r.spec, name)
		}
		if !dryRun(req) {
			all := plan.All()
			used := make([]*hubv1alpha1.HostedSecret, len(all))
			for i, d := range all {
				used[i] = d.Secret
			}
			if err := in.MarkUsed(ctx, used); err != nil {
				// Delivery succeeded; only the bookkeeping did not.
				in.Log.Error(err, "Recording last use of delivered secrets failed", "kind", r.kind, "namespace", req.Namespace)
			}
		}
		in.Log.V(1).Info("Delivered hosted secrets", "kind", r.kind, "namespace", req.Namespace, "name", r.meta.Name,
			"requester", requester, "runSecret", name, "envVars", plan.Names(), "registryCredentials", plan.RegistryNames())
	}
	if !dryRun(req) {
		metrics.CountDelivery(len(plan.Delivered), len(plan.Pulls), plan.Missed)
	}
	return patched(req, r, warnings)
}

// update keeps what admission recorded at create: a client may not change the requester,
// the delivered list or the run Secret a Job or Pod is linked to.
func (in *Injector) update(req admission.Request) admission.Response {
	cur, err := in.decode(req, req.Object)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	old, err := in.decode(req, req.OldObject)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if cur == nil || old == nil {
		return admission.Allowed("")
	}
	cur.forget()
	for _, k := range recordedAnnotations {
		if v, ok := old.meta.Annotations[k]; ok {
			setMap(&cur.meta.Annotations, k, v)
		}
		if cur.template != nil && old.template != nil {
			if v, ok := old.template.Annotations[k]; ok {
				setMap(&cur.template.Annotations, k, v)
			}
		}
	}
	if v, ok := old.meta.Labels[hubv1alpha1.LabelRunSecret]; ok {
		setMap(&cur.meta.Labels, hubv1alpha1.LabelRunSecret, v)
	}
	return patched(req, cur, nil)
}

func controlledByJob(m *metav1.ObjectMeta) bool {
	for _, o := range m.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.Kind == "Job" && strings.HasPrefix(o.APIVersion, "batch/") {
			return true
		}
	}
	return false
}

var recordedAnnotations = []string{hubv1alpha1.AnnotationRequester, hubv1alpha1.AnnotationDelivered, hubv1alpha1.AnnotationDeliveredRegistry}

// forget removes every recorded annotation and label a client may have supplied.
func (r *run) forget() {
	for _, k := range recordedAnnotations {
		delete(r.meta.Annotations, k)
		if r.template != nil {
			delete(r.template.Annotations, k)
		}
	}
	delete(r.meta.Labels, hubv1alpha1.LabelRunSecret)
	if r.template != nil {
		// Pods of a Job must not look like the owner of a run Secret.
		delete(r.template.Labels, hubv1alpha1.LabelRunSecret)
	}
}

// record sets a recorded annotation on the object and, for a Job, on its pod template,
// so that the Pods its controller creates carry it.
func (r *run) record(key, value string) {
	setMap(&r.meta.Annotations, key, value)
	if r.template != nil {
		setMap(&r.template.Annotations, key, value)
	}
}

func setMap(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}

func dryRun(req admission.Request) bool { return req.DryRun != nil && *req.DryRun }

func patched(req admission.Request, r *run, warnings []string) admission.Response {
	raw := req.Object.Raw
	out, err := json.Marshal(r.obj)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	resp := admission.PatchResponseFromRaw(raw, out)
	return resp.WithWarnings(warnings...)
}
