package web

import (
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor/accessortest"
)

// A cell reads every accessor as the rank index, the CLI and the schema check do, over
// their shared table.
func TestRowValuesAccessorTable(t *testing.T) {
	for _, tc := range accessortest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			metadata, metrics := tc.Row()
			v := decodeRow(&hubv1alpha1.LeaderboardRow{Spec: hubv1alpha1.LeaderboardRowSpec{
				Metadata: &apiextensionsv1.JSON{Raw: metadata}, Metrics: &apiextensionsv1.JSON{Raw: metrics}}})
			got := ""
			if val, ok := v.lookup(tc.Accessor); ok {
				b, _ := json.Marshal(val)
				got = string(b)
			}
			if got != tc.Want {
				t.Fatalf("%s = %q, want %q", tc.Accessor, got, tc.Want)
			}
		})
	}
}
