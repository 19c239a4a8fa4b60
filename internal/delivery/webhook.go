package delivery

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/metrics"
	"podium.dev/podium/internal/secretkind"
)

// WebhookPath is where the operator serves the mutating webhook of runs and templates.
const WebhookPath = "/mutate-podium-runs"

// JobControllerUser is the user kube-controller-manager's Job controller creates Pods
// as. The webhook configuration does not send its requests (matchConditions): its Pods
// carry what admission of their Job recorded in the template.
const JobControllerUser = "system:serviceaccount:kube-system:job-controller"

// ControllerManagerUser is who every controller of kube-controller-manager acts as when
// it runs without --use-service-account-credentials. Its requests are sent
// (matchConditions cannot tell its Job controller from its other controllers); a Pod it
// creates for a Job keeps what its template recorded.
const ControllerManagerUser = "system:kube-controller-manager"

// Injector is the admission handler. On create of a run (a Job or Pod) it records the
// requester, resolves what the run asks for, points the pod spec at a run Secret and
// writes that Secret once the run is stored as answered (afterAnswer); on create of a template kind (CronJob, Deployment, ReplicaSet,
// StatefulSet, DaemonSet, ReplicationController, PodTemplate) it records the requester
// on the template, for the runs its controller makes from it. On update it keeps what
// admission recorded, except that whoever changes a template kind's template becomes
// its requester.
type Injector struct {
	Resolver *Resolver
	// Client creates run Secrets and reads (cached) the runs they are written for.
	Client client.Client
	// MarkUsed records that secrets were delivered (status.lastUsedAt).
	MarkUsed func(context.Context, []*hubv1alpha1.HostedSecret) error
	Decoder  admission.Decoder
	Log      logr.Logger
	// RunsOf selects, in Client's (cached) reads, the runs given run Secret name: the
	// cache's field index (index.RunsOf).
	RunsOf func(name string) client.ListOption
}

var _ admission.Handler = &Injector{}

// run is the part of an object admission works on.
type run struct {
	kind string
	obj  runtime.Object
	meta *metav1.ObjectMeta
	// templates are the metadata of the object's templates, outermost first: a Job's
	// pod template; a CronJob's job template and its pod template; nil for a Pod.
	templates []*metav1.ObjectMeta
	// spec is the pod spec (nil for a ReplicationController without a template).
	spec *corev1.PodSpec
	// paths are where the parts lie in the object's JSON; before is what they held when
	// decoded (patch.go).
	paths  kindOf
	before decoded
}

func (in *Injector) decode(req admission.Request, raw runtime.RawExtension) (*run, error) {
	k, ok := workloadKinds[req.Resource]
	if !ok {
		return nil, nil
	}
	obj := k.new()
	if err := in.Decoder.DecodeRaw(raw, obj); err != nil {
		return nil, err
	}
	meta, templates, spec := k.parts(obj)
	return &run{kind: k.kind, obj: obj, meta: meta, templates: templates, spec: spec, paths: k}, nil
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
	controller := IsWorkloadController(requester)
	// A built-in controller copies what it creates from a template admission saw.
	if controller && (!isRun(r.kind) || (r.kind == KindPod && controlledByJob(r.meta)) || recordsDelivery(r.meta)) {
		return admission.Allowed("") // a Job's Pod, a Deployment's ReplicaSet: as the template made it
	}
	r.snapshot() // what the answer's patch is made against (patch.go)
	if controller {
		// A CronJob's Job, a ReplicaSet's or StatefulSet's Pod: a run of whoever
		// admission recorded on its template.
		requester = r.meta.Annotations[hubv1alpha1.AnnotationRequester]
		if requester == "" {
			r.forget()
			return patched(req, r, nil)
		}
	}
	r.forget()
	r.record(hubv1alpha1.AnnotationRequester, requester)
	if !isRun(r.kind) {
		return patched(req, r, askedTooHigh(r))
	}
	if !Asks(r.meta.Annotations) {
		return patched(req, r, nil)
	}
	ask := ParseRequest(r.meta.Annotations)
	if dryRun(req) {
		// Nothing is looked up: the answer is the same whoever the requester is and
		// whatever they hold (docs/secrets.md, "Dry runs").
		return patched(req, r, dryRunWarnings(in.Resolver.Config, ask))
	}
	plan, err := in.Resolver.Resolve(ctx, req.Namespace, requester, ask)
	if err != nil {
		in.Log.Error(err, "Resolving the secrets of a run failed", "kind", r.kind, "namespace", req.Namespace, "name", r.meta.Name)
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("podium could not look up the hosted secrets of this %s; try again", r.kind))
	}
	warnings := plan.Warnings
	var secret *corev1.Secret
	if len(plan.Delivered) > 0 {
		var more []string
		secret, more = in.deliver(req, r, requester, plan)
		warnings = append(warnings, more...)
	}
	in.afterAnswer(stored{kind: r.kind, namespace: req.Namespace, name: r.meta.Name, requester: requester, recorded: recorded(r.meta)}, secret, plan)
	return patched(req, r, warnings)
}

