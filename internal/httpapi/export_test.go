package httpapi

import (
	toolscache "k8s.io/client-go/tools/cache"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// IndexerLookup is the read's lookup through an informer's indexer (lookup.go), for the
// suite's check against a real controller-runtime cache: usable says whether the read
// would use this indexer at all.
func IndexerLookup(idx toolscache.Indexer, pkg, name, id string) (lb *hubv1alpha1.Leaderboard, usable, ok bool) {
	indexers := idx.GetIndexers()
	usable = indexers[uidIndexName] != nil && indexers[slugIndexName] != nil
	lb, ok = lookup(idx, target{pkg: pkg, name: name, id: id})
	return lb, usable, ok
}
