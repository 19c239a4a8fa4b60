// Package health writes the conditions GitOps tools read to decide whether an object is
// healthy (the kstatus conventions of sigs.k8s.io/cli-utils, which Flux uses and Argo
// CD's model follows): Ready, and beside it Stalled when the object cannot become ready
// without a change from its author, or Reconciling while it waits for something that is
// expected to happen. Every condition carries the generation it describes, and the
// status it sits in carries observedGeneration. See docs/gitops.md.
package health

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Verdict is what an object's controller concluded about it.
type Verdict int

const (
	// Healthy: the object is ready.
	Healthy Verdict = iota
	// Waiting: the object is not ready yet and waits for something expected to happen
	// (another object to appear, a claim to go through). kstatus: InProgress.
	Waiting
	// Stalled: the object cannot become ready without a change from its author (or an
	// author of an object it depends on). kstatus: Failed.
	Stalled
)

// String names the verdict as the docs do.
func (v Verdict) String() string {
	switch v {
	case Healthy:
		return "Healthy"
	case Waiting:
		return "Waiting"
	case Stalled:
		return "Stalled"
	}
	return "Unknown"
}

// Set writes Ready (True only when v is Healthy), and Stalled or Reconciling (True,
// with the same reason and message) when v says so, on conds for generation gen. The
// condition that does not apply is removed rather than set False, as the conventions
// ask of these "abnormal-true" conditions, so a healthy object carries Ready alone.
// It reports whether anything changed.
func Set(conds *[]metav1.Condition, gen int64, v Verdict, reason, message string) bool {
	ready := metav1.ConditionFalse
	if v == Healthy {
		ready = metav1.ConditionTrue
	}
	changed := meta.SetStatusCondition(conds, metav1.Condition{
		Type: hubv1alpha1.ConditionReady, Status: ready, Reason: reason, Message: message, ObservedGeneration: gen,
	})
	for _, c := range []struct {
		typ string
		on  bool
	}{
		{hubv1alpha1.ConditionStalled, v == Stalled},
		{hubv1alpha1.ConditionReconciling, v == Waiting},
	} {
		if c.on {
			changed = meta.SetStatusCondition(conds, metav1.Condition{
				Type: c.typ, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: gen,
			}) || changed
		} else {
			changed = meta.RemoveStatusCondition(conds, c.typ) || changed
		}
	}
	return changed
}