// deliver records on run r of requester what plan holds (the run Secret's name, the
// delivered lists, the env references and the imagePullSecret) and returns the run
// Secret to write once the run is stored (afterAnswer) and the warnings of env variables
// the spec sets itself.
func (in *Injector) deliver(req admission.Request, r *run, requester string, plan Plan) (*corev1.Secret, []string) {
	name := RunSecretName()
	secret := RunSecret(req.Namespace, name, r.kind, requester, plan)
	setMap(&r.meta.Labels, hubv1alpha1.LabelRunSecret, name)
	var warnings []string
	kv := []any{"kind", r.kind, "namespace", req.Namespace, "name", r.meta.Name, "requester", requester, "runSecret", name}
	for _, k := range secretkind.Kinds {
		if names := plan.NamesOf(k); len(names) > 0 {
			r.record(k.DeliveredAnnotation, strings.Join(names, ","))
			kv = append(kv, string(k.Type), names)
		}
	}
	for _, f := range secretkind.Forms {
		if keys := plan.Keys(f); len(keys) > 0 {
			warnings = append(warnings, forms[f].inject(r.spec, name, keys)...)
		}
	}
	in.Log.V(1).Info("Delivering hosted secrets once the run is stored", kv...)
	return secret, warnings
}

// afterAnswer does, once admission has answered and only once the run it answered is
// stored as answered (storedRun), what delivery does beyond the answer: writes the run
// Secret (nil when nothing was delivered), owned by the run, records when the delivered
// secrets were last used, and counts the delivery. An answer to a review of a run that is
// never stored (refused by a later admission step, or a review no apiserver sent) has no
// effect (docs/design/delivery.md, "When the run Secret is written").
func (in *Injector) afterAnswer(want stored, secret *corev1.Secret, plan Plan) {
	used := make([]*hubv1alpha1.HostedSecret, len(plan.Delivered))
	for i, d := range plan.Delivered {
		used[i] = d.Secret.DeepCopy() // MarkUsed writes its status; the answer still reads it
	}
	inBackground(func(ctx context.Context) {
		var obj client.Object
		if secret != nil {
			want.runSecret = secret.Name
			obj = storedRun(ctx, in.Client, in.RunsOf, want)
		} else {
			obj = storedByName(ctx, in.Resolver.API, want)
		}
		if obj == nil {
			in.Log.V(1).Info("A run admission answered was not stored as answered: nothing is written for it (refused after admission, or a review no apiserver sent; should the cache be that far behind, the run Secret controller reissues it)",
				"kind", want.kind, "namespace", want.namespace, "name", want.name)
			return
		}
		metrics.CountDelivery(plan.counts(), plan.Missed)
		if secret == nil {
			return
		}
		secret.OwnerReferences = []metav1.OwnerReference{RunOwnerRef(want.kind, obj)}
		createRunSecret(ctx, in.Client, in.Resolver.API, secret, in.Log)
		if err := in.MarkUsed(ctx, used); err != nil {
			// Delivery succeeded; only the bookkeeping did not.
			in.Log.Error(err, "Recording last use of delivered secrets failed", "namespace", want.namespace)
		}
	})
}

