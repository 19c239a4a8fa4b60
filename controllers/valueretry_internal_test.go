package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

func TestValueRetry(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ready := func(status metav1.ConditionStatus, reason string, since time.Duration) *hubv1alpha1.HostedSecret {
		hs := &hubv1alpha1.HostedSecret{}
		hs.Status.Conditions = []metav1.Condition{{Type: hubv1alpha1.ConditionReady, Status: status, Reason: reason,
			LastTransitionTime: metav1.NewTime(now.Add(-since))}}
		return hs
	}
	for _, tc := range []struct {
		name string
		hs   *hubv1alpha1.HostedSecret
		want time.Duration
	}{
		{"seen for the first time", &hubv1alpha1.HostedSecret{}, 30 * time.Second},
		{"Ready until now", ready(metav1.ConditionTrue, "Active", time.Hour), 30 * time.Second},
		{"another problem", ready(metav1.ConditionFalse, hubv1alpha1.ReasonSlotOccupied, time.Hour), 30 * time.Second},
		{"not granted for a minute", ready(metav1.ConditionFalse, hubv1alpha1.ReasonSecretNotGranted, time.Minute), 30 * time.Second},
		{"not granted for 4 minutes", ready(metav1.ConditionFalse, hubv1alpha1.ReasonSecretNotGranted, 4*time.Minute), time.Minute},
		{"value missing for 8 minutes", ready(metav1.ConditionFalse, hubv1alpha1.ReasonValueMissing, 8*time.Minute), 2 * time.Minute},
		{"not granted for a day", ready(metav1.ConditionFalse, hubv1alpha1.ReasonSecretNotGranted, 24*time.Hour), 5 * time.Minute},
	} {
		if got := valueRetry(tc.hs, now); got != tc.want {
			t.Errorf("%s: valueRetry = %v, want %v", tc.name, got, tc.want)
		}
	}
}
