package boardres_test

import (
	"testing"

	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/boardres/boardrestest"
)

func TestOwner(t *testing.T) {
	for _, tc := range boardrestest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			if got := boardres.Owner(tc.Boards()); got == nil || got.Name != tc.Owner {
				t.Fatalf("Owner() = %v, want %s", got, tc.Owner)
			}
			// The order the claimants come in never matters.
			boards := tc.Boards()
			for i, j := 0, len(boards)-1; i < j; i, j = i+1, j-1 {
				boards[i], boards[j] = boards[j], boards[i]
			}
			if got := boardres.Owner(boards); got.Name != tc.Owner {
				t.Fatalf("Owner(reversed) = %s, want %s", got.Name, tc.Owner)
			}
		})
	}
	if got := boardres.Owner(nil); got != nil {
		t.Fatalf("Owner(nil) = %v, want nil", got)
	}
}
