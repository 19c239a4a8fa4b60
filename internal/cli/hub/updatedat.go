package hub

import (
	"context"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/wire"
)

// UpdatedAt is a board's or a row's updated_at exactly as the read serves it
// (wire.ServedUpdatedAt; docs/http-api.md): what --json prints and what exports carry
// as expected_updated_at, so that a file exported by any client of the read (Harbor's
// too) applies to the unchanged record.
func UpdatedAt(obj client.Object) string {
	m, changed, _ := changeTimes(obj)
	return wire.Timestamp(wire.ServedUpdatedAt(m, changed))
}

// changeTimes are what an object's updated_at is made of: its metadata, the time the
// controller recorded for its spec's last change, and the generation that time is of.
func changeTimes(obj client.Object) (m *metav1.ObjectMeta, specChanged *metav1.Time, observed int64) {
	switch o := obj.(type) {
	case *hubv1alpha1.Leaderboard:
		return &o.ObjectMeta, o.Status.UpdatedAt, o.Status.ObservedGeneration
	case *hubv1alpha1.LeaderboardRow:
		return &o.ObjectMeta, o.Status.UpdatedAt, o.Status.ObservedGeneration
	}
	m = &metav1.ObjectMeta{CreationTimestamp: obj.GetCreationTimestamp(), Generation: obj.GetGeneration(), Annotations: obj.GetAnnotations()}
	return m, nil, m.Generation
}

// observed says whether the controller has recorded the change time of obj's current
// spec, so that its served updated_at is final.
func observed(obj client.Object) bool {
	_, _, gen := changeTimes(obj)
	return gen == obj.GetGeneration()
}

// CheckToken refuses, as stale, a file's expected_updated_at that is not the record's
// updated_at (an empty token is not checked). obj is read with Settle first, so its
// updated_at is the one the read serves for its current spec: the controller moves it
// by at least a second on every spec change, so a token exported before any change is
// refused, and the refusal names the later value. Tokens are compared as instants, so
// "Z" and "+00:00" are alike (docs/cli.md, "Stale protection").
func CheckToken(resource, expected string, obj client.Object) error {
	if expected == "" {
		return nil
	}
	cur := UpdatedAt(obj)
	want, err := time.Parse(time.RFC3339Nano, expected)
	if have, _ := time.Parse(time.RFC3339, cur); err == nil && want.Equal(have) {
		return nil
	}
	return Stale(resource, expected, cur)
}

// Stale is the 409 of a file whose target changed since it was exported.
func Stale(resource, expected, actual string) error {
	e := apierr.New(http.StatusConflict, apierr.CodeStale,
		"%s changed since the file was exported (expected_updated_at %s, now %s); export it again and reapply your edits", resource, expected, actual)
	e.Details = map[string]string{"resource": resource, "expected_updated_at": expected, "actual_updated_at": actual}
	return e
}

// Settle re-reads obj (a board or a row), at most idWait, until the controller has
// recorded the change time of its current spec, so that the updated_at an export
// writes is the one the read serves from then on. With no operator running it gives
// up, leaving obj as last read.
func (c *Client) Settle(ctx context.Context, obj client.Object) {
	awaitState(ctx, func() bool {
		return observed(obj) || c.c.Get(ctx, client.ObjectKeyFromObject(obj), obj) != nil || observed(obj)
	})
}

// SettledRows lists a board's rows once the controller has recorded the change time of
// every row's current spec (see Settle).
func (c *Client) SettledRows(ctx context.Context, lb *hubv1alpha1.Leaderboard) ([]hubv1alpha1.LeaderboardRow, error) {
	rows, err := c.BoardRows(ctx, lb)
	if err != nil {
		return nil, err
	}
	all := func() bool {
		for i := range rows {
			if !observed(&rows[i]) {
				return false
			}
		}
		return true
	}
	awaitState(ctx, func() bool {
		if all() {
			return true
		}
		next, err := c.BoardRows(ctx, lb)
		if err != nil {
			return true
		}
		rows = next
		return all()
	})
	return rows, nil
}

// awaitState calls done until it is true, backing off from 20 ms, at most idWait.
func awaitState(ctx context.Context, done func() bool) {
	deadline := time.Now().Add(idWait)
	for delay := 20 * time.Millisecond; !done(); delay = min(delay*2, 500*time.Millisecond) {
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}
