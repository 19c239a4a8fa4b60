package operator

import (
	"slices"
	"strconv"
	"sync"
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
// cached row, against the budget of 2 KiB per row (docs/design/performance-log.md, "Where the
// memory goes"). Of a LeaderboardRow it also shares the values rows repeat whole
// (shareRow): its labels and annotations maps and its owner references.
func CacheTransform() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	var labels, annotations shareTable[map[string]string]
	var owners shareTable[[]metav1.OwnerReference]
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
			row.Labels = labels.share(mapKey(row.Labels), row.Labels)
			row.Annotations = annotations.share(mapKey(row.Annotations), row.Annotations)
			row.OwnerReferences = owners.share(ownersKey(row.OwnerReferences), row.OwnerReferences)
			if row.Status.ID == string(row.UID) {
				row.Status.ID = string(row.UID) // status.id is the UID: one string, not two
			}
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
	// Annotation keys repeat on every object, and short values (the user names of
	// created-by and updated-by) on many; long ones (kubectl's last-applied
	// configuration) are left alone.
	annotations := obj.GetAnnotations()
	for k, v := range annotations {
		if len(v) <= maxInternedValue {
			v = intern(v)
		}
		annotations[intern(k)] = v
	}
	refs := obj.GetOwnerReferences()
	for i := range refs {
		r := &refs[i]
		r.APIVersion, r.Kind, r.Name = intern(r.APIVersion), intern(r.Kind), intern(r.Name)
		r.UID = types.UID(intern(string(r.UID)))
	}
}

// maxInternedValue bounds the annotation values interned.
const maxInternedValue = 128

// intern returns the canonical copy of s. unique drops copies nothing refers to, so
// interning never grows memory beyond the strings in use.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// shareTable hands out one copy of equal values that many cached rows hold whole: a
// labels or annotations map (a one-entry map costs about 340 bytes), the owner
// references (the same on every row of a board). Cached objects are read-only (the
// informer's contract: readers get deep copies, or read them in place and never write),
// so rows may share them; client-go transforms each object once, as it arrives, before
// any reader sees it, so no shared value is written after it is handed out. It keeps
// at most maxShared values, whose keys are at most maxSharedKey bytes, and starts over
// when full: rows keep the copies they hold, so the table bounds its own memory
// whatever values the rows carry.
type shareTable[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

const (
	maxShared    = 1024
	maxSharedKey = 512
)

// share returns the table's value of key, stored as v when the table has none; v itself
// when key is "" (nothing to share) or too long.
func (t *shareTable[V]) share(key string, v V) V {
	if key == "" || len(key) > maxSharedKey {
		return v
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.m[key]; ok {
		return s
	}
	if t.m == nil || len(t.m) >= maxShared {
		t.m = make(map[string]V)
	}
	t.m[key] = v
	return v
}

// mapKey is a key naming a non-empty map's contents exactly (equal keys, equal maps):
// its entries sorted, each string prefixed with its length. "" for an empty or nil map,
// which is not shared (nil and empty stay apart).
func mapKey(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b []byte
	for _, k := range keys {
		b = appendField(appendField(b, k), m[k])
	}
	return string(b)
}

// ownersKey is a key naming owner references exactly, "" for none.
func ownersKey(refs []metav1.OwnerReference) string {
	if len(refs) == 0 {
		return ""
	}
	var b []byte
	for i := range refs {
		r := &refs[i]
		b = appendField(appendField(appendField(appendField(b, r.APIVersion), r.Kind), r.Name), string(r.UID))
		b = append(b, optBool(r.Controller), optBool(r.BlockOwnerDeletion))
	}
	return string(b)
}

func appendField(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// optBool encodes an optional bool: n (unset), t or f.
func optBool(p *bool) byte {
	switch {
	case p == nil:
		return 'n'
	case *p:
		return 't'
	}
	return 'f'
}
