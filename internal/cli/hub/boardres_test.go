package hub

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"podium.dev/podium/internal/boardres/boardrestest"
	"podium.dev/podium/internal/scheme"
)

// The CLI acts on the owner of a slug, over the table the controller, the read and the
// web pages run too.
func TestBoardBySlugIsOwner(t *testing.T) {
	for _, tc := range boardrestest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			boards := tc.Boards()
			objs := make([]client.Object, len(boards))
			for i := range boards {
				objs[i] = &boards[i]
			}
			c := &Client{c: fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()}
			lb, err := c.Board(context.Background(), boardrestest.Slug)
			if err != nil || lb == nil || lb.Name != tc.Owner {
				t.Errorf("Board() = %v, %v; want %s", lb, err, tc.Owner)
			}
		})
	}
}
