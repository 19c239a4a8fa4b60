package controllers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// live reads the object a request names into obj: false, with no error, when it is
// gone or being deleted (nothing to reconcile).
func live(ctx context.Context, c client.Reader, req reconcile.Request, obj client.Object) (bool, error) {
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return obj.GetDeletionTimestamp().IsZero(), nil
}

// requestsFor are the reconcile requests of a list's items.
func requestsFor[T any, P interface {
	*T
	client.Object
}](items []T) []reconcile.Request {
	reqs := make([]reconcile.Request, len(items))
	for i := range items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(P(&items[i]))}
	}
	return reqs
}
