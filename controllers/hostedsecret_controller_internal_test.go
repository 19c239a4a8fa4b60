package controllers

import (
	"testing"
	"time"
)

func TestAbandonedAfter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		age  time.Duration
		want time.Duration
	}{
		{0, abandonedStoreAge},
		{30 * time.Second, abandonedStoreAge - 30*time.Second},
		{abandonedStoreAge, 0},
		{time.Hour, 0},
		{-time.Second, abandonedStoreAge + time.Second}, // a clock behind the apiserver's
	} {
		if got := abandonedAfter(t0, t0.Add(tc.age)); got != tc.want {
			t.Errorf("abandonedAfter(age %v) = %v, want %v", tc.age, got, tc.want)
		}
	}
}

// A secret waiting for its slot pointer looks again every few seconds (a restored
// pointer comes back after its secret), not once its whole wait is over.
func TestPointerRecheck(t *testing.T) {
	for _, tc := range []struct{ wait, want time.Duration }{
		{abandonedStoreAge, slotPointerRecheck},
		{time.Minute, slotPointerRecheck},
		{2 * time.Second, 2 * time.Second},
	} {
		if got := pointerRecheck(tc.wait); got != tc.want {
			t.Errorf("pointerRecheck(%v) = %v, want %v", tc.wait, got, tc.want)
		}
	}
}
