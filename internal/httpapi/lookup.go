package httpapi

import (
	"context"
	"strings"
	"sync/atomic"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/index"
)

// The read finds its board on every request. Through the cache's List that costs a
// new Leaderboard (the cache's way to learn the list's item type), a list whose items
// are copies of the cached boards, and a field selector: about 3 KB of garbage a
// request, a third of the read's, which at tens of thousands of reads a second makes
// the collector run often over the operator's heap of cached rows. So when the cache
// can give the Leaderboard informer (the manager's cache can), the read asks the
// informer's indexer directly, under the very index names and keys controller-runtime's
// cache reader uses for the same List: "field:<field>", and "<namespace>/<value>" or
// "__all_namespaces/<value>". If the indexer lacks either index, the read lists as
// before; lookup_test.go, against a real controller-runtime cache, fails when an
// upgrade changes the names or keys.

// informerGetter is the part of cache.Cache the read needs.
type informerGetter interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// indexedInformer is a client-go SharedIndexInformer, which the cache's informers are.
type indexedInformer interface {
	GetIndexer() toolscache.Indexer
}

// Index names and the all-namespaces key prefix of controller-runtime's field indexes.
const (
	uidIndexName  = "field:" + index.UID
	slugIndexName = "field:" + index.BoardSlug
	allNamespaces = "__all_namespaces/"
)

// boardIndex holds the Leaderboard informer's indexer once it is usable.
type boardIndex struct {
	indexer atomic.Pointer[toolscache.Indexer]
	never   atomic.Bool // the cache cannot give one: always List
}

// get returns the indexer once the informer has synced, or nil: List then (which waits
// for the sync as it always did).
func (b *boardIndex) get(ctx context.Context, c client.Reader) toolscache.Indexer {
	if p := b.indexer.Load(); p != nil {
		return *p
	}
	if b.never.Load() {
		return nil
	}
	g, ok := c.(informerGetter)
	if !ok {
		b.never.Store(true)
		return nil
	}
	inf, err := g.GetInformer(ctx, &hubv1alpha1.Leaderboard{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil
	}
	ii, ok := inf.(indexedInformer)
	if !ok {
		b.never.Store(true)
		return nil
	}
	if !inf.HasSynced() {
		return nil
	}
	idx := ii.GetIndexer()
	indexers := idx.GetIndexers()
	if indexers[uidIndexName] == nil || indexers[slugIndexName] == nil {
		b.never.Store(true)
		return nil
	}
	b.indexer.Store(&idx)
	return idx
}

// lookup returns the boards the target names from the indexer; ok is false when the
// indexer answered something unexpected (the caller lists instead).
func lookup(idx toolscache.Indexer, t target) (lb *hubv1alpha1.Leaderboard, ok bool) {
	var objs []any
	var err error
	if t.id != "" {
		objs, err = idx.ByIndex(uidIndexName, allNamespaces+t.id)
	} else {
		org, _, _ := strings.Cut(t.pkg, "/")
		objs, err = idx.ByIndex(slugIndexName, org+"/"+t.pkg+"/"+t.name)
	}
	if err != nil {
		return nil, false
	}
	for _, o := range objs {
		b, isBoard := o.(*hubv1alpha1.Leaderboard)
		if !isBoard {
			return nil, false
		}
		if lb == nil || boardres.Before(b, lb) {
			lb = b
		}
	}
	return lb, true
}
