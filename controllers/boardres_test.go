package controllers

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardres/boardrestest"
)

// The controller keeps exactly the owner of the slug Ready and marks every other
// claimant DuplicateName, over the table the read, the web pages and the CLI run too.
func TestBoardStatusSlugOwner(t *testing.T) {
	ds := &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: boardrestest.Org, Name: boardrestest.Dataset, UID: "d"}}
	for _, tc := range boardrestest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			boards := tc.Boards()
			for i := range boards {
				lb := &boards[i]
				st := boardStatus(lb, boardFacts{dataset: ds, sameName: boards}, testNow)
				c := meta.FindStatusCondition(st.Conditions, hubv1alpha1.ConditionReady)
				wantReason := hubv1alpha1.ReasonDuplicateName
				if lb.Name == tc.Owner {
					wantReason = hubv1alpha1.ReasonReady
				}
				if c == nil || c.Reason != wantReason {
					t.Errorf("board %s: Ready condition %+v, want reason %s", lb.Name, c, wantReason)
				}
			}
		})
	}
}