// update keeps what admission recorded at create: a client may not change the requester,
// the delivered list or the run Secret a run is linked to. Whoever changes a template
// kind's template (not a built-in controller) becomes its requester: the runs made from
// it from then on run what that user asked for, with that user's secrets.
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
	cur.snapshot() // what the answer's patch is made against (patch.go)
	cur.forget()
	if !isRun(cur.kind) && !IsWorkloadController(req.UserInfo.Username) && templateChanged(old, cur) {
		cur.record(hubv1alpha1.AnnotationRequester, req.UserInfo.Username)
		return patched(req, cur, askedTooHigh(cur))
	}
	for _, k := range recordedAnnotations {
		if v, ok := old.meta.Annotations[k]; ok {
			setMap(&cur.meta.Annotations, k, v)
		}
		for i, t := range cur.templates {
			if i >= len(old.templates) {
				break
			}
			if v, ok := old.templates[i].Annotations[k]; ok {
				setMap(&t.Annotations, k, v)
			}
		}
	}
	if v, ok := old.meta.Labels[hubv1alpha1.LabelRunSecret]; ok {
		setMap(&cur.meta.Labels, hubv1alpha1.LabelRunSecret, v)
	}
	return patched(req, cur, nil)
}

// recordsDelivery says whether m carries what admission records on a run it delivered
// into (copied from a Job's pod template onto its Pods).
func recordsDelivery(m *metav1.ObjectMeta) bool {
	return secretkind.AnyAnnotation(m.Annotations, secretkind.DeliveredAnnotations())
}

// askedTooHigh warns when a template kind asks for secrets on its own metadata, which
// its controller does not copy: the ask belongs on the template its runs copy.
func askedTooHigh(r *run) []string {
	if len(r.templates) == 0 || !Asks(r.meta.Annotations) || Asks(r.templates[0].Annotations) {
		return nil
	}
	where := "spec.template.metadata.annotations"
	if r.kind == KindCronJob {
		where = "spec.jobTemplate.metadata.annotations"
	}
	return []string{fmt.Sprintf("%s on a %s are read from %s, which its runs copy; on the %s itself they are ignored",
		strings.Join(secretkind.AskAnnotations(), " and "), r.kind, where, r.kind)}
}

func controlledByJob(m *metav1.ObjectMeta) bool {
	for _, o := range m.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.Kind == "Job" && strings.HasPrefix(o.APIVersion, "batch/") {
			return true
		}
	}
	return false
}

var recordedAnnotations = append([]string{hubv1alpha1.AnnotationRequester}, secretkind.DeliveredAnnotations()...)

// forget removes every recorded annotation and label a client may have supplied, on
// the object and its templates.
func (r *run) forget() {
	for _, m := range append([]*metav1.ObjectMeta{r.meta}, r.templates...) {
		for _, k := range recordedAnnotations {
			delete(m.Annotations, k)
		}
		// A template's runs must not look like the owner of a run Secret.
		delete(m.Labels, hubv1alpha1.LabelRunSecret)
	}
}

// record sets a recorded annotation on the object and its templates, so that what its
// controller makes from them carries it.
func (r *run) record(key, value string) {
	setMap(&r.meta.Annotations, key, value)
	for _, t := range r.templates {
		setMap(&t.Annotations, key, value)
	}
}

func setMap(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}

func dryRun(req admission.Request) bool { return req.DryRun != nil && *req.DryRun }
