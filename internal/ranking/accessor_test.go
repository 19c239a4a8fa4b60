package ranking

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor/accessortest"
)

// The rank index reads every accessor as the web page, the CLI and the schema check
// do, over their shared table.
func TestKeyOfAccessorTable(t *testing.T) {
	for _, tc := range accessortest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			metadata, metrics := tc.Row()
			row := &hubv1alpha1.LeaderboardRow{Spec: hubv1alpha1.LeaderboardRowSpec{
				Metadata: &apiextensionsv1.JSON{Raw: metadata}, Metrics: &apiextensionsv1.JSON{Raw: metrics}}}
			got := keyOf([]hubv1alpha1.RankRule{{Accessor: tc.Accessor}}, row)[0]
			want := value{}
			if tc.Want != "" {
				want = scalar([]byte(tc.Want))
			}
			if got != want {
				t.Fatalf("%s = %+v, want %+v (%s)", tc.Accessor, got, want, tc.Want)
			}
		})
	}
}
