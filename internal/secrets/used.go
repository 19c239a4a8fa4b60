package secrets

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// MarkUsed records that an active secret was handed to a run at t (status.lastUsedAt,
// shown as last_used_at). The status keeps seconds, so a second delivery within the
// same second writes nothing.
func (l *Lifecycle) MarkUsed(ctx context.Context, hs *hubv1alpha1.HostedSecret, t time.Time) error {
	t = t.UTC().Truncate(time.Second)
	return l.updateStatus(ctx, hs, func(st *hubv1alpha1.HostedSecretStatus, _ int64) bool {
		if st.State != hubv1alpha1.StateActive || (st.LastUsedAt != nil && !t.After(st.LastUsedAt.Time)) {
			return false
		}
		st.LastUsedAt = &metav1.Time{Time: t}
		return true
	})
}
