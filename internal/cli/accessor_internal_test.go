package cli

import (
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor/accessortest"
)

// A CLI cell reads every accessor as the rank index, the web page and the schema check
// do, over their shared table.
func TestCellValueAccessorTable(t *testing.T) {
	for _, tc := range accessortest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			metadata, metrics := tc.Row()
			row := &hubv1alpha1.LeaderboardRow{Spec: hubv1alpha1.LeaderboardRowSpec{
				Metadata: &apiextensionsv1.JSON{Raw: metadata}, Metrics: &apiextensionsv1.JSON{Raw: metrics}}}
			want := tc.Want // numbers, booleans and objects print as JSON
			var s string
			switch {
			case tc.Want == "" || tc.Want == "null":
				want = "-"
			case json.Unmarshal([]byte(tc.Want), &s) == nil:
				want = s // text prints as is
			}
			if got := cellValue(hubv1alpha1.Column{Accessor: tc.Accessor}, row); got != want {
				t.Fatalf("%s = %q, want %q", tc.Accessor, got, want)
			}
		})
	}
}
