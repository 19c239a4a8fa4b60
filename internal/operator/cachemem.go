package operator

import (
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowhistory"
)

// CacheTransform is the manager cache's transform (the controllers suite runs it too): it strips managed fields (never read,
// and they would double each cached row) and makes the strings every row of a board
// repeats (namespace, label keys, the board's name and UID in the owner reference, the
// Valid condition's type, reason and message) share one copy: a few hundred bytes per
// cached row, against issue 4's budget of 2 KiB per row (docs/performance.md).
func CacheTransform() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(in any) (any, error) {
		out, err := strip(in)
		if err != nil {
			return out, err
		}
		obj, ok := out.(metav1.Object)
		if !ok {
			return out, nil
		}
		compactMeta(obj)
		if row, ok := out.(*hubv1alpha1.LeaderboardRow); ok {
			rowhistory.StripForCache(row)
			row.Spec.Leaderboard = intern(row.Spec.Leaderboard)
			row.Spec.Visibility = hubv1alpha1.RowVisibility(intern(string(row.Spec.Visibility)))
			for i := range row.Status.Conditions {
				c := &row.Status.Conditions[i]
				c.Type, c.Reason, c.Message = intern(c.Type), intern(c.Reason), intern(c.Message)
				c.Status = metav1.ConditionStatus(intern(string(c.Status)))
			}
		}
		return out, nil
	}
}

func compactMeta(obj metav1.Object) {
	obj.SetNamespace(intern(obj.GetNamespace()))
	labels := obj.GetLabels()
	for k, v := range labels {
		// Assigning an existing key stores the key given (Go maps update string keys),
		// so this swaps in the shared copy without a new map.
		labels[intern(k)] = v
	}
	// The board label's value repeats on every row of a board.
	if v, ok := labels[hubv1alpha1.LabelLeaderboard]; ok {
		labels[hubv1alpha1.LabelLeaderboard] = intern(v)
	}
	refs := obj.GetOwnerReferences()
	for i := range refs {
		r := &refs[i]
		r.APIVersion, r.Kind, r.Name = intern(r.APIVersion), intern(r.Kind), intern(r.Name)
		r.UID = types.UID(intern(string(r.UID)))
	}
}

// intern returns the canonical copy of s. unique drops copies nothing refers to, so
// interning never grows memory beyond the strings in use.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}
