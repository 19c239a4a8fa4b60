package httpapi

import (
	"context"
	"testing"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/boardres/boardrestest"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/scheme"
)

// The read serves the owner of a slug, by the informer's indexer and by a List of the
// cache, over the table the controller, the web pages and the CLI run too.
func TestReadServesSlugOwner(t *testing.T) {
	ctx := context.Background()
	target := target{pkg: boardrestest.Package, name: boardrestest.Name}
	for _, tc := range boardrestest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			boards := tc.Boards()
			objs := make([]client.Object, len(boards))
			for i := range boards {
				objs[i] = &boards[i]
			}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).
				WithIndex(&hubv1alpha1.Leaderboard{}, index.BoardSlug, index.BoardSlugValues).Build()
			rd := NewRead(ReadOptions{Cache: c})
			lb, err := rd.lookup(ctx, target)
			if err != nil || lb == nil || lb.Name != tc.Owner {
				t.Errorf("List: lookup() = %v, %v; want %s", lb, err, tc.Owner)
			}

			idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{
				slugIndexName: func(obj any) ([]string, error) {
					slug := boardres.Slug(obj.(*hubv1alpha1.Leaderboard))
					return []string{allNamespaces + slug, obj.(*hubv1alpha1.Leaderboard).Namespace + "/" + slug}, nil
				},
			})
			for i := range boards {
				if err := idx.Add(&boards[i]); err != nil {
					t.Fatal(err)
				}
			}
			lb, ok := lookup(idx, target)
			if !ok || lb == nil || lb.Name != tc.Owner {
				t.Errorf("indexer: lookup() = %v, %v; want %s", lb, ok, tc.Owner)
			}
		})
	}
}
