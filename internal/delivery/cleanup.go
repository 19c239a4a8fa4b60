package delivery

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RunOwner is what the clean-up knows of a run Secret's Job or Pod.
type RunOwner struct {
	UID types.UID
	// Finished: a Job Complete or Failed, a Pod Succeeded or Failed.
	Finished bool
	// Started: the Job has created a Pod, the Pod is bound to a node (whose kubelet may
	// have read the Secret).
	Started bool
}

// JobOwner describes a Job for the clean-up.
func JobOwner(j *batchv1.Job) *RunOwner {
	o := &RunOwner{UID: j.UID}
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			o.Finished = true
		}
	}
	st := j.Status
	o.Started = st.Active+st.Succeeded+st.Failed > 0 || (st.Terminating != nil && *st.Terminating > 0) || o.Finished
	return o
}

// PodOwner describes a bare Pod for the clean-up.
func PodOwner(p *corev1.Pod) *RunOwner {
	return &RunOwner{
		UID:      p.UID,
		Finished: p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed,
		Started:  p.Spec.NodeName != "",
	}
}

// Verdict is what to do with a run Secret now.
type Verdict struct {
	// Delete, with the reason (for the log).
	Delete bool
	Reason string
	// Adopt: make the owner the Secret's controller (it was written without one: by
	// hand, or by an operator version that wrote a Pod's run Secret at admission).
	Adopt bool
	// RequeueAfter is when to look again if nothing changes.
	RequeueAfter time.Duration
}

// Decide is the life of a run Secret created at created, controlled by ownerUID ("" while
// not adopted yet), whose Job or Pod is owner (nil when none exists). It goes when its
// run finished or is gone, when no run was ever created with it (after grace: a Secret
// written without an owner, by hand or by an earlier operator version, whose run may be
// on its way), and in any case at maxAge.
func Decide(now, created time.Time, ownerUID types.UID, owner *RunOwner, maxAge, grace time.Duration) Verdict {
	age := now.Sub(created)
	switch {
	case owner == nil && ownerUID != "":
		return Verdict{Delete: true, Reason: "its run is gone"}
	case owner == nil && age >= grace:
		return Verdict{Delete: true, Reason: "no run was created with it"}
	case owner == nil:
		return Verdict{RequeueAfter: grace - age}
	case ownerUID != "" && owner.UID != ownerUID:
		return Verdict{Delete: true, Reason: "its run was replaced"}
	case owner.Finished:
		return Verdict{Delete: true, Reason: "its run finished"}
	case age >= maxAge:
		return Verdict{Delete: true, Reason: "it reached its maximum age"}
	}
	return Verdict{Adopt: ownerUID == "", RequeueAfter: maxAge - age}
}
