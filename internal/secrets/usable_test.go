package secrets

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

func TestUsable(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: hubv1alpha1.ConditionReady, Status: status, Reason: reason}}
	}
	now := metav1.Now()
	type out struct {
		Usable bool
		Reason string
	}
	for _, tc := range []struct {
		name string
		hs   hubv1alpha1.HostedSecret
		want out
	}{
		{"active and ready", hubv1alpha1.HostedSecret{Status: hubv1alpha1.HostedSecretStatus{State: hubv1alpha1.StateActive, Conditions: ready(metav1.ConditionTrue, hubv1alpha1.ReasonActive)}}, out{true, ""}},
		{"active but its value is gone", hubv1alpha1.HostedSecret{Status: hubv1alpha1.HostedSecretStatus{State: hubv1alpha1.StateActive, Conditions: ready(metav1.ConditionFalse, hubv1alpha1.ReasonSecretNotGranted)}}, out{false, hubv1alpha1.ReasonSecretNotGranted}},
		{"active but the key is missing", hubv1alpha1.HostedSecret{Status: hubv1alpha1.HostedSecretStatus{State: hubv1alpha1.StateActive, Conditions: ready(metav1.ConditionFalse, hubv1alpha1.ReasonValueMissing)}}, out{false, hubv1alpha1.ReasonValueMissing}},
		{"active without any condition", hubv1alpha1.HostedSecret{Status: hubv1alpha1.HostedSecretStatus{State: hubv1alpha1.StateActive}}, out{false, hubv1alpha1.ReasonPending}},
		{"pending", hubv1alpha1.HostedSecret{Status: hubv1alpha1.HostedSecretStatus{Conditions: ready(metav1.ConditionFalse, hubv1alpha1.ReasonPending)}}, out{false, hubv1alpha1.ReasonPending}},
		{"revoked", hubv1alpha1.HostedSecret{Status: hubv1alpha1.HostedSecretStatus{State: hubv1alpha1.StateRevoked, Conditions: ready(metav1.ConditionFalse, hubv1alpha1.ReasonRevoked)}}, out{false, hubv1alpha1.ReasonRevoked}},
		{"being deleted", hubv1alpha1.HostedSecret{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: hubv1alpha1.HostedSecretStatus{State: hubv1alpha1.StateActive, Conditions: ready(metav1.ConditionTrue, hubv1alpha1.ReasonActive)}}, out{false, "Deleting"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := Usable(&tc.hs)
			if d := cmp.Diff(tc.want, out{ok, why}); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}
