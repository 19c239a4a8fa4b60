package delivery

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// A Job's Pods are made by its controller after the Job is stored, and only they read its
// run Secret; so admission answers a Job without waiting for its run Secret's write, and
// writes it (and the last-use bookkeeping of every run) in the background once the Job
// is stored, owned by the Job (docs/secrets.md, "When the run Secret is written"). A Pod
// starts at once: its run Secret is written before its admission answers. Should the
// background write not happen (the operator stopped between the two), the run Secret
// controller writes it again from what admission recorded on the Job (Reissue).

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

// storedJob waits until the Job admission gave run Secret name is in the cache c reads
// (its watch event: the Job is stored), at most ReissueAfter, and returns it; nil when it
// does not come (refused after admission answered: no run Secret is written for it; or
// the cache is that far behind: Reissue writes it). Waiting for the store means the run
// Secret's write does not share the apiserver with the Job's own create, and the Secret
// is owned by its Job from its first write (no adoption write).
func storedJob(ctx context.Context, c client.Reader, runsOf func(string) client.ListOption, namespace, name string) *batchv1.Job {
	ctx, cancel := context.WithTimeout(ctx, ReissueAfter)
	defer cancel()
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		list := &batchv1.JobList{}
		if err := c.List(ctx, list, client.InNamespace(namespace), runsOf(name)); err == nil && len(list.Items) == 1 {
			return &list.Items[0]
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
	}
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

// createRunSecret creates s, retrying while the apiserver fails; a Secret of that name
// already there (written by Reissue) is success.
func createRunSecret(ctx context.Context, c client.Client, s *corev1.Secret, log logr.Logger) {
	err := retry.OnError(laterBackoff, func(err error) bool { return !apierrors.IsAlreadyExists(err) && ctx.Err() == nil }, func() error {
		err := c.Create(ctx, s.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		// The run Secret controller reissues it (Reissue).
		log.Error(err, "Creating a run Secret after admission failed", "namespace", s.Namespace, "runSecret", s.Name)
	}
}

// ReissueWindow is how long after a Job's creation its run Secret, when missing, is
// written again from what admission recorded; later, a missing run Secret is one the
// operator deleted (the run finished, or reached its maximum age) or an administrator
// did.
const ReissueWindow = 10 * time.Minute

// ReissueAfter is how long the run Secret controller leaves admission's own background
// write to happen before it reissues a missing run Secret.
const ReissueAfter = 10 * time.Second

// Reissue resolves again, for the requester admission recorded on job, the secrets
// admission delivered to it (hub.podium.dev/delivered and
// hub.podium.dev/delivered-registry-credentials: never more), and returns its run
// Secret, named by the label admission set; nil when none of them is still deliverable
// (revoked, purged, deleted since) or the Job carries no delivery record.
func (r *Resolver) Reissue(ctx context.Context, job *batchv1.Job) (*corev1.Secret, error) {
	name := job.Labels[hubv1alpha1.LabelRunSecret]
	requester := job.Annotations[hubv1alpha1.AnnotationRequester]
	if name == "" || requester == "" || !recordsDelivery(&job.ObjectMeta) {
		return nil, nil
	}
	plan, err := r.Resolve(ctx, job.Namespace, requester, ParseRequest(job.Annotations))
	if err != nil {
		return nil, err
	}
	env := recordedList(job.Annotations[hubv1alpha1.AnnotationDelivered])
	reg := recordedList(job.Annotations[hubv1alpha1.AnnotationDeliveredRegistry])
	plan.Delivered = slices.DeleteFunc(plan.Delivered, func(d Delivery) bool { return !slices.Contains(env, d.EnvVar) })
	plan.Pulls = slices.DeleteFunc(plan.Pulls, func(d Delivery) bool {
		return d.Secret.Spec.Registry == nil || !slices.Contains(reg, d.Secret.Spec.Registry.DisplayName)
	})
	if len(plan.Delivered)+len(plan.Pulls) == 0 {
		return nil, nil
	}
	return RunSecret(job.Namespace, name, KindJob, requester, plan), nil
}

func recordedList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
