package web

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardres/boardrestest"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/scheme"
)

// The board page serves, and the index lists, the owner of a slug, over the table the
// controller, the read and the CLI run too.
func TestPagesServeSlugOwner(t *testing.T) {
	ctx := context.Background()
	for _, tc := range boardrestest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			boards := tc.Boards()
			objs := make([]client.Object, len(boards))
			for i := range boards {
				objs[i] = &boards[i]
			}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).
				WithIndex(&hubv1alpha1.Leaderboard{}, index.BoardSlug, index.BoardSlugValues).Build()
			p := &Pages{o: Options{Reader: c}}
			lb, err := p.findBoard(ctx, boardrestest.Org, boardrestest.Dataset, boardrestest.Name)
			if err != nil || lb == nil || lb.Name != tc.Owner {
				t.Errorf("findBoard() = %v, %v; want %s", lb, err, tc.Owner)
			}
		})
	}
}
