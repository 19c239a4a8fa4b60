package delivery

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/providers"
	"podium.dev/podium/internal/secretkind"
)

// Admission answers anyone who reaches the webhook's port: the AdmissionReview carries
// no proof that an apiserver sent it, nor that the run it describes will be stored (a
// later admission step may refuse it). So nothing happens for an answer until the run
// is in the apiserver as answered (docs/design/delivery.md, "When the run Secret is written").
// A create request carries no UID yet (the apiserver sets metadata.uid when it stores
// the object, after mutating admission), so the stored run is recognised by what
// admission put on it: its namespace, its name when the request had one, the run Secret
// name admission chose (a fresh random name, in the label hub.podium.dev/run-secret that
// no client may set or change), and the requester and delivered lists it recorded. The
// run Secret then names the stored run's UID as its controller owner.

// stored is what admission answered for a run: what the stored run must carry.
type stored struct {
	kind, namespace string
	// name is the run's name, "" when the request had none (generateName).
	name      string
	requester string
	// recorded are the delivered lists admission recorded (each kind's
	// DeliveredAnnotation), when it did.
	recorded map[string]string
	// runSecret is the run Secret name admission chose, "" when nothing was delivered.
	runSecret string
}

// recorded returns the delivered lists admission recorded on m.
func recorded(m *metav1.ObjectMeta) map[string]string {
	out := map[string]string{}
	for _, k := range secretkind.DeliveredAnnotations() {
		if v, ok := m.Annotations[k]; ok {
			out[k] = v
		}
	}
	return out
}

// matches says whether o is the run admission answered as want.
func (want stored) matches(o client.Object) bool {
	if o.GetNamespace() != want.namespace || o.GetDeletionTimestamp() != nil || (want.name != "" && o.GetName() != want.name) {
		return false
	}
	a := o.GetAnnotations()
	if a[hubv1alpha1.AnnotationRequester] != want.requester || o.GetLabels()[hubv1alpha1.LabelRunSecret] != want.runSecret || !Asks(a) {
		return false
	}
	for _, k := range secretkind.DeliveredAnnotations() {
		v, ok := a[k]
		w, wok := want.recorded[k]
		if ok != wok || v != w {
			return false
		}
	}
	return true
}

// storedRun waits until the run admission gave run Secret want.runSecret is in the cache
// c reads (its watch event: the run is stored), carrying what admission answered, at
// most ReissueAfter, and returns it; nil when it does not come (refused after admission
// answered, or a review no apiserver sent: nothing is written for it; or the cache is
// that far behind: the run Secret controller reissues it). Waiting for the store also
// means the run Secret's write does not share the apiserver with the run's own create,
// and the Secret is owned by its run from its first write.
func storedRun(ctx context.Context, c client.Reader, runsOf func(string) client.ListOption, want stored) client.Object {
	ctx, cancel := context.WithTimeout(ctx, ReissueAfter)
	defer cancel()
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		if o := storedOnce(ctx, c, runsOf, want); o != nil {
			return o
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
	}
}

func storedOnce(ctx context.Context, c client.Reader, runsOf func(string) client.ListOption, want stored) client.Object {
	var items []client.Object
	opts := []client.ListOption{client.InNamespace(want.namespace), runsOf(want.runSecret)}
	switch want.kind {
	case KindJob:
		list := &batchv1.JobList{}
		if c.List(ctx, list, opts...) != nil {
			return nil
		}
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
	case KindPod:
		list := &corev1.PodList{}
		if c.List(ctx, list, opts...) != nil {
			return nil
		}
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
	}
	if len(items) != 1 || !want.matches(items[0]) {
		return nil
	}
	return items[0]
}

// storedByName waits, like storedRun, for a run that was delivered nothing (it has no
// run Secret label, so the cache does not hold it): it reads the apiserver by name, at
// most six times in ReissueAfter (at once, then after 100 ms and three times longer each
// time: a run is stored within milliseconds of its answer, and a flood of forged reviews
// costs the apiserver six reads each), and returns the run when it carries what
// admission answered. A run
// without a name at admission (generateName) cannot be found this way: nil.
func storedByName(ctx context.Context, api client.Reader, want stored) client.Object {
	if want.name == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ReissueAfter)
	defer cancel()
	key := client.ObjectKey{Namespace: want.namespace, Name: want.name}
	for pause := 100 * time.Millisecond; ; pause = min(3*pause, 5*time.Second) {
		var o client.Object = &corev1.Pod{}
		if want.kind == KindJob {
			o = &batchv1.Job{}
		}
		if err := api.Get(ctx, key, o); err == nil && want.matches(o) {
			return o
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
	}
}

// dryRunWarnings are the warnings of a dry run: what the annotations alone say (names
// and job ids that cannot be used, reserved names), and that no hosted secret was looked
// up. Nothing in them depends on the requester or on what anyone holds.
func dryRunWarnings(cfg *providers.Config, ask Request) []string {
	warnings := append([]string(nil), ask.Warnings...)
	looked := false
	for _, name := range ask.Names {
		if cfg.IsReserved(name) {
			warnings = append(warnings, fmt.Sprintf("%s is reserved and never delivered%s", name, forModels(cfg, ask.Models, name)))
			continue
		}
		looked = true
	}
	if looked || len(ask.Registry) > 0 {
		warnings = append(warnings, "this is a dry run: no hosted secret was looked up, and no env variable or imagePullSecret was added; "+
			"the run created for real gets the secrets its requester holds, and warnings name the ones it does not get")
	}
	return warnings
}

// WriteRunSecret creates the run Secret want. A Secret of that name already there is
// kept only when it is exactly what want is (its type, data, Podium labels and
// annotations and controller owner: written by the operator a moment ago, by admission's
// write after its answer or by a reissue): anything else is deleted (UID precondition)
// and an error returned, so that the caller writes want again. The name prefix
// podium-run- is reserved to the operator by the admission policy
// podium-run-secret-writer (config/admission), so a Secret planted under a run Secret's
// name is refused at its create; this check keeps the operator from adopting one where
// that policy is missing.
func WriteRunSecret(ctx context.Context, c client.Client, api client.Reader, want *corev1.Secret) error {
	err := c.Create(ctx, want.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur := &corev1.Secret{}
	if err := api.Get(ctx, client.ObjectKeyFromObject(want), cur); err != nil {
		return err // NotFound: gone since; the next attempt creates it
	}
	if SameRunSecret(cur, want) {
		return nil
	}
	if err := c.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting Secret %s/%s, which stood under a run Secret's name and is not the operator's: %w", cur.Namespace, cur.Name, err)
	}
	return fmt.Errorf("secret %s/%s stood under a run Secret's name and was not the operator's; it was deleted, the run Secret is written again", cur.Namespace, cur.Name)
}

// SameRunSecret says whether Secret s is the run Secret want: same type, data, Podium
// labels and annotations, and controller owner.
func SameRunSecret(s, want *corev1.Secret) bool {
	for _, k := range []string{hubv1alpha1.LabelManagedBy, hubv1alpha1.LabelRunFor} {
		if s.Labels[k] != want.Labels[k] {
			return false
		}
	}
	for _, k := range []string{hubv1alpha1.AnnotationRequester, hubv1alpha1.AnnotationRunHostedSecrets} {
		if s.Annotations[k] != want.Annotations[k] {
			return false
		}
	}
	return s.Type == want.Type && controllerOf(s) == controllerOf(want) && maps.EqualFunc(s.Data, want.Data, bytes.Equal)
}

func controllerOf(s *corev1.Secret) types.UID {
	for _, o := range s.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return o.UID
		}
	}
	return ""
}
