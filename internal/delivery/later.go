package delivery

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Admission answers a run without writing anything: its run Secret (and the last-use
// bookkeeping and metrics of every run) is written in the background once the run is
// stored as admission answered it (stored.go), owned by the run (docs/design/delivery.md, "When
// the run Secret is written"). A Job's Pods are made by its controller after that, so
// they find it there; a bare Pod may be bound first, and its kubelet retries until the
// Secret is there. Should the background write not happen (the operator stopped between
// the two), the run Secret controller writes it again from what admission recorded on
// the run (Reissue).

// laterBackoff retries a background write that failed for a moment (apiserver busy or
// restarting): about 30 s in all.
var laterBackoff = wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 9, Cap: 10 * time.Second}

// inBackground runs f, a write admission left for after its answer, with its own
// deadline (the admission request's context ends with the answer). Nothing waits for
// it: should the operator stop first, Reissue covers the run Secret.
func inBackground(f func(ctx context.Context)) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		f(ctx)
	}()
}

// RunOwnerRef is the reference that makes run, of kind (KindJob or KindPod), its run
// Secret's controller, so that deleting the run deletes the Secret (garbage collection).
func RunOwnerRef(kind string, run client.Object) metav1.OwnerReference {
	apiVersion := "v1"
	if kind == KindJob {
		apiVersion = batchv1.SchemeGroupVersion.String()
	}
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: run.GetName(), UID: run.GetUID(), Controller: ptr.To(true)}
}

// createRunSecret writes run Secret s (WriteRunSecret), retrying while the apiserver
// fails or a Secret that is not the operator's stood under its name.
func createRunSecret(ctx context.Context, c client.Client, api client.Reader, s *corev1.Secret, log logr.Logger) {
	err := retry.OnError(laterBackoff, func(error) bool { return ctx.Err() == nil }, func() error {
		return WriteRunSecret(ctx, c, api, s)
	})
	if err != nil {
		// The run Secret controller reissues it (Reissue).
		log.Error(err, "Creating a run Secret after admission failed", "namespace", s.Namespace, "runSecret", s.Name)
	}
}

// ReissueWindow is how long after a run's creation its run Secret, when missing, is
// written again from what admission recorded; later, a missing run Secret is one the
// operator deleted (the run finished, or reached its maximum age) or an administrator
// did.
const ReissueWindow = 10 * time.Minute

// ReissueAfter is how long the run Secret controller leaves admission's own background
// write to happen before it reissues a missing run Secret.
const ReissueAfter = 10 * time.Second

// Reissue resolves again, for the requester admission recorded on run (a Job or a Pod,
// kind), the secrets admission delivered to it (each kind's DeliveredAnnotation:
// hub.podium.dev/delivered, hub.podium.dev/delivered-registry-credentials; never
// more), and returns its run Secret, named by the label admission set and owned by run;
// nil when none of them is still deliverable (revoked, purged, deleted since) or the run
// carries no delivery record.
func (r *Resolver) Reissue(ctx context.Context, kind string, run client.Object) (*corev1.Secret, error) {
	labels, annotations := run.GetLabels(), run.GetAnnotations()
	name := labels[hubv1alpha1.LabelRunSecret]
	requester := annotations[hubv1alpha1.AnnotationRequester]
	if name == "" || requester == "" || !recordsDelivery(&metav1.ObjectMeta{Annotations: annotations}) {
		return nil, nil
	}
	plan, err := r.Resolve(ctx, run.GetNamespace(), requester, ParseRequest(annotations))
	if err != nil {
		return nil, err
	}
	plan.Delivered = slices.DeleteFunc(plan.Delivered, func(d Delivery) bool {
		k := d.kind()
		return !slices.Contains(recordedList(annotations[k.DeliveredAnnotation]), k.Name(&d.Secret.Spec))
	})
	if len(plan.Delivered) == 0 {
		return nil, nil
	}
	s := RunSecret(run.GetNamespace(), name, kind, requester, plan)
	s.OwnerReferences = []metav1.OwnerReference{RunOwnerRef(kind, run)}
	return s, nil
}

func recordedList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
